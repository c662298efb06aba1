/* CPUs that come online during a recording. A CPU id that was offline at
 * the start got a one-page ring (budget.h); when sysfs lists it online,
 * its ring grows to an online CPU's size, or to the largest power of two
 * (down to BUDGET_RING_FLOOR) that the memory budget still has room for,
 * the rest of the ring being replaced by the one that drains it
 * (rings_request_grow). With no room left it keeps its page: its events
 * past it are dropped and counted, and a warning says so. */
#ifndef BTR_HOTPLUG_H
#define BTR_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

#include "record/plan.h"
#include "record/rings.h"

struct hotplug {
	uint32_t nslots;
	uint64_t *size;      /* per CPU id: its ring's size (as asked) */
	bool *online;        /* scratch for the sysfs list */
	bool *refused;       /* a CPU id warned about */
	uint64_t target;     /* an online CPU's ring at the start */
	uint64_t slack;      /* what the budget has left */
	uint64_t grown, refused_n;
};

/* From the plan the rings were made with. 0 or -ENOMEM. */
int hotplug_init(struct hotplug *h, const struct plan *p);
/* Reads the online CPUs (path: NULL for sysfs) and asks the rings of the
 * ones that came online to grow. A list that cannot be read is skipped. */
void hotplug_check(struct hotplug *h, struct rings *rs, const char *path);
void hotplug_free(struct hotplug *h);

#endif
