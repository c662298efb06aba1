/* The report's model of thread states, as trace_processor builds its
 * sched and thread_state tables, fed one event at a time in timestamp
 * order (merge.h):
 *
 * - sched slices: a CPU's switch ends the slice of the task it was
 *   running (for a compact switch the CPU's last next_pid; a full switch
 *   whose prev_pid is another task ends none) and starts one for next_pid.
 *   A CPU's first compact switch only says who runs: no slice, no state.
 *   CPU time of a thread is the sum of its slices; a CPU's busy time the
 *   sum of its slices of tasks other than pid 0, idle time those of pid 0.
 *   A thread's switches out (voluntary: asleep; involuntary: R or R+) are
 *   the slices that ended, by their end state.
 * - thread states: a switch puts prev in the state its prev_state gives
 *   (R or R+ runnable, S, D, other) and next in Running; a waking puts a
 *   thread that is not Running or R in R (an R+ thread too), its waker the
 *   task running on the waking's CPU, or an interrupt when the waking's
 *   common_flags say hard or soft irq; task_newtask puts the new thread in
 *   R, woken by its creator. Scheduling latency is the length of each R/R+
 *   state that ends in a switch-in; off-CPU time the length of S and D
 *   states, ending at a waking or switch-in. A switch-out of a thread that
 *   was not Running (a switch the kernel hid: mismatched) leaves the state
 *   it ends open, uncounted (cut).
 *
 * Only intervals that end inside the trace count: a slice or state still
 * open at its end has no length (dur -1 in trace_processor). With a time
 * window, intervals count for their part inside it and a latency when its
 * switch-in falls in it; with a CPU list, slices on those CPUs and
 * latencies of switch-ins there.
 *
 * For speed on traces of thousands of threads: a thread's index comes
 * from a flat table by tid (one load through the CPU's pointer to its
 * machine's table; the CPU keeps the index of the task it
 * runs), what each event touches is one 64-byte line (struct
 * thread_hot), its latencies a second allocation made at the first one
 * (struct lat, with a small histogram: hist.h), and the rest (struct
 * thread) is only filled in by model_finish for the tables. */
#ifndef BTR_REPORT_MODEL_H
#define BTR_REPORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "report/event.h"
#include "report/hist.h"
#include "report/merge.h"
#include "report/sketch.h"
#include "util/hashmap.h"

enum tstate { TS_NONE, TS_RUNNING, TS_R, TS_RP, TS_S, TS_D, TS_OTHER };

/* Wakers that are not threads: wakings in interrupt context (the
 * waking's common_flags), as keys of the wakers' sketch. */
#define WAKER_NONE (-1)
#define WAKER_HARDIRQ (-2)
#define WAKER_SOFTIRQ (-3)
#define FTRACE_FLAG_HARDIRQ 0x08
#define FTRACE_FLAG_SOFTIRQ 0x10

/* A thread's wakers and blocked functions are space-saving sketches
 * (sketch.h): exact up to this many distinct ones a thread. */
#define WAKER_SLOTS 16
#define BLOCKED_SLOTS 4

/* A thread's figures, read by the tables (rows.h) once model_finish has
 * set them; while the model runs only tid, tgid, machine and the high
 * halves of vol and invol live here. */
struct thread {
	struct hist *hist;    /* latencies; NULL: none */
	uint64_t lat_sum, lat_max;
	int64_t lat_max_ts;   /* when the longest latency ended */
	struct sketch_slot wk[WAKER_SLOTS]; /* who woke it (key: tid) */
	int32_t tid, tgid;    /* tgid -1: unknown */
	uint32_t machine, name;
	uint64_t cpu_ns, off_s, off_d;
	uint64_t vol, invol;  /* switches out asleep / runnable */
	uint32_t blocked;     /* function of the current sleep, 0: none */
	struct sketch_slot bl[BLOCKED_SLOTS];  /* where it blocked (key:
						 * name id of the function) */
	uint64_t bl_ns[BLOCKED_SLOTS];        /* off-CPU time that followed */
};

/* A thread's latencies, allocated at its first (aligned to a cache
 * line): its wakers' sketch (two lines), then the sums beside the
 * histogram's header, one line. */
