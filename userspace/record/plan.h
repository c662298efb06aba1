/* The memory plan of a recording: the host's CPUs from sysfs, the split of
 * the budget (budget.h) with the options' overrides, and the ring size of
 * each CPU id that the capture creates. */
#ifndef BTR_PLAN_H
#define BTR_PLAN_H

#include <stdint.h>

#include "record/budget.h"
#include "record/options.h"

struct plan {
	struct budget b;
	uint32_t nslots;      /* rings to create: highest possible CPU + 1 */
	uint64_t *ring_sizes; /* nslots entries */
};

/* Computes the plan and writes the buffer size and the online CPUs' ring
 * size into o (buffer_size, ringbuf_size). Returns 0; -EINVAL for a budget
 * that cannot work (reported: a usage error); another negative errno when
 * the CPUs cannot be read (reported). */
int plan_make(struct plan *p, struct record_opts *o);
/* The split, on stderr with -v. */
void plan_log(const struct plan *p);
void plan_free(struct plan *p);

#endif
