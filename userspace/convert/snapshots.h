/* The clock snapshots of one input, gathered by the first pass in file
 * order: each ClockSnapshot packet, and each (ftrace clock, BOOTTIME) pair
 * an FtraceEventBundle with ftrace_clock GLOBAL or LOCAL carries (Perfetto
 * reads that pair as a snapshot of a sequence-scoped clock 64). They are
 * added to the clock graph once the trace clock is known (its validation
 * depends on it); the second pass then replays the resets of incremental
 * clocks in file order, because the graph holds only the latest one. */
#ifndef BTR_SNAPSHOTS_H
#define BTR_SNAPSHOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock/clock_graph.h"
#include "clock/scope.h"

/* ClockSnapshot fields. */
enum {
	SNAP_CLOCKS = 1,
	SNAP_PRIMARY_TRACE_CLOCK = 2,
	SNAP_CLOCK_ID = 1,
	SNAP_CLOCK_TIMESTAMP = 2,
	SNAP_CLOCK_IS_INCREMENTAL = 3,
	SNAP_CLOCK_UNIT_MULTIPLIER_NS = 4,
};

/* More clocks in one ClockSnapshot is taken for corrupt input (producers
 * write about ten; each snapshot links every pair of its clocks). */
#define SNAPSHOT_MAX_CLOCKS 128

/* The sequence-scoped clock id Perfetto gives GLOBAL/LOCAL ftrace clocks. */
#define FTRACE_SEQ_CLOCK_ID 64

struct snap_entry {
	uint64_t packet;  /* index of the packet that carried it */
	size_t first, n;  /* its readings */
	uint32_t machine; /* its scope's machine (first pass: the slot) */
	bool accepted;    /* the graph took it */
	bool bad_scope;   /* a sequence-scoped clock on sequence 0 */
};

struct snap_list {
	struct btr_clock_reading *readings;
	size_t nreadings, reading_cap;
	struct snap_entry *e;
	size_t n, cap;
	size_t cursor;    /* second pass: next entry to replay */
	int64_t last_ftrace_ts; /* a pair equal to the last is skipped, as in */
	bool has_ftrace_ts;     /* Perfetto (bundles often repeat it) */
};

void snap_list_free(struct snap_list *l);

/* Adds the ClockSnapshot payload of packet `packet` (on sequence seq).
 * Returns 0, -1 for a malformed snapshot or one with more than
 * SNAPSHOT_MAX_CLOCKS clocks (with *why), -ENOMEM. */
int snap_list_add_snapshot(struct snap_list *l, const struct clock_scope *s,
			   uint64_t packet, uint32_t seq, const uint8_t *p,
			   size_t n, const char **why);

/* Adds the pair {FTRACE_SEQ_CLOCK_ID on seq: ftrace_ts, BOOTTIME: boot_ts}
 * of a bundle. Returns 0 or -ENOMEM. */
int snap_list_add_ftrace_pair(struct snap_list *l, const struct clock_scope *s,
			      uint64_t packet, uint32_t seq, int64_t ftrace_ts,
			      int64_t boot_ts);

/* Adds every snapshot to the graph in order, marking the accepted ones;
 * returns how many were rejected, or -ENOMEM. */
long snap_list_apply(struct snap_list *l, struct btr_clock_graph *g);

/* The first pass keys clocks by machine slot (machines.h); this moves
 * every reading to its slot's machine and file tag, once. */
struct file_machines;
void snap_list_scope(struct snap_list *l, const struct file_machines *fm);

/* snap_list_apply() where twin(ctx, machine) says so for a snapshot's
 * machine: each REALTIME and REALTIME_COARSE reading of an isolated
 * input (file tag not 0) is also added as the machine's own clock, in the
 * same snapshot, so that the input can meet other machines through
 * REALTIME (docs/clock-model.md, 'Isolated inputs'). Same returns. */
long snap_list_apply_twins(struct snap_list *l, struct btr_clock_graph *g,
			   bool (*twin)(void *ctx, uint32_t machine),
			   void *ctx);

/* Before the second pass: every incremental clock starts from its first
 * accepted snapshot (deltas before it count from there). */
void snap_list_rewind(struct snap_list *l, struct btr_clock_graph *g);
/* Second pass, at packet `packet`: replays the resets of incremental
 * clocks done by the snapshots carried up to that packet. */
void snap_list_replay(struct snap_list *l, struct btr_clock_graph *g,
		      uint64_t packet);

/* The clock a ClockSnapshot payload declares as the trace clock, as
 * trace_processor reads it: primary_trace_clock if set, else BOOTTIME if
 * it holds BOOTTIME and no TRACE_FILE, else none (false). */
bool snap_declared_clock(const uint8_t *p, size_t n, uint32_t *clock);

/* The raw value of clock_id in a ClockSnapshot payload with unit 1, if it
 * holds that clock (absolute, unit 1). */
bool snap_clock_value(const uint8_t *p, size_t n, uint32_t clock_id,
			  uint64_t *value);

#endif
