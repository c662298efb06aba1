/* Which process each thread of a machine belongs to, read from the trace
 * inputs of a `sync` run into a tid_table (tid_table.h), for perf samples
 * printed without a pid: ProcessTree threads (tid, tgid) and processes
 * (pid: the main thread), and sched_process_exit events (pid, tgid: the
 * threads that ended before the recorder described them from /proc).
 *
 * A pass of its own over each trace input with packets on that machine:
 * packets of other machines are skipped, and of the rest only those
 * messages are read, at the wire level (the top-level fields, a
 * ProcessTree's entries, a bundle's events). Nothing is kept but the
 * table, whose size is bounded. */
#ifndef BTR_TRACE_TIDS_H
#define BTR_TRACE_TIDS_H

#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "sync/perf/tid_table.h"

/* Adds what one TracePacket tells; malformed parts are skipped (the
 * second pass reports them). Returns 0 or -ENOMEM. */
int trace_tids_packet(struct tid_table *t, const uint8_t *pkt, size_t len);

/* The packets on machine `machine` (an index in the run's machine table)
 * of every trace input among in[0..n), after the first pass assigned
 * their machines. An input that cannot be read is read up to there: its
 * own pass reports the error. Returns 0 or -ENOMEM. */
int trace_tids_collect(struct tid_table *t, struct input **in, size_t n,
		       uint32_t machine);

#endif
