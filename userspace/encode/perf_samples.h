/* Encoder of parsed perf samples (perf_text.h) into Perfetto TracePackets
 * that trace_processor imports as CPU stack samples (perf_sample table, the
 * UI's "callstacks" tracks and flame graphs), on one packet sequence of
 * their own:
 *
 * - The first packet sets SEQ_INCREMENTAL_STATE_CLEARED; later sample
 *   packets set SEQ_NEEDS_INCREMENTAL_STATE.
 * - One packet per sample: timestamp (given by the caller, already on the
 *   trace clock), PerfSample {pid, tid, cpu when known, callstack_iid,
 *   cpu_mode, unwind_error when set}, and the InternedData entries the sample uses for the first
 *   time: function_names, mapping_paths (each path as one string),
 *   build_ids, mappings (a frame without perf_mapping: one per dso, no
 *   address range, trace_processor interns it by name; with one: one per
 *   (path, build id, range, offsets, load bias)), frames (one per
 *   (mapping, function, rel_pc), rel_pc 0 for a dso alone), callstacks
 *   (frame iids root first). iids count from 1 in each table. Memory grows with the
 *   distinct strings, frames, callstacks and threads, not with samples.
 * - Names, when enabled: after a sample whose (tid, comm) is new, a
 *   ProcessTree packet with Thread {tid, tgid = pid, name = comm}, and for a
 *   main thread (pid == tid) whose (pid, comm) is new, Process {pid,
 *   cmdline = [comm], cmdline_is_comm}. A ProcessTree name outranks names
 *   from ftrace in trace_processor: when the samples are merged with a
 *   recorder trace that names its tasks, leave these off.
 *
 * trace_processor creates the "perf session" (and its cpu-clock timebase
 * track, which the UI joins on) from the sequence id alone: no
 * TracePacketDefaults are needed. Not thread-safe. */
#ifndef BTR_PERF_SAMPLES_H
#define BTR_PERF_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sink.h"

/* The memory mapping of a frame, as Perfetto's Mapping holds it: a range
 * of a process's address space that maps `path` from file offset
 * exact_offset (start_offset: where the ELF starts in the file, 0 for
 * plain files), `load_bias` the ELF's p_vaddr - p_offset of its
 * executable segment, `build_id` its GNU build id (raw bytes, may be
 * empty). trace_processor's rel_pc of an address in it is
 * address - start + exact_offset + load_bias. */
struct perf_mapping {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t start, end, start_offset, exact_offset, load_bias;
};

struct perf_frame {
	uint64_t address;   /* as printed (perf prints user addresses of call
			     * chains relative to their dso) */
	const char *symbol; /* without "+0x<off>"; "" when not printed */
	const char *dso;    /* e.g. "/usr/lib/libc.so.6", "[kernel.kallsyms]",
			     * "[unknown]" */
	/* NULL: the mapping is the dso alone (no range, rel_pc 0: frames
	 * interned per function). Else the frame's mapping (its path names
	 * it, dso is ignored) and `rel_pc` its pc relative to it. */
	const struct perf_mapping *map;
	uint64_t rel_pc;
};

/* One CPU stack sample, from whatever source (perf script text for now):
 * what the encoder takes. From the perf text parser, strings and frames
 * stay valid until its next perf_text_next() or perf_text_close(). */
struct perf_sample {
	const char *comm;  /* "" when not printed */
	int32_t pid;       /* -1 when the header has tid only */
	int32_t tid;
	int32_t cpu;       /* -1 when not printed */
	int64_t ts_ns;     /* perf clock (MONOTONIC by default), exact */
	uint64_t period;   /* 0 when not printed */
	const char *event; /* "cpu-clock:pppH" (no final ':'); "" if absent */
	const struct perf_frame *frames; /* leaf first, nframes >= 1 */
	size_t nframes;
	uint64_t line;     /* 1-based line number of the header */
	/* Why the stack is partial or missing (Profiling.StackUnwindError),
	 * when has_unwind_error; zero-initialized: a whole stack. */
	bool has_unwind_error;
	uint32_t unwind_error;
};

/* Profiling.StackUnwindError values the recorder writes. */
#define PERF_UNWIND_ERROR_UNKNOWN 0
#define PERF_UNWIND_ERROR_MEMORY_INVALID 2
#define PERF_UNWIND_ERROR_UNWIND_INFO 3
#define PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED 6

struct perf_samples_opts {
	uint32_t seq_id;             /* trusted_packet_sequence_id, not 0 */
	uint32_t timestamp_clock_id; /* set on every packet unless 0 */
	bool thread_names;           /* ProcessTree threads, see above */
	bool process_names;          /* ProcessTree processes, see above */
	/* Process of a sample whose header has no pid (pid -1): resolve_pid
	 * (ctx, tid) if set and >= 0 (pid_resolved), else the tid itself
	 * (pid_from_tid). */
	int32_t (*resolve_pid)(void *ctx, int32_t tid);
	void *resolve_ctx;
	uint32_t machine_id;         /* set on every packet unless 0 */
	/* When set (e.g. "sched/sched_switch"), the packet that clears the
	 * incremental state carries TracePacketDefaults.perf_sample_defaults
	 * naming this tracepoint as the samples' timebase. */
	const char *timebase_tracepoint;
};

struct perf_samples_stats {
	uint64_t samples;        /* PerfSample packets */
	uint64_t packets;        /* all packets written */
	uint64_t function_names; /* interned entries, per table */
	uint64_t mapping_paths;
	uint64_t build_ids;
	uint64_t mappings;
	uint64_t frames;
	uint64_t callstacks;
	uint64_t pid_resolved;   /* samples whose pid came from resolve_pid */
	uint64_t pid_from_tid;   /* samples whose pid was guessed = tid */
	uint64_t thread_names;   /* ProcessTree entries written */
	uint64_t process_names;
};

struct perf_samples;

/* NULL with errno set: EINVAL (seq_id 0, no sink) or ENOMEM. */
struct perf_samples *perf_samples_new(struct packet_sink *sink,
				      const struct perf_samples_opts *opts);
void perf_samples_free(struct perf_samples *e);

/* Writes the packets of sample s at timestamp ts (ns on the trace clock, or
 * on opts.timestamp_clock_id). A sample without frames gets no callstack.
 * Returns 0 or a negative errno (out of memory, or the sink's error); after
 * an error every call returns it: the sequence written so far stays
 * consistent (no reference to an entry that was not written). */
int perf_samples_add(struct perf_samples *e, const struct perf_sample *s,
		     uint64_t ts);

/* Forgets the interned entries: the next packet clears the sequence's
 * incremental state again and re-interns what it uses, so that a reader
 * that lost earlier packets (an overwritten buffer chunk) can resume from
 * it. Names already written stay known. */
void perf_samples_reset(struct perf_samples *e);

const struct perf_samples_stats *
perf_samples_stats(const struct perf_samples *e);

#endif
