/* The timeline offline tools write: the clock graph of every input, the
 * trace clock, and the conversion of one timestamp into it with the
 * accounting of every timestamp that cannot be converted, under Perfetto's
 * stat names (clock-model.md section 12): in totals (struct sync_stats)
 * and, for the stats Perfetto scopes per machine, by machine too. */
#ifndef BTR_TIMELINE_H
#define BTR_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock/clock_graph.h"
#include "clock/machines.h"

/* Why timestamps were dropped (and snapshots rejected). */
enum sync_stat {
	SYNC_STAT_UNKNOWN_SOURCE,  /* clock_sync_failure_unknown_source_clock */
	SYNC_STAT_UNKNOWN_TARGET,  /* clock_sync_failure_unknown_target_clock */
	SYNC_STAT_NO_PATH,         /* clock_sync_failure_no_path */
	SYNC_STAT_NEGATIVE,        /* trace_sorter_negative_timestamp_dropped */
	SYNC_STAT_INVALID_SNAPSHOTS, /* invalid_clock_snapshots */
	SYNC_STAT_PACKET_LOSS,     /* clock_sync_failure_undeferrable_packet_loss:
				    * whole packets dropped for their time */
	SYNC_STAT_UNRELATABLE,     /* clock_sync_unrelatable_clock_domains: an
				    * input (x machine) with no relation to
				    * the trace clock (placement.h) */
	/* perf script text (perf_text.h, same names): samples skipped */
	SYNC_STAT_PERF_NO_FRAMES,
	SYNC_STAT_PERF_MALFORMED_SAMPLE,
	SYNC_STAT_PERF_MALFORMED_FRAME,
	SYNC_STAT_PERF_TOO_LARGE,
	SYNC_STAT_PERF_LINE_TOO_LONG,
	SYNC_STAT_PERF_LINE_NOT_TEXT,
	SYNC_STAT_COUNT,
};

struct sync_stats {
	uint64_t stat[SYNC_STAT_COUNT];
	uint64_t packets_in, packets_out;
	uint64_t packets_omitted; /* left out on purpose by a merge: clock
				   * snapshots of other inputs, a machine's
				   * second SystemInfo, remote_clock_sync */
	uint64_t samples_in, samples_out; /* perf samples parsed, written */
	uint64_t pid_traced, pid_from_tid; /* samples printed without a pid:
					     * the traces knew their thread,
					     * or pid = tid */
	uint64_t bundles;        /* ftrace bundles rewritten */
	uint64_t converted;      /* timestamps converted */
	uint64_t events_dropped; /* single events dropped inside bundles */
	uint64_t fields_dropped; /* previous_bundle_end_timestamp & co */
};

const char *sync_stat_name(enum sync_stat s);
/* False for the stats Perfetto keeps global (the negative timestamps and
 * the rejected snapshots); true for the others, counted per machine. */
bool sync_stat_per_machine(enum sync_stat s);
/* Adds b's counters to a's. */
void sync_stats_add(struct sync_stats *a, const struct sync_stats *b);


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
