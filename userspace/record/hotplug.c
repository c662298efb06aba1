/* Rings of CPUs that come online while recording (hotplug.h). */
#include "record/hotplug.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/budget.h"
#include "record/cpus.h"
#include "util/log.h"

int hotplug_init(struct hotplug *h, const struct plan *p)
{
	uint32_t i;

	memset(h, 0, sizeof(*h));
	h->nslots = p->nslots;
	h->size = calloc(p->nslots ? p->nslots : 1, sizeof(*h->size));
	h->online = calloc(p->nslots ? p->nslots : 1, sizeof(*h->online));
	h->refused = calloc(p->nslots ? p->nslots : 1, sizeof(*h->refused));
	if (!h->size || !h->online || !h->refused) {
		hotplug_free(h);
		return -ENOMEM;
	}
	for (i = 0; i < p->nslots; i++)
		h->size[i] = p->ring_sizes[i];
	h->target = p->b.ring_online;
	h->slack = p->b.memory > p->b.total ? p->b.memory - p->b.total : 0;
	return 0;
}

/* The size CPU id i's ring can grow to within the budget, and what that
 * takes from it (*cost); 0 when not even the floor fits. */
static uint64_t affordable(const struct hotplug *h, uint32_t i, uint64_t *cost)
{
	uint64_t s = h->target, reader = BUDGET_READER_PER_CPU -
					  BUDGET_READER_OFFLINE;

	for (; s > h->size[i] && s >= BUDGET_RING_FLOOR; s /= 2) {
		*cost = s - h->size[i] + reader;
		if (*cost <= h->slack)
			return s;
	}
	return 0;
}

void hotplug_check(struct hotplug *h, struct rings *rs, const char *path)
{
	char text[4096], buf[32];
	uint32_t count, max_id, i;
	uint64_t s, cost = 0;
	size_t n;
	FILE *f = fopen(path ? path : "/sys/devices/system/cpu/online", "re");

	if (!f)
		return;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	if (cpus_parse_list(text, h->online, h->nslots, &count, &max_id))
		return;
	for (i = 0; i < h->nslots; i++) {
		if (!h->online[i] || h->size[i] >= h->target || h->refused[i])
			continue;
		s = affordable(h, i, &cost);
		if (!s) {
			h->refused[i] = true;
			h->refused_n++;
			log_warn("CPU %u came online, and the memory budget has no "
				 "room left for its ring: it keeps %s, its events "
				 "past that are dropped (counted); a larger "
				 "--memory leaves room", i,
				 budget_fmt(h->size[i], buf, sizeof(buf)));
			continue;
		}
		h->slack -= cost;
		h->size[i] = s;
		h->grown++;
		rings_request_grow(rs, i, s);
		log_info("CPU %u came online: its ring grows to %s", i,
			 budget_fmt(s, buf, sizeof(buf)));
	}
}

void hotplug_free(struct hotplug *h)
{
	free(h->size);
	free(h->online);
	free(h->refused);
	memset(h, 0, sizeof(*h));
}
