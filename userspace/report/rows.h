/* The tables of the report, from the model: per thread (or per process,
 * threads summed and their latency histograms merged), filtered by
 * --pid and --comm, sorted by --sort and cut to --top; per CPU; the
 * wakers of the threads that waited longest. Both outputs (text.c,
 * json.c) print these rows. */
#ifndef BTR_REPORT_ROWS_H
#define BTR_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/hist.h"
#include "report/model.h"
#include "report/names.h"
#include "report/triggers.h"
#include "stats/table.h"

enum report_sort { SORT_CPU, SORT_WAIT, SORT_LATENCY, SORT_OFFCPU };

struct report_opts {
	bool by_process;
	enum report_sort sort;
	size_t top;               /* 0: all */
	const int32_t *pids;      /* --pid: tids or pids; NULL: all */
	size_t npids;
	const char *comm;         /* --comm, NULL: all */
	size_t wakers_of;         /* how many top waiting threads */
};

/* Off-CPU time by the kernel function the sleeps blocked in. */
#define ROW_BLOCKED_TOP 3
/* Wakers shown per waiting thread, the most frequent (of WAKER_SLOTS). */
#define WAKERS_SHOWN 4
struct blocked_row {
	uint32_t fn;              /* name id */
	const char *name;
	uint64_t count, ns;
};

struct row {
	uint32_t machine;
	int32_t tid, tgid;        /* by process: tid is the pid */
	const char *name;
	uint32_t threads;         /* by process: how many */
	uint64_t cpu_ns, vol, invol, off_s, off_d;
	uint64_t lat_n, lat_sum, lat_max, p50, p90, p99;
	int64_t lat_max_ts;       /* relative to the trace's start */
	const struct thread *t;   /* by thread: the thread */
	struct blocked_row blocked[BLOCKED_SLOTS]; /* most time first */
	size_t nblocked;          /* shown: at most ROW_BLOCKED_TOP */
};

struct waker_row {
	const struct row *of;     /* the waiting thread */
	int32_t tid[WAKERS_SHOWN];
	const char *name[WAKERS_SHOWN];
	uint32_t count[WAKERS_SHOWN];
	size_t n;                 /* thread wakers */
	uint32_t hardirq, softirq; /* wakings in interrupt context */
};

struct offcpu_thread;

struct loss_row {
	const char *name;
	int64_t idx, machine, value;
};

struct report {
	const char *file, *machine_name;
	const char *sort_name;    /* cpu, wait, latency, offcpu */
	bool by_process;
	int64_t first, last;      /* event times, trace clock */
	uint64_t events;
	size_t ncpus;
	bool multi_machine;       /* rows of several machines */
	int64_t machine;          /* a section's machine, -1: every one */
	struct report *sections;  /* a trace of several machines: one
				   * report per machine, by id */
	size_t nsections;
	struct row *rows;         /* shown, sorted, cut */
	size_t nrows, total_rows;
	uint64_t total_cpu_ns;    /* of every thread, for shares */
	struct cpu_row {
		uint32_t machine, cpu;
		const struct cpu_stat *s;
	} *cpus;
	size_t ncpu_rows;
	struct waker_row *wakers;
	size_t nwakers;
	struct loss_row *losses;  /* what was lost, first in the report */
	size_t nlosses;
	bool lower_bounds;        /* something was lost */
	struct hist *phist;       /* by process: merged histograms */
	size_t nphist;
	/* off-CPU call sites (offcpu.h) of the whole trace, the caller's */
	bool has_stacks;          /* the trace has --callstacks' samples */
	const struct offcpu_thread *offcpu;
	size_t noffcpu;
	const struct trig_seen *triggers; /* the trace's, or NULL */
};

/* Builds the rows of machine `machine`'s threads and CPUs (its events
 * and time range from its CPUs), or of every machine (-1); the model,
 * names and stats stay owned by the caller and must outlive r. Returns 0
 * or -1 (out of memory). */
int report_build(struct report *r, const struct report_opts *o,
		 const struct model *m, const struct names *names,
		 const struct merge *mg, const struct stat_table *st,
		 int64_t machine);
void report_free(struct report *r);

/* Whether thread t, named name, is one of o's (--pid, --comm). */
bool report_wants(const struct report_opts *o, const struct thread *t,
		  const char *name);

int report_print_text(const struct report *r);
int report_print_json(const struct report *r);

#endif
