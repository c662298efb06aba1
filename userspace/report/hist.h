/* Fixed-size log-linear histogram of durations (ns) for latency
 * percentiles: values below 16 ns exactly, above that 8 buckets per power
 * of two (each within 1/8 of its value), 496 buckets in all, so memory
 * does not grow with the number of samples. A percentile is the middle of
 * the bucket that holds it, clamped to the exact minimum and maximum, so
 * it is within 6.25% of the true sample.
 *
 * A histogram starts small: 8-bit counters for the first HIST_SMALL
 * buckets (values below 2^33 ns, 8.6 s), 280 bytes, so that thousands of
 * threads' histograms stay in the CPU's caches. The first count that
 * would pass 255, or a value past those buckets, moves it to 32-bit
 * counters for every bucket (2 KB, allocated then); the counts are the
 * same either way. */
#ifndef BTR_REPORT_HIST_H
#define BTR_REPORT_HIST_H

#include <stdint.h>

#define HIST_BUCKETS 496
#define HIST_SMALL 248

struct hist {
	uint64_t n, min, max;
	uint32_t *b;              /* HIST_BUCKETS counters; NULL: small */
	uint8_t s[HIST_SMALL];    /* while small: buckets below HIST_SMALL */
};

/* The bucket of v. */
static inline unsigned hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < 16)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return 16u + (e - 4u) * 8u + (unsigned)((v >> (e - 3u)) & 7u);
}

/* Moves h to 32-bit counters for every bucket: 0 or -1 (out of memory). */
int hist_grow(struct hist *h);

/* Returns 0, or -1 when out of memory (h unchanged). Inline: the report
 * adds a latency at most switches. */
static inline int hist_add(struct hist *h, uint64_t v)
{
	unsigned i = hist_bucket(v);

	if (h->b) {
		if (h->b[i] != UINT32_MAX)
			h->b[i]++;
	} else if (i < HIST_SMALL && h->s[i] != UINT8_MAX) {
		h->s[i]++;
	} else {
		if (hist_grow(h))
			return -1;
		h->b[i]++;
	}
	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	return 0;
}
/* Adds every sample of src to dst (dst becomes big); 0 or -1 (out of
 * memory). */
int hist_merge(struct hist *dst, const struct hist *src);
/* The p-th percentile (0 < p <= 100): the smallest bucket holding the
 * ceil(p/100 * n)-th sample. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double p);
/* Frees the big counters (the struct itself stays the caller's). */
void hist_release(struct hist *h);

#endif
