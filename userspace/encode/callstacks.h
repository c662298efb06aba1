/* Off-CPU call stacks (--callstacks): turns the recorder's BTR_REC_STACK
 * records (the kernel and user stacks of a task going to sleep) of one
 * CPU into PerfSamples on a packet sequence of their own, through the
 * perf sample encoder (perf_samples.h), as Perfetto's perf data source
 * writes samples taken on a tracepoint:
 *
 * - the sequence's defaults name the sched/sched_switch tracepoint as the
 *   timebase (TracePacketDefaults.perf_sample_defaults);
 * - each kernel frame is a kernel function named from kallsyms, in the
 *   mapping "/kernel" with no range (what traced_perf writes for kernel
 *   frames, and what trace_processor recognizes as the kernel), cpu_mode
 *   kernel;
 * - the frames of the tracing code above __schedule() are left out: the
 *   stack starts in the scheduler, as perf's for the tracepoint does;
 * - the user frames follow (toward the root), each in the mapping of its
 *   process that holds it, with its rel_pc and function name, as the
 *   resolver (callstack_user_fn) gives them; a pc no mapping is known for
 *   goes to the mapping "[unknown]" with rel_pc the pc itself (counted);
 * - a truncated stack (kernel deeper than BTR_STACK_MAX, or user deeper
 *   than BTR_USTACK_MAX) is written with unwind_error
 *   MAX_FRAMES_EXCEEDED; a kernel stack that could not be taken with no
 *   callstack and unwind_error UNKNOWN; a user stack that could not be
 *   taken (of a task that has one) with the kernel frames alone and
 *   unwind_error UNKNOWN. Kernel threads have no user frames and no
 *   error. Every sleeping switch-out has its sample, and every loss shows
 *   in the trace.
 *
 * Timestamps are the records' own (CLOCK_BOOTTIME, the trace clock).
 * Not thread-safe. */
#ifndef BTR_CALLSTACKS_H
#define BTR_CALLSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "encode/bundle.h"
#include "encode/perf_samples.h"
#include "output/sink.h"
#include "record.h"

struct callstack_enc_stats {
	uint64_t samples;        /* PerfSamples written */
	uint64_t truncated;      /* of which with a cut stack */
	uint64_t failed;         /* of which with no stack */
	uint64_t frames_unnamed; /* frames no symbol holds (written "") */
	uint64_t user_truncated; /* samples with a cut user stack */
	uint64_t user_failed;    /* samples whose user stack is missing */
	uint64_t user_none;      /* samples of kernel threads (no user side) */
	uint64_t user_frames;    /* user frames written */
	uint64_t user_unmapped;  /* of which in no known mapping */
	uint64_t user_unnamed;   /* of which without a function name */
	uint64_t user_unwound;   /* user stacks unwound from a slice by CFI */
	uint64_t user_joined;    /* of which joined the frame-pointer chain */
	uint64_t user_cut;       /* of which cut where the slice ended */
	uint64_t user_cfi_failed; /* of which stopped at a pc without CFI */
	uint64_t slice_missing;  /* stacks whose slice record was not
				  * there (frame pointers alone) */
	uint64_t deferred;       /* stacks kept to the end of their drain
				  * pass: their user leaf was in no known
				  * mapping, or one before them on their
				  * CPU was */
	uint64_t carried;        /* of which kept to the next pass */
};

/* Stack records kept at most between two callstack_enc_flush() calls. */
#define CALLSTACK_DEFER_MAX 4096

/* Resolves the user pc of process tgid: sets f->map (kept valid until the
 * sample is written), f->rel_pc and f->symbol (NULL: unnamed). `leaf`:
 * pc is where the task is, else a return address. Returns false when no
 * mapping of the process holds pc. */
typedef bool (*callstack_user_fn)(void *ctx, int32_t tgid, uint64_t pc,
				  bool leaf, struct perf_frame *f);

/* How a callstack_unwind_fn walk ended. */
enum callstack_unwound {
	CALLSTACK_WHOLE,  /* to the outermost frame, or joined */
	CALLSTACK_JOINED, /* the frame-pointer chain took over */
	CALLSTACK_CUT,    /* the slice ended first */
	CALLSTACK_NO_CFI, /* a frame without CFI or with a rule not followed */
	CALLSTACK_FULL,   /* more frames than a sample keeps */
};

/* Unwinds the user stack of a sleep of process tgid from its slice u and
 * its frame-pointer walk fp[0..nfp) into out[0..max): returns the pcs,
 * *how says how it ended. */
typedef uint32_t (*callstack_unwind_fn)(void *ctx, int32_t tgid,
					const struct btr_ustack *u,
					const __u64 *fp, uint32_t nfp,
					__u64 *out, uint32_t max,
					enum callstack_unwound *how);

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

/* User frames are resolved by fn (NULL: each in "[unknown]"). */
void callstack_enc_set_user(struct callstack_enc *c, callstack_user_fn fn,
			    void *ctx);

/* User stacks with a slice are unwound by fn (NULL: frame pointers
 * alone). */
void callstack_enc_set_unwind(struct callstack_enc *c, callstack_unwind_fn fn,
			      void *ctx);

/* Keeps the BTR_REC_USTACK record of `len` bytes read from the ring of the
 * encoder's CPU for the stack record that follows it. Returns 0, -EINVAL
 * for a record that is not a whole one, -ENOMEM. */
int callstack_enc_note_slice(struct callstack_enc *c, const struct btr_hdr *rec,
			     size_t len);

/* Writes the sample of one BTR_REC_STACK record of `len` bytes read from
 * the ring of `cpu`. Returns 0, -EINVAL for a record that is not a whole
 * stack record, or the encoder's negative errno. */
int callstack_enc_add(struct callstack_enc *c, uint32_t cpu,
		      const struct btr_hdr *rec, size_t len);

/* Writes the samples kept since the last call (their user leaf was in no
 * mapping known when they were read: a mapping record of their process
 * may have come since, from another CPU's ring), then resolves what it
 * can. Call at the end of each drain pass, before
 * callstack_enc_reset(). `all` false: a sample whose leaf is still in no
 * known mapping, the first time, is kept to the next call with the ones
 * after it (a mapping record committed to a ring after the pass read
 * that ring comes in the next pass); true (the last pass): every one
 * goes. Returns 0 or the first error. */
int callstack_enc_flush(struct callstack_enc *c, bool all);

/* Starts the interned state anew (perf_samples_reset). */
void callstack_enc_reset(struct callstack_enc *c);

const struct callstack_enc_stats *
callstack_enc_stats(const struct callstack_enc *c);

void callstack_enc_free(struct callstack_enc *c);

#endif
