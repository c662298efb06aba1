/* Conversion into the trace clock with drop accounting (see timeline.h). */
#include "clock/timeline.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

_Static_assert(SYNC_STAT_UNKNOWN_TARGET - SYNC_STAT_UNKNOWN_SOURCE ==
			       BTR_CLOCK_UNKNOWN_TARGET - BTR_CLOCK_UNKNOWN_SOURCE &&
		       SYNC_STAT_NO_PATH - SYNC_STAT_UNKNOWN_SOURCE ==
			       BTR_CLOCK_NO_PATH - BTR_CLOCK_UNKNOWN_SOURCE,
	       "conversion failures and their stats are in the same order");

/* The machine other than the host with the lowest output id above
 * `after` that counted s; SIZE_MAX: none. */
static size_t next_machine(const struct timeline *tl, enum sync_stat s,
			   uint32_t after)
{
	const struct machine_stats *ms = &tl->by_machine;
	const struct machine *m = tl->machines.v;
	size_t i, best = SIZE_MAX;

	for (i = 0; i < ms->n && i < tl->machines.n; i++)
		if (ms->v[i][s] && m[i].out_id > after &&
		    (best == SIZE_MAX || m[i].out_id < m[best].out_id))
			best = i;
	return best;
}

void timeline_each_machine_stat(const struct timeline *tl,
				const struct sync_stats *all, enum sync_stat s,
				void (*fn)(void *ctx, enum sync_stat s,
					   size_t idx, uint32_t out_id,
					   uint64_t n),
				void *ctx)
{
	uint64_t host = all->stat[s];
	size_t k, host_idx = SIZE_MAX;
	uint32_t id = 0;

	for (k = 0; k < tl->machines.n; k++)
		if (!tl->machines.v[k].out_id && host_idx == SIZE_MAX)
			host_idx = k;
	for (k = next_machine(tl, s, 0); k != SIZE_MAX;
	     k = next_machine(tl, s, id)) {
		id = tl->machines.v[k].out_id;
		host -= tl->by_machine.v[k][s];
	}
	fn(ctx, s, host_idx, 0, host);
	for (k = next_machine(tl, s, 0); k != SIZE_MAX;
	     k = next_machine(tl, s, id)) {
		id = tl->machines.v[k].out_id;
		fn(ctx, s, k, id, tl->by_machine.v[k][s]);
	}
}


int timeline_init(struct timeline *tl)
{
	tl->graph = btr_clock_graph_new();
	tl->stats = NULL;
	tl->by_machine = (struct machine_stats){ 0 };
	machine_table_init(&tl->machines);
	timeline_set_trace_clock(tl, BTR_CLOCK_BOOTTIME);
	return tl->graph ? 0 : -ENOMEM;
}

void timeline_free(struct timeline *tl)
{
	btr_clock_graph_free(tl->graph);
	tl->graph = NULL;
	machine_table_free(&tl->machines);
	free(tl->by_machine.v);
	tl->by_machine = (struct machine_stats){ 0 };
}

int timeline_count_machines(struct timeline *tl)
{
	struct machine_stats *ms = &tl->by_machine;

	free(ms->v);
	ms->n = 0;
	ms->v = calloc(tl->machines.n ? tl->machines.n : 1, sizeof(*ms->v));
	if (!ms->v)
		return -ENOMEM;
	ms->n = tl->machines.n;
	return 0;
}

void timeline_count(struct timeline *tl, struct sync_stats *st,
		    uint32_t machine, enum sync_stat s, uint64_t n)
{
	if (st)
		st->stat[s] += n;
	if (sync_stat_per_machine(s) && machine < tl->by_machine.n)
		tl->by_machine.v[machine][s] += n;
}

void timeline_set_trace_key(struct timeline *tl, struct btr_clock_key key)
{
	tl->trace_clock = key;
	if (tl->graph)
		btr_clock_graph_set_trace_clock(tl->graph, key);
}

void timeline_set_trace_clock(struct timeline *tl, uint32_t id)
{
	timeline_set_trace_key(tl, (struct btr_clock_key){ id, 0, 0, 0 });
}

void timeline_count_unknown_source(struct timeline *tl, uint32_t machine)
{
	timeline_count(tl, tl->stats, machine, SYNC_STAT_UNKNOWN_SOURCE, 1);
}

bool timeline_convert(struct timeline *tl, struct btr_clock_key src,
		      uint64_t raw, int64_t *ns)
{
	enum btr_clock_result r;
	int64_t out;

	r = btr_clock_graph_convert(tl->graph, src, btr_wrap_i64(raw),
				    tl->trace_clock, &out);
	if (r != BTR_CLOCK_OK) {
		timeline_count(tl, tl->stats, src.machine,
			       (enum sync_stat)(SYNC_STAT_UNKNOWN_SOURCE + r -
						BTR_CLOCK_UNKNOWN_SOURCE),
			       1);
		return false;
	}
	if (out < 0) {
		timeline_count(tl, tl->stats, src.machine, SYNC_STAT_NEGATIVE,
			       1);
		return false;
	}
	if (tl->stats)
		tl->stats->converted++;
	*ns = out;
	return true;
}
