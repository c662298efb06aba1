/* The kernel side of a recording: loads the BPF programs (tp_btf, or raw_tp
 * as fallback), creates one ring buffer per CPU id up to the highest
 * possible one (each of its own size), attaches, drains
 * the rings, runs the in-kernel clock stamp, and reads the per-CPU
 * accounting (program runs, reserve failures). */
#ifndef BTR_CAPTURE_H
#define BTR_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "record/kfeatures.h"

/* Called for each record, in ring order per CPU. Returns 0 to go on. */
typedef int (*capture_record_fn)(void *ctx, uint32_t cpu, const void *rec,
				 size_t len);

struct capture_opts {
	uint64_t ringbuf_size; /* per CPU; rounded up to a power of two */
	/* Or each CPU id's own size (powers of two): nrings entries, as many
	 * as libbpf counts possible CPUs. ringbuf_size is then the largest. */
	const uint64_t *ring_sizes;
	uint32_t nrings;
	/* the kernel's features and the forced fallbacks (KF_TP_BTF not
	 * used: raw_tp) */
	const struct kfeatures *kf;
	uint32_t blocked_mode; /* enum btr_blocked_mode */
	bool callstacks;       /* BTR_REC_STACK after sleeping switch-outs */
	bool user_stacks;      /* ... with the user stack too */
	uint32_t stack_slice;  /* ... and this many bytes of it (0: none) */
	bool kstack_check;     /* cached kernel stacks checked by a walk */
	/* kernel text the blocked function is not in: [start, end) of
	 * __sched_text and __lock_text, 0 when unknown (no stack is taken) */
	uint64_t sched_text[2], lock_text[2];
	capture_record_fn on_record;
	void *ctx;
};

struct capture;

/* Opens, loads and prepares; does not attach yet. On failure returns NULL
 * with a one-line reason in err. */
struct capture *capture_open(const struct capture_opts *o, char *err,
			     size_t errlen);
int capture_attach(struct capture *c, char *err, size_t errlen);
void capture_detach(struct capture *c);
/* Waits up to timeout_ms for a forced wakeup, then drains every ring.
 * Returns records drained or a negative errno. */
int capture_poll(struct capture *c, int timeout_ms);
int capture_drain(struct capture *c);
/* Runs the clock-stamp program; its record arrives through the rings with
 * the given sequence number. Returns 0 or a negative errno. */
int capture_clock_stamp(struct capture *c, uint64_t seq);
/* The reader read the maps of process tgid at ts (BOOTTIME), and they
 * held its pcs: its samples need not say where their frames are mapped
 * (BTR_REC_VMAS) any more, unless it exec'd after ts. */
void capture_note_known_proc(struct capture *c, int32_t tgid, uint64_t ts);

/* Sums of the per-CPU accounting into out[ncpus]. */
int capture_read_acct(struct capture *c, struct btr_cpu_acct *out);
/* Runs of the programs the kernel skipped because one was already running
 * on that CPU (an interrupt's event during a program): bpf_prog_info's
 * recursion_misses, summed over the programs (the kernel keeps no per-CPU
 * figure). Events lost before any ring saw them. *nprogs: the loaded
 * programs whose figure was read. */
uint64_t capture_recursion_misses(const struct capture *c, uint32_t *nprogs);
uint32_t capture_ncpus(const struct capture *c);
/* The rings, for reader threads (record/readers.h). */
struct rings *capture_rings(struct capture *c);
uint64_t capture_ring_size(const struct capture *c);
bool capture_uses_raw_tp(const struct capture *c);
void capture_close(struct capture *c);

#endif
