/* The counts of what the offline tools drop, under Perfetto's stat names:
 * timestamps that cannot be converted, rejected snapshots, unrelatable
 * inputs, perf text that cannot be read; and the packet counts of a run. */
#ifndef BTR_SYNC_STATS_H
#define BTR_SYNC_STATS_H

#include <stdbool.h>
#include <stdint.h>

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

#endif
