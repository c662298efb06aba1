/* The timeline offline tools write: the clock graph of every input, the
 * trace clock, and the conversion of one timestamp into it with the
 * accounting of every timestamp that cannot be converted, under Perfetto's
 * stat names (docs/clock-model.md, 'Drops and their stats'): in totals
 * (struct sync_stats) and, for the stats Perfetto scopes per machine, by
 * machine too. */
#ifndef BTR_TIMELINE_H
#define BTR_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock/clock_graph.h"
#include "clock/machines.h"
#include "clock/sync_stats.h"



/* The per-machine stats by machine, v[i] of machine i of the table. */
struct machine_stats {
	uint64_t (*v)[SYNC_STAT_COUNT];
	size_t n;
};

struct timeline {
	struct btr_clock_graph *graph;
	struct btr_clock_key trace_clock;
	struct sync_stats *stats; /* where conversions are counted */
	struct machine_table machines; /* of the inputs (machines.h) */
	/* The per-machine stats counted so far, over every input (sync adds
	 * those of its inputs' own trailers, sync_info.h): empty until
	 * timeline_count_machines. */
	struct machine_stats by_machine;
};

/* Returns 0 or -ENOMEM. The trace clock starts as BOOTTIME of machine 0. */
int timeline_init(struct timeline *tl);
void timeline_free(struct timeline *tl);
/* Builtin or global clock `id` of machine 0 becomes the trace clock. */
void timeline_set_trace_clock(struct timeline *tl, uint32_t id);
/* Any clock becomes the trace clock. */
void timeline_set_trace_key(struct timeline *tl, struct btr_clock_key key);

/* Makes tl->by_machine one counter set per machine of tl->machines, once
 * they are all known. Returns 0 or -ENOMEM. */
int timeline_count_machines(struct timeline *tl);
/* Counts n of stat s on machine (an index in tl->machines): in *st
 * unless st is NULL and, for a per-machine stat, in tl->by_machine. */
void timeline_count(struct timeline *tl, struct sync_stats *st,
		    uint32_t machine, enum sync_stat s, uint64_t n);

/* Converts `raw` (a uint64 read as int64, as trace_processor does) on clock
 * src into the trace clock. Returns true with *ns >= 0; false when the
 * conversion fails or gives a negative time, after counting it. */
bool timeline_convert(struct timeline *tl, struct btr_clock_key src,
		      uint64_t raw, int64_t *ns);

/* Counts a timestamp whose clock could not even be named (a
 * sequence-scoped clock on sequence 0, an unknown ftrace clock) as a
 * conversion from an unknown source clock, on `machine`. */
void timeline_count_unknown_source(struct timeline *tl, uint32_t machine);

/* The count of stat s on each machine, as the output records it, from
 * `all` (the totals): fn(ctx, s, idx, out_id, n) first for the host
 * (out_id 0; idx its place in tl->machines, SIZE_MAX if none) with what no
 * other machine counted, then for each other machine that counted s, by
 * output id. */
void timeline_each_machine_stat(const struct timeline *tl,
				const struct sync_stats *all, enum sync_stat s,
				void (*fn)(void *ctx, enum sync_stat s,
					   size_t idx, uint32_t out_id,
					   uint64_t n),
				void *ctx);

#endif
