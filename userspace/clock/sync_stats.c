/* Names and sums of the offline tools' drop counts (see sync_stats.h). */
#include "clock/sync_stats.h"

#include <stddef.h>

static const char *const names[SYNC_STAT_COUNT] = {
	[SYNC_STAT_UNKNOWN_SOURCE] = "clock_sync_failure_unknown_source_clock",
	[SYNC_STAT_UNKNOWN_TARGET] = "clock_sync_failure_unknown_target_clock",
	[SYNC_STAT_NO_PATH] = "clock_sync_failure_no_path",
	[SYNC_STAT_NEGATIVE] = "trace_sorter_negative_timestamp_dropped",
	[SYNC_STAT_INVALID_SNAPSHOTS] = "invalid_clock_snapshots",
	[SYNC_STAT_PACKET_LOSS] = "clock_sync_failure_undeferrable_packet_loss",
	[SYNC_STAT_UNRELATABLE] = "clock_sync_unrelatable_clock_domains",
	[SYNC_STAT_PERF_NO_FRAMES] = "perf_text_importer_sample_no_frames",
	[SYNC_STAT_PERF_MALFORMED_SAMPLE] = "perf_text_importer_malformed_sample",
	[SYNC_STAT_PERF_MALFORMED_FRAME] = "perf_text_importer_malformed_frame",
	[SYNC_STAT_PERF_TOO_LARGE] = "perf_text_importer_sample_too_large",
	[SYNC_STAT_PERF_LINE_TOO_LONG] = "perf_text_importer_line_too_long",
	[SYNC_STAT_PERF_LINE_NOT_TEXT] = "perf_text_importer_line_not_text",
};

const char *sync_stat_name(enum sync_stat s)
{
	return s < SYNC_STAT_COUNT ? names[s] : NULL;
}

bool sync_stat_per_machine(enum sync_stat s)
{
	return s != SYNC_STAT_NEGATIVE && s != SYNC_STAT_INVALID_SNAPSHOTS;
}

void sync_stats_add(struct sync_stats *a, const struct sync_stats *b)
{
	int i;

	for (i = 0; i < SYNC_STAT_COUNT; i++)
		a->stat[i] += b->stat[i];
	a->packets_in += b->packets_in;
	a->packets_out += b->packets_out;
	a->packets_omitted += b->packets_omitted;
	a->samples_in += b->samples_in;
	a->samples_out += b->samples_out;
	a->pid_traced += b->pid_traced;
	a->pid_from_tid += b->pid_from_tid;
	a->bundles += b->bundles;
	a->converted += b->converted;
	a->events_dropped += b->events_dropped;
	a->fields_dropped += b->fields_dropped;
}
