/* Off-CPU time by call stack: the sleeps the model measures (model.h's
 * sleep_hook: each S or D state a switch-out opens, and its length as
 * counted in off_s and off_d when it ends) joined with the samples taken
 * at those switch-outs (samples.h). A sample stands for the sleep its
 * thread began at its latest switch-out at or before the sample's time:
 * the sample is written right after that switch-out, before the switch
 * is done, so the thread cannot run, let alone sleep again, before it.
 * Sleeps still open at the end of the trace, cut by a mismatched switch
 * or outside --from/--to weigh 0 and are left out.
 *
 * Example: thread 7 switches out asleep at 100 and 300, its samples come
 * at 104 and 309; it is woken at 250 and 420. The sample at 104 stands
 * for the sleep begun at 100 (150 ns), the one at 309 for the one begun at
 * 300 (120 ns). Had the trace ended at 400, the second would weigh 0.
 *
 * The result: per thread and distinct stack, the samples' count and the
 * sum of their sleeps (ns), for the folded output (folded.h) and the
 * report's section of call sites (offcpu_top). */
#ifndef BTR_REPORT_OFFCPU_H
#define BTR_REPORT_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/model.h"
#include "report/names.h"
#include "report/rows.h"
#include "report/samples.h"

struct sleep_mark {
	int64_t since;        /* the switch-out */
	uint64_t ns;          /* its length as counted, 0: none */
	uint32_t thread;      /* model index */
};

struct offcpu_entry {
	uint32_t thread;      /* model index */
	const char *stack;    /* folded (samples.h) */
	uint64_t ns, count;
};

struct offcpu {
	struct sleep_mark *sl;
	size_t nsl, capsl;
	uint32_t *open;       /* by thread: index + 1 of its open sleep */
	size_t nopen;
	struct offcpu_entry *e; /* by thread, then stack */
	size_t ne;
	bool oom;
};

void offcpu_init(struct offcpu *o);
/* Starts noting m's sleeps (sets its hook): a mark of 24 bytes a sleep,
 * so only for a trace that has samples (report.c: from the start with
 * --folded, else from its first sample on). */
void offcpu_listen(struct offcpu *o, struct model *m);
void offcpu_free(struct offcpu *o);
/* After model_finish: the entries of the samples of the threads ro
 * wants (--pid, --comm) taken on the CPUs mo selects (--cpu, by the
 * sample's CPU: where the sleep began). Returns 0 or -ENOMEM. */
int offcpu_join(struct offcpu *o, const struct samples *s,
		const struct model *m, const struct names *names,
		const struct report_opts *ro, const struct model_opts *mo);

/* The section of the text and JSON report: the threads of most sampled
 * off-CPU time, each with its stacks of most time. */
#define OFFCPU_THREADS 5
#define OFFCPU_SITES 3
struct offcpu_site {
	const char *stack;    /* folded */
	uint64_t ns, count;
};
struct offcpu_thread {
	int32_t tid, tgid;
	uint32_t machine;
	const char *name;
	uint64_t ns, count;   /* of every sampled sleep of the thread */
	struct offcpu_site site[OFFCPU_SITES];
	size_t nsite;
};
/* The top threads into out[0..OFFCPU_THREADS); how many. */
size_t offcpu_top(const struct offcpu *o, const struct model *m,
		  const struct names *names, struct offcpu_thread *out);
/* The call site of a folded stack, short, into buf: up to 3 kernel
 * frames below the scheduler's own (__schedule, schedule, io_schedule,
 * schedule_*, ...), leaf first, then " | " and up to 2 user frames, leaf
 * first: "anon_pipe_read < vfs_read < ksys_read | inner_fn < middle_fn". */
void offcpu_site_short(const char *stack, char *buf, size_t size);

#endif
