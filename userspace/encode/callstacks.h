/* Off-CPU call stacks (--callstacks): turns the recorder's BTR_REC_STACK
 * records (the kernel stack of a task going to sleep) of one CPU into
 * PerfSamples on a packet sequence of their own, through the perf sample encoder
 * (perf_samples.h), as Perfetto's perf data source writes samples taken on
 * a tracepoint:
 *
 * - the sequence's defaults name the sched/sched_switch tracepoint as the
 *   timebase (TracePacketDefaults.perf_sample_defaults);
 * - each frame is a kernel function named from kallsyms, in the mapping
 *   "/kernel" with no range (what traced_perf writes for kernel frames,
 *   and what trace_processor recognizes as the kernel), cpu_mode kernel;
 * - the frames of the tracing code above __schedule() are left out: the
 *   stack starts in the scheduler, as perf's for the tracepoint does;
 * - a truncated stack (deeper than BTR_STACK_MAX) is written with
 *   unwind_error MAX_FRAMES_EXCEEDED, a stack that could not be taken with
 *   no callstack and unwind_error UNKNOWN: every sleeping switch-out has
 *   its sample, and every loss shows in the trace.
 *
 * Timestamps are the records' own (CLOCK_BOOTTIME, the trace clock).
 * Not thread-safe. */
#ifndef BTR_CALLSTACKS_H
#define BTR_CALLSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "encode/bundle.h"
#include "output/sink.h"
#include "record.h"

struct callstack_enc_stats {
	uint64_t samples;        /* PerfSamples written */
	uint64_t truncated;      /* of which with a cut stack */
	uint64_t failed;         /* of which with no stack */
	uint64_t frames_unnamed; /* frames no symbol holds (written "") */
};

struct callstack_enc;

/* Samples go to `sink` on sequence `seq_id`; frames are named by `fn`
 * (NULL: every frame unnamed). Frames before the first one in
 * [sched_start, sched_end) are left out (0, 0: none is). NULL when out of
 * memory. */
struct callstack_enc *callstack_enc_new(struct packet_sink *sink,
					uint32_t seq_id,
					bundle_symbolize_fn fn, void *ctx,
					uint64_t sched_start,
					uint64_t sched_end);

/* Writes the sample of one BTR_REC_STACK record of `len` bytes read from
 * the ring of `cpu`. Returns 0, -EINVAL for a record that is not a whole
 * stack record, or the encoder's negative errno. */
int callstack_enc_add(struct callstack_enc *c, uint32_t cpu,
		      const struct btr_hdr *rec, size_t len);

/* Starts the interned state anew (perf_samples_reset). */
void callstack_enc_reset(struct callstack_enc *c);

const struct callstack_enc_stats *
callstack_enc_stats(const struct callstack_enc *c);

void callstack_enc_free(struct callstack_enc *c);

#endif