struct lat {
	struct sketch16 wk;
	uint64_t sum, max;
	int64_t max_ts;
	struct hist h;
};

_Static_assert(WAKER_SLOTS == SKETCH16_SLOTS, "wakers: a sketch16");

/* What every event of a thread touches, one cache line a thread, in an
 * array beside the threads (same index). vol and invol carry into the
 * thread's when they wrap. */
struct thread_hot {
	int64_t since;        /* start of the current state */
	uint64_t cpu_ns, off_s, off_d;
	struct lat *lat;      /* NULL until the first latency */
	uint32_t vol, invol;  /* low 32 bits */
	int32_t waker;        /* of the current R state, -1: none */
	int32_t last_cpu;     /* queue index of its last CPU, -1: none */
	uint32_t name;        /* its comm */
	uint8_t state;        /* enum tstate */
	uint8_t blocked;      /* the thread's `blocked` is set */
};

_Static_assert(sizeof(struct thread_hot) == 64, "one cache line");

struct cpu_stat {
	bool known;           /* a switch was seen: cur is set */
	bool slice;           /* cur's sched slice is open (not after a
			       * CPU's first compact switch) */
	bool selected;        /* in --cpu's list (or no list) */
	uint32_t machine;     /* of its queue */
	uint32_t *tids;       /* its machine's direct table, NULL: none */
	int32_t cur;          /* the task running */
	uint32_t cur_i;       /* its thread index, UINT32_MAX: none (idle) */
	int64_t since;        /* since when */
	uint64_t busy, idle, switches, migrations_in, mismatched;
	uint64_t events;      /* of its queue, and their first and last */
	int64_t first, last;  /* times (per-machine sections) */
};

struct model_opts {
	int64_t from, to;     /* window, relative to the first event */
	bool has_from, has_to;
	const uint8_t *cpus;  /* cpus[c] != 0: selected; NULL: all */
	uint32_t ncpus;
};

/* Thread indexes by tid: for machines below TID_MACHINES and tids below
 * 2^22 (the kernel's largest pid_max) a flat table of index + 1 by tid, an
 * anonymous mapping of 16 MiB whose pages stay unallocated until touched
 * (4 KiB for each 1024 tids in use), so a lookup is one load; other keys
 * (hostile or odd traces) go to a hash map. */
#define TID_BITS 22
#define TID_MACHINES 16

struct model {
	uint32_t *direct[TID_MACHINES]; /* index + 1, 0: none; NULL: not yet */
	struct hmap idx;      /* other (machine << 32 | tid) -> index in thr */
	struct thread *thr;
	struct thread_hot *hot;
	size_t nthr, capthr;
	struct cpu_stat *cpu; /* by queue index */
	size_t ncpu;
	struct model_opts o;
	int64_t first, last;  /* first and last event time, once started */
	int64_t from, to;     /* absolute window */
	bool windowed;        /* --from or --to: from and to clip */
	bool started;
	uint64_t events, skipped_wakings;
	uint64_t cut;         /* states a mismatched switch left open */
	bool oom;
	/* Off-CPU stacks (offcpu.h), NULL: none: called with d -1 when a
	 * switch-out puts thread i in S or D at since, and with the state's
	 * length as counted (off_s, off_d) when it ends. */
	void (*sleep_hook)(void *ctx, uint32_t i, int64_t since, int64_t d);
	void *sleep_ctx;
};

void model_init(struct model *m, const struct model_opts *o);
void model_free(struct model *m);
/* Takes the events the merge hands out (merge.h: what its watermark
 * allows, everything with all = true), in time order. */
void model_take(struct model *m, struct merge *mg, bool all);
/* What a ProcessTree says of a thread: its process (tgid, -1: unknown)
 * and name (0: none). */
void model_thread_info(struct model *m, uint32_t machine, int32_t tid,
		       int32_t tgid, uint32_t name);
/* The thread (machine, tid), NULL if never seen. */
const struct thread *model_find(const struct model *m, uint32_t machine,
				int32_t tid);
/* Ends the model, once: nothing open counts; the threads' figures are
 * set (struct thread). */
void model_finish(struct model *m);

#endif
