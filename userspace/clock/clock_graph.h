/* Offline clock graph: relates the clocks of recorded traces through their
 * ClockSnapshots and converts timestamps from one clock to another. Our own
 * implementation of the rules of docs/clock-model.md ('Snapshots',
 * 'Converting a timestamp'): a snapshot links every pair of its clocks; a
 * conversion follows the shortest chain of links (at most 4) and, on each
 * link, the offset of the last snapshot taken at or before the timestamp.
 *
 * Choices where Perfetto is ambiguous (docs/clock-model.md, 'Where we
 * differ from Perfetto'):
 * - Series: snapshots holding the same SET of clocks form one series, in any
 *   order ({BOOTTIME, MONOTONIC} and {MONOTONIC, BOOTTIME} are one series), as
 *   Perfetto's documentation says (its code hashes the ordered list).
 * - Two series linking the same pair of clocks: the link of the series created
 *   first is used for that pair; later series never replace it.
 * - Rejection is atomic: a rejected snapshot changes nothing (no clock becomes
 *   known, no sample is kept, no clock is marked non-monotonic) except the
 *   invalid_clock_snapshots counter. On -ENOMEM the graph is also unchanged.
 * - An empty snapshot is accepted and does nothing.
 * - The trace clock starts as TRACE_FILE (11) of file 0 on machine 0 and only
 *   matters for validation: its unit must be 1 and it may not go backwards.
 * - A conversion between two equal keys returns the timestamp unchanged, even
 *   for a clock no snapshot mentioned.
 *
 * Arithmetic wraps modulo 2^64 (values are raw * unit in nanoseconds). Not
 * thread-safe: a conversion updates caches and counters. */
#ifndef BTR_CLOCK_GRAPH_H
#define BTR_CLOCK_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Clock ids (builtin_clock.proto) and the scoping ranges. */
enum btr_clock_id {
	BTR_CLOCK_REALTIME = 1,
	BTR_CLOCK_REALTIME_COARSE = 2,
	BTR_CLOCK_MONOTONIC = 3,
	BTR_CLOCK_MONOTONIC_COARSE = 4,
	BTR_CLOCK_MONOTONIC_RAW = 5,
	BTR_CLOCK_BOOTTIME = 6,
	BTR_CLOCK_TSC = 9,
	BTR_CLOCK_PERF = 10,
	BTR_CLOCK_TRACE_FILE = 11,
	BTR_CLOCK_BUILTIN_MAX = 63,
	BTR_CLOCK_SEQ_FIRST = 64, /* 64..127: scoped to one packet sequence */
	BTR_CLOCK_SEQ_LAST = 127,
	BTR_CLOCK_GLOBAL_FIRST = 128,
};

/* Identity of a clock node. The graph compares the four fields and nothing
 * else; btr_clock_key_make() applies the scoping rule. */
/* The int64 whose two's complement is v (no implementation-defined cast):
 * how trace_processor reads a uint64 timestamp. */
static inline int64_t btr_wrap_i64(uint64_t v)
{
	return v <= INT64_MAX ? (int64_t)v : -(int64_t)(UINT64_MAX - v) - 1;
}

struct btr_clock_key {
	uint32_t clock_id;
	uint32_t seq_id; /* trusted_packet_sequence_id, 64..127 only, else 0 */
	uint32_t file;   /* file tag */
	uint32_t machine;
};

/* One clock of a snapshot. */
struct btr_clock_reading {
	struct btr_clock_key key;
	uint64_t ts;          /* raw value, in units of unit_ns */
	uint64_t unit_ns;     /* unit_multiplier_ns; 0 means 1 */
	bool incremental;     /* conversions from it take deltas (64..127 only) */
};

enum btr_clock_result {
	BTR_CLOCK_OK = 0,
	BTR_CLOCK_UNKNOWN_SOURCE, /* source clock in no accepted snapshot */
	BTR_CLOCK_UNKNOWN_TARGET, /* target clock in no accepted snapshot */
	BTR_CLOCK_NO_PATH,        /* both known, no chain of at most 4 links */
};

struct btr_clock_graph;

