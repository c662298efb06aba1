/* The statistics of a trace, as rows like trace_processor's `stats` table
 * (name, idx, severity, source, value, machine) with Perfetto's stat names:
 * read from TraceStats and FtraceStats, derived from the packets (bundle
 * lost_events, previous_packet_dropped per sequence, the config echo, the
 * prev_pid check of sched_switch events; and rows of our own, named
 * sched_blocked_reason_*, for the blocked reasons and those without a
 * function; perf_samples*, for stack samples and their cut or missing
 * stacks), per machine in a merged trace (the host's first, then each machine_id's),
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

/* The same read packet by packet, for a command that walks the trace
 * itself (report): stat_gather_packet with every packet in file order (or,
 * for a bundle its caller decoded that holds no full sched_switch,
 * stat_gather_compact_bundle with what it found), then stat_gather_rows. */
struct stat_gather;

/* What stats needs of a bundle packet without full sched_switch events. */
struct stat_bundle {
	uint32_t machine;      /* TracePacket.machine_id, 0: the host */
	bool has_seq;
	uint32_t seq;          /* trusted_packet_sequence_id */
	uint32_t prev_dropped; /* previous_packet_dropped */
	bool has_cpu, lost;    /* FtraceEventBundle.cpu is set; lost_events */
	uint32_t cpu;
	uint64_t switches;     /* compact switches */
	int64_t last_next_pid; /* the last one's next_pid */
};

struct stat_gather *stat_gather_new(void); /* NULL: out of memory */
/* Returns 0, -1 when the packet does not decode, or -ENOMEM. */
int stat_gather_packet(struct stat_gather *g, const uint8_t *pkt, size_t len);
int stat_gather_compact_bundle(struct stat_gather *g,
			       const struct stat_bundle *b);
/* The rows (t need not be initialised). Returns 0 or -ENOMEM. */
int stat_gather_rows(struct stat_gather *g, struct stat_table *t);
void stat_gather_free(struct stat_gather *g);

/* Reads PATH and fills t. Returns 0, or -1 with a message in err. */
int stat_table_read(struct stat_table *t, const char *path, char *err,
		    size_t errlen);
void stat_table_free(struct stat_table *t);
const char *stat_severity_name(enum stat_severity s);
const char *stat_source_name(enum stat_source s);

#endif
