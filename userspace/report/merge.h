/* Events of all CPUs in one timestamp order, in bounded memory. Each CPU
 * (of each machine) has a queue of its events, which come in time order
 * (a CPU's bundles follow each other in the file); the queues interleave
 * in time because a recorder writes every CPU's bundle at each drain.
 * The merge hands events out in global time order (merge_take) up to a
 * watermark: the latest time every CPU has reached. The CPUs are those the
 * trace's SystemInfo declares (num_cpus), which the watermark waits for
 * even before their first event: a recorder commits each CPU's chunk when
 * it is full, so a quiet CPU's events can come long after the others' in
 * the file. Without a declaration, a CPU not seen yet may bring events
 * up to 250 ms older than the latest seen. The oldest events are handed
 * out anyway when more than MERGE_MAX_PENDING wait, so memory stays
 * bounded on any input; an event that comes after its turn has passed is
 * counted (reordered) and taken at the time reached.
 *
 * Example: CPU 0 has queued events at 10 and 30, CPU 1 at 20 and 25. The
 * watermark (the latest time seen being far ahead) is min(30, 25) = 25: 10, 20, 25 go out; 30 waits until CPU 1
 * reaches 30 or the window passes. On equal times the CPU of the last
 * event goes on: with CPU 0 at 5, CPU 1 at 3 and 5, the order is 3 and 5
 * of CPU 1, then 5 of CPU 0. */
#ifndef BTR_REPORT_MERGE_H
#define BTR_REPORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/event.h"
#include "util/hashmap.h"

#define MERGE_MAX_DECLARED 8192u
#define MERGE_NEW_CPU_NS 250000000LL
#define MERGE_MAX_PENDING (8u << 20)

struct cpu_queue {
	/* its events: [p, end) in the ring, then rest more from the ring's
	 * start (p == end: none) */
	const struct rev *p, *end;
	size_t rest;
	struct rev *v;       /* ring of cap (a power of two) events */
	size_t cap;
	int64_t last;        /* time of the latest event queued */
	uint32_t machine, cpu;
};

struct merge_node;

struct merge {
	struct cpu_queue *q;
	size_t nq, capq;
	/* A winner tree of the queues' heads (merge.c): leaf i, at
	 * tree[leaves + i], is queue i's (head time, i), after every event
	 * when it has none; node j < leaves the least of its children 2j and
	 * 2j + 1; node 1 the least of all. Taking an event replays one
	 * leaf's path, log2(leaves) steps without branches. leaves is a
	 * power of two, at least nq; the padding leaves have no event. */
	struct merge_node *tree;
	size_t leaves;
	struct hmap idx;     /* (machine, cpu) -> queue index */
	size_t pending;
	size_t max_pending;  /* MERGE_MAX_PENDING (tests lower it) */
	int64_t max_ts;      /* latest time queued anywhere */
	int64_t released;    /* latest time handed out */
	bool cpus_declared;  /* by a SystemInfo: wait for each of them */
	uint64_t reordered;  /* events earlier than their CPU's last one */
	size_t last_q;       /* the queue of the last event handed out, of
			      * any walk; SIZE_MAX: none yet */
};

/* Handing out: the events the watermark allows, in global time order,
 * a batch at a time into an array the caller gives:
 *
 *	struct merge_walk w;
 *	struct merge_ev ev[N];
 *	size_t n, i;
 *
 *	merge_begin(m, all, &w);
 *	while ((n = merge_take(m, &w, ev, N)))
 *		for (i = 0; i < n; i++)
 *			... ev[i].e, of queue ev[i].qi ...
 *
 * The order: the queue of the last event taken goes on while its head is
 * no later than every other queue's; otherwise the next event is the
 * head of the least (time, queue index). The last event may be of an
 * earlier walk (merge.last_q): trace_processor's sorter has no walks,
 * and on equal times its run of one queue goes on whatever the input's
 * flushes (a walk that started with the least queue instead once put a
 * waking before a switch-out of the same time that trace_processor took
 * first). A walk stops at the first event later than the watermark,
 * unless more than max_pending events wait: then the earliest go anyway.
 * The events stay valid until the next merge_push; nothing may be pushed
 * during a walk. */
struct merge_walk {
	int64_t wm;            /* the watermark of the walk */
};

struct merge_ev {
	const struct rev *e;
	size_t qi;             /* its queue */
};

void merge_init(struct merge *m);
void merge_free(struct merge *m);
/* The queue index of (machine, cpu); -1 when out of memory. */
long merge_queue(struct merge *m, uint32_t machine, uint32_t cpu);
/* CPUs 0..ncpus-1 of machine exist (SystemInfo.num_cpus): the watermark
 * waits for each. Returns 0 or -1 (out of memory). */
int merge_declare_cpus(struct merge *m, uint32_t machine, uint32_t ncpus);
/* Queues the events of k (at most MERGE_MAX_RUNS) runs v[r][0..n[r]),
 * each in time order, into queue qi, merged in time order (on equal
 * times the earlier run first). An event earlier than the queue's last
 * one, or than the latest handed out, is queued at that time (counted in
 * reordered). Returns 0 or -1 (out of memory). */
#define MERGE_MAX_RUNS 3
int merge_push(struct merge *m, size_t qi, const struct rev *const *v,
	       const size_t *n, size_t k);
/* Starts a walk of what the watermark allows; everything with all =
 * true. */
void merge_begin(struct merge *m, bool all, struct merge_walk *w);
/* The next events of the walk, at most max, into out; how many (0: the
 * walk is over). */
size_t merge_take(struct merge *m, struct merge_walk *w, struct merge_ev *out,
		  size_t max);

#endif
