/* Fixed-size log-linear histogram of durations (ns) for latency
 * percentiles: values below 16 ns exactly, above that 8 buckets per power
 * of two (each within 1/8 of its value), 496 32-bit counters in all, so
 * memory does not grow with the number of samples. A percentile is the
 * middle of the bucket that holds it, clamped to the exact minimum and
 * maximum, so it is within 6.25% of the true sample. */
#ifndef BTR_REPORT_HIST_H
#define BTR_REPORT_HIST_H

#include <stdint.h>

#define HIST_BUCKETS 496

struct hist {
	uint32_t b[HIST_BUCKETS];
	uint64_t n, min, max;
};

void hist_add(struct hist *h, uint64_t v);
/* Adds every sample of src to dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* The p-th percentile (0 < p <= 100): the smallest bucket holding the
 * ceil(p/100 * n)-th sample. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double p);

#endif