/* Fills *key; seq_id is kept for ids 64..127 only. Returns -EINVAL (and
 * leaves *key alone) for a sequence-scoped id with sequence id 0. */
int btr_clock_key_make(uint32_t clock_id, uint32_t seq_id, uint32_t file,
		       uint32_t machine, struct btr_clock_key *key);
bool btr_clock_key_equal(struct btr_clock_key a, struct btr_clock_key b);
/* Order of the path search: clock_id, then seq_id, file, machine. */
int btr_clock_key_cmp(struct btr_clock_key a, struct btr_clock_key b);

/* NULL when out of memory. */
struct btr_clock_graph *btr_clock_graph_new(void);
void btr_clock_graph_free(struct btr_clock_graph *g);

void btr_clock_graph_set_trace_clock(struct btr_clock_graph *g,
				     struct btr_clock_key key);
struct btr_clock_key btr_clock_graph_trace_clock(const struct btr_clock_graph *g);

/* Records one snapshot. Returns 0, -EINVAL when the snapshot is rejected
 * (counted in invalid_clock_snapshots): the same clock twice, a unit or
 * incremental flag other than the clock's first one, incremental outside
 * 64..127, a trace clock whose unit is not 1 or whose value is lower than its
 * last one in the same series; or -ENOMEM. A clock other than the trace
 * clock whose value goes down within a series becomes target-only for good:
 * conversions may end on it, never start from or pass through it. */
int btr_clock_graph_add_snapshot(struct btr_clock_graph *g,
				 const struct btr_clock_reading *clocks,
				 size_t n);

/* A two-clock snapshot {a: ts_a, b: ts_b}, each clock with the unit and
 * incremental flag it already has (1 and absolute if new). Same returns. */
int btr_clock_graph_add_edge(struct btr_clock_graph *g, struct btr_clock_key a,
			     uint64_t ts_a, struct btr_clock_key b, uint64_t ts_b);
/* add_edge(a, 0, b, 0): a and b read the same time. Like any snapshot it
 * joins the {a, b} series, where values may not go back. */
int btr_clock_graph_add_zero_offset_edge(struct btr_clock_graph *g,
					 struct btr_clock_key a,
					 struct btr_clock_key b);

/* True when the clock was in an accepted snapshot. */
bool btr_clock_graph_is_known(const struct btr_clock_graph *g,
			      struct btr_clock_key key);

/* Converts ts on src (raw units of src; a delta for an incremental src) to
 * nanoseconds of dst, which may be negative. On failure *ns is untouched and
 * the failure's counter is incremented. Never allocates: the path of a
 * (src, dst) pair is kept until the next snapshot, with the row each link
 * used last, so a stream of growing timestamps rarely searches. */
enum btr_clock_result btr_clock_graph_convert(struct btr_clock_graph *g,
					      struct btr_clock_key src,
					      int64_t ts,
					      struct btr_clock_key dst,
					      int64_t *ns);

/* True when a conversion from src to dst would succeed (equal keys, or
 * both known and a chain of at most 4 links); counts nothing. */
bool btr_clock_graph_has_path(struct btr_clock_graph *g,
			      struct btr_clock_key src,
			      struct btr_clock_key dst);

/* Sets the running value of an incremental clock to raw * its unit, as a
 * snapshot holding it at `raw` does, without adding a snapshot: a caller
 * that added every snapshot first replays the resets in file order with
 * it. Does nothing for an absolute clock or one no snapshot mentioned. */
void btr_clock_graph_reset_incremental(struct btr_clock_graph *g,
				       struct btr_clock_key key, uint64_t raw);

/* The path cache is on by default; results are the same without it. */
void btr_clock_graph_set_cache(struct btr_clock_graph *g, bool enabled);

/* Conversions that searched a path (the cache's misses): how the cache is
 * measured. What conversions and snapshots fail is counted by their
 * callers (the timeline, clock/timeline.h), from the results. */
uint64_t btr_clock_graph_cache_misses(const struct btr_clock_graph *g);

/* Testing only: the next `count` allocations succeed, the following ones
 * fail; a negative count (the default) never fails. */
void btr_clock_graph_fail_allocs_after(struct btr_clock_graph *g, long count);

#endif
