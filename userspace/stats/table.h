/* The statistics of a trace, as rows like trace_processor's `stats` table
 * (name, idx, severity, source, value, machine) with Perfetto's stat names:
 * read from TraceStats and FtraceStats, derived from the packets (bundle
 * lost_events, previous_packet_dropped per sequence, the config echo, the
 * prev_pid check of sched_switch events), per
 * machine in a merged trace (the host's first, then each machine_id's),
 * and the drops counted in the trailer `sync` writes (sync_info.h), each
 * on its machine. */
#ifndef BTR_STATS_TABLE_H
#define BTR_STATS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stat_severity { SEV_INFO, SEV_ERROR, SEV_DATA_LOSS };
enum stat_source { SRC_TRACE, SRC_ANALYSIS };

struct stat_row {
	const char *name;
	int64_t idx; /* -1: not indexed */
	enum stat_severity severity;
	enum stat_source source;
	int64_t value;
	int64_t machine; /* machine_id; -1: the host (or the whole trace) */
};

struct stat_table {
	struct stat_row *rows;
	size_t n, cap;
	char **names;    /* row names read from the trace (owned) */
	size_t n_names;
	bool machines;   /* some row is of another machine than the host */
};

/* Reads PATH and fills t. Returns 0, or -1 with a message in err. */
int stat_table_read(struct stat_table *t, const char *path, char *err,
		    size_t errlen);
void stat_table_free(struct stat_table *t);
const char *stat_severity_name(enum stat_severity s);
const char *stat_source_name(enum stat_source s);

#endif
