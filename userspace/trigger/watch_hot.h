/* The inside of trigger/watch.c that the readers' path inlines: the
 * watch's state and the handling of one record (trig_watch_record in
 * watch.h). Nothing else includes it. */
#ifndef BTR_TRIGGER_WATCH_HOT_H
#define BTR_TRIGGER_WATCH_HOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "record.h"
#include "trigger/spec.h"

struct keyheap_ent;
struct note_journal;
struct trig_hit;
struct tstate;

/* The states of the threads a record names, looked up (and their lines
 * prefetched) before the reader encodes it: a switch's prev and next, a
 * waking's or a free's thread in t[0]. */
struct trig_pre {
	struct tstate *t[2];
};

#define QUEUE_MAX 256u  /* hits waiting for the main thread */
#define PAGE_SHIFT 12u  /* threads per page of the paged table: 4096 */
#define TID_MAX (1u << 22) /* the kernel's PID_MAX_LIMIT */
#define STATE_S 0x1
#define STATE_D 0x2
#define STATE_PREEMPTED 0x100
#define PATH_FAST 0 /* trig_watch.path */
#define PATH_LEAN 1
#define PATH_ANY 2
#define RECENT_SET 256u
#define PATH_NOTE 3 /* reader threads: the records noted (notes.h) */

/* One thread's state, in two parts. What the handling of every record
 * reads and writes, 32 bytes: the times of its last switch-out, switch-in
 * and waking read (0: none yet). Two threads' such parts share a line, so
 * that a busy load's threads take half as many lines to keep in the cache
 * (with 64 bytes a thread, on hackbench, a quarter of the watch's time
 * was the stall on a first load from a thread's line that had left it
 * since that thread's last record). */
struct tstate {
	uint64_t out, in, wake;
	uint16_t rq_cpu1; /* 1 + the CPU whose queue it is counted on, 0:
			   * none (a new page is all zeros; CPU ids under
			   * TRIG_CPUS_MAX) */
	uint16_t cold;    /* what the cold part holds, COLD_*; 0: nothing
			   * (read as zeros, its line not touched) */
	/* of `out`: the record's prev_state, as it is (out_state tells it
	 * apart where it is needed: most switch-outs need not) */
	uint32_t out_raw;
};

/* What only the slow paths (watch.c) read: one off-CPU episode kept
 * apart, long enough to pass a threshold, whose other records are still
 * unread (another CPU's ring, read later). */
struct tcold {
	uint64_t p_out; /* the episode's switch-out (0: unread) */
	uint64_t p_in;  /* its switch-in (0: no episode kept) */
	/* a waking read while, as read, the thread was still in the sleep
	 * that `wake` ended: of a later sleep, whose switch-out is still
	 * unread (committed late; 0: none) */
	uint64_t ahead;
	/* of p_out: 'R' (preempted), 'S', 'D', 0 other; P_AFTER: p_out is
	 * no switch-out but a switch-in of the thread read since, before
	 * p_in: the episode's switch-out, unread, is later than it */
	uint8_t p_st;
	uint8_t p_lat; /* 1: the episode's latency was checked already */
};

/* The table: the hot parts of all threads by tid, 32 bytes each (two
 * threads of neighbouring tids share a line), then their cold parts in
 * the same order, a thread's cold part cold_off bytes past its hot part
 * (COLD): a look-up is one shift and one add. Where the one table is
 * refused, each page of the paged table is laid out the same way for its
 * 1 << PAGE_SHIFT threads. */
_Static_assert(sizeof(struct tstate) == 32 && sizeof(struct tcold) == 32,
	       "two threads' hot parts share a line");
#define COLD(w, t) ((struct tcold *)((char *)(t) + (w)->cold_off))
#define COLD_EPISODE 0x1 /* an episode kept (p_in) */
#define COLD_AHEAD 0x2   /* a waking read ahead (ahead) */
#define P_AFTER 'A'      /* tcold.p_st */

/* the one table's bytes, and a paged table's page's: mapped, not
 * allocated, so that only the parts that threads were seen in take
 * memory */
#define TABLE_BYTES ((size_t)TID_MAX * 64)
#define PAGE_BYTES ((size_t)64 << PAGE_SHIFT)

/* Per CPU: the threads waiting on its queue, counted from the lowest
 * count of the range in which a gain changes no runqueue spec (m: the
 * count less that base, unsigned; the base in the watch's rq_base), and
 * the width of that range less one: a gain to an m past the width (one
 * compare) fires a spec, or came from under the range and re-arms the
 * specs it went under (or the count had gone under 0: a thread counted
 * before its CPU was known). Losses are only counted: nothing fires on
 * one, and the re-arming waits for the next gain. The watch's array of
 * them starts with a sink, the queue of "no CPU" (rq_cpu1 0), whose width
 * holds every count: a gain is made whether the thread becomes queued or
 * not, without a branch on it (a switch's prev_state is as hard to
 * predict as its type). */
struct rq {
	uint32_t m, width;
};

/* The watch is one thread's: the reader's with one reader, the main
 * thread's with reader threads (which note their records for it,
 * notes.h). Nothing in it is locked but the notes handed over. */
struct trig_watch {
	/* what the handling of every record reads, in one cache line */
	/* thread state by tid, no hashing on the readers' path: one table
	 * of address space alone (MAP_NORESERVE), of which only the parts
	 * that threads were seen in take memory; or, where the kernel will
	 * not give that much address space uncommitted (strict overcommit),
	 * NULL and pages of the table mapped when a tid of theirs is first
	 * seen (a look-up more) */
	_Alignas(64) struct tstate *table;
	struct rq *rq1; /* per CPU, from 1: rq1[0] is the sink */
	uint64_t min_latency, min_blocked; /* the smallest thresholds */
	/* the smaller of the two: an off-CPU episode shorter than that (from
	 * switch-out to switch-in) holds neither a wait nor a sleep as long */
	uint64_t min_off;
	uint32_t rq_cpus; /* with a runqueue spec, ncpus; else 0 */
	/* how a record is watched: PATH_FAST (the one table, a runqueue
	 * spec), PATH_LEAN (the one table, none), PATH_ANY (the paged
	 * table), or PATH_NOTE (reader threads: noted, and watched by the
	 * main thread the own_path way) */
	uint8_t path, own_path;
	bool blocked, runqueue; /* some spec of each kind */
	const struct trig_spec *specs;
	uint32_t nspecs, ncpus;
	/* where the only latency spec has no comm= (what hit_latency can
	 * count inline in a storm): its index, and its mute_until, kept
	 * here too; else lat_spec UINT32_MAX, lat_mute 0 */
	uint64_t lat_mute;
	uint32_t lat_spec;
	/* the threads whose records were read of late, by tid's low bits
	 * (trig_watch_warm) */
	int32_t recent[RECENT_SET];
	struct tstate *pages[TID_MAX >> PAGE_SHIFT];
	size_t cold_off; /* COLD: TABLE_BYTES / 2, or PAGE_BYTES / 2 */
	size_t sweep_at; /* the next page trig_watch_sweep looks at */
	uint64_t min_runqueue;
	int32_t *rq_base; /* per CPU: the base of its rq's m */
	uint8_t *rq_over; /* per CPU and runqueue spec: above it */
	/* per spec: its hits that end before mute_until are not queued but
	 * counted (the main thread's doing: an action already holds the
	 * spec, or the rate limit is spent) */
	uint64_t *mute_until;
	uint8_t *mute_suppressed; /* 1: counted as suppressed, 0: merged */
	uint64_t muted[2];        /* merged, suppressed */
	struct trig_hit queue[QUEUE_MAX];
	size_t qhead, qlen;
	uint64_t overflow;
	/* with reader threads (trig_watch_readers): per reader, the time
	 * before which it has read every record (atomic); per ring, its
	 * notes (notes.c); the rings in a merge (a heap); notes handed over
	 * and not applied yet (the main thread's); notes applied out of
	 * order, or lost (atomic); the lock of the handed-over notes */
	uint64_t *frontier;
	uint32_t nreaders;
	struct note_journal *notes;
	struct keyheap_ent *note_heap;
	size_t notes_pending;
	uint64_t notes_forced, notes_lost;
	pthread_mutex_t notes_lock;
};

/* The hot path below is inlined into the reader's path, compiled for the
 * one table and for the paged one (watch_around's `fast`), with runqueue
 * counts or without (`rq`): each a constant where it is compiled. */
#define HOT static inline __attribute__((always_inline))

/* The cold paths, out of line in watch.c. */
void trig_watch_hit(struct trig_watch *w, enum trig_kind k, enum trig_kind k2,
		    int32_t tid, uint32_t cpu, uint64_t start, uint64_t end,
		    char state, const char *comm);
void trig_watch_rq_check(struct trig_watch *w, int32_t cpu, int32_t tid,
			 uint64_t ts, const char *comm);
struct tstate *trig_watch_paged(struct trig_watch *w, int32_t tid);

/* A wait from start to end: with one latency spec and no comm=, a muted
 * hit of it is counted here, with no call (on hackbench, with a trigger
 * pending, a tenth of the records end such a wait). */
HOT void hit_latency(struct trig_watch *w, int32_t tid, uint32_t cpu,
		     uint64_t start, uint64_t end, const char *comm)
{
	if (end - start < w->min_latency)
		return;
	if (end < w->lat_mute)
		w->muted[w->mute_suppressed[w->lat_spec]]++;
	else
		trig_watch_hit(w, TRIG_LATENCY, TRIG_LATENCY, tid, cpu, start,
			       end, 'R', comm);
}

HOT void hit_blocked(struct trig_watch *w, int32_t tid, uint32_t cpu,
		     uint64_t start, uint64_t end, char state,
		     const char *comm)
{
	if (end - start >= w->min_blocked)
		trig_watch_hit(w, TRIG_BLOCKED,
			       state == 'D' ? TRIG_BLOCKED_D : TRIG_BLOCKED,
			       tid, cpu, start, end, state, comm);
}

/* Queue q1 (1 + a valid CPU, or the sink) gained a thread, tid. */
HOT void rq_gain(struct trig_watch *w, uint32_t q1, int32_t tid, uint64_t ts,
		 const char *comm)
{
	struct rq *q = &w->rq1[q1];

	if (__builtin_expect(++q->m > q->width, 0))
		trig_watch_rq_check(w, (int32_t)q1 - 1, tid, ts, comm);
}

/* The thread leaves queue q1, the one it was counted on (its rq_cpu1,
 * as read): the sink's if none. */
HOT void rq_leave_from(struct trig_watch *w, struct tstate *t, uint16_t q1)
{
	w->rq1[q1].m--;
	t->rq_cpu1 = 0;
}

HOT void rq_leave(struct trig_watch *w, struct tstate *t)
{
	rq_leave_from(w, t, t->rq_cpu1);
}

/* A tid the table holds: not 0 (the idle tasks), under the kernel's limit. */
HOT bool tid_tabled(int32_t tid)
{
	return (uint32_t)tid - 1 < TID_MAX - 1;
}

/* The state of tid, its line prefetched: looked up before the reader
 * encodes the record, used after. NULL for tid 0 (the idle tasks), a tid
 * past the kernel's limit, or out of memory. A new thread's state is all
 * zeros: the table is mapped zeroed, freed threads zeroed again. This
 * one in the one table (w->table, known to be there). */
HOT struct tstate *tstate_in(struct tstate *table, int32_t tid)
{
	struct tstate *t;

	if (!tid_tabled(tid))
		return NULL;
	t = &table[(uint32_t)tid];
	__builtin_prefetch(t, 1);
	return t;
}

/* A thread read of late (its state's line warmed before the next pass,
 * trig_watch_warm): with the one table (`fast`) only, the paged one is
 * not warmed. */
HOT void note_recent(struct trig_watch *w, int32_t tid, bool fast)
{
	if (fast)
		w->recent[(uint32_t)tid & (RECENT_SET - 1)] = tid;
}

/* tstate_in the one table (w->table), or in the paged table. */
HOT struct tstate *tstate_of(struct trig_watch *w, int32_t tid)
{
	if (__builtin_expect(!w->table, 0))
		return tid_tabled(tid) ? trig_watch_paged(w, tid) : NULL;
	return tstate_in(w->table, tid);
}

/* The slow paths, out of line in watch.c: a record out of time order
 * with the thread's others, or an episode long enough to check. */
void trig_watch_slow_out(struct trig_watch *w, struct tstate *t, int32_t tid,
			 uint32_t cpu, uint64_t ts, uint32_t raw,
			 const char *comm);
void trig_watch_slow_wake(struct trig_watch *w, struct tstate *t,
			  int32_t tid, uint32_t cpu, int32_t qcpu, uint64_t ts,
			  const char *comm);
void trig_watch_slow_in(struct trig_watch *w, struct tstate *t, int32_t tid,
			uint32_t cpu, uint64_t ts, uint64_t prev_in,
			const char *comm);

/* prev_state as the watch tells it apart: 'R' (running: preempted),
 * 'S', 'D', 0 (other). */
HOT uint8_t out_state(int64_t st)
{
	if (!(st & ~(int64_t)STATE_PREEMPTED)) /* 0, or preempted */
		return 'R';
	return st == STATE_S ? 'S' : st == STATE_D ? 'D' : 0;
}

/* The thread was woken or preempted onto the queue of CPU qcpu. */
HOT void runnable(struct trig_watch *w, struct tstate *t, int32_t tid,
		  int32_t qcpu, uint64_t ts, const char *comm)
{
	if ((uint32_t)qcpu < w->rq_cpus) {
		rq_leave(w, t);
		t->rq_cpu1 = (uint16_t)(qcpu + 1);
		rq_gain(w, t->rq_cpu1, tid, ts, comm);
	}
}

/* The in-order cases inline, the others in trig_watch_slow_*: records
 * of a thread in time order (its switch-out, its waking, its switch-in)
 * cost a few compares and stores each; an off-CPU episode that may pass
 * a threshold is checked when its switch-in is read. */
HOT void on_waking(struct trig_watch *w, uint32_t cpu,
		   const struct btr_wakeup *r, struct tstate *t, bool rq)
{
	uint64_t ts = r->h.ts;

	if (__builtin_expect(ts >= t->out && t->out >= t->in &&
			     t->wake <= t->out, 1)) {
		/* off the CPU since its switch-out, read before: its waking */
		t->wake = ts;
		if (__builtin_expect(ts - t->out >= w->min_blocked, 0) &&
		    t->out && (t->out_raw == STATE_S || t->out_raw == STATE_D))
			hit_blocked(w, r->pid, cpu, t->out, ts,
				    t->out_raw == STATE_D ? 'D' : 'S', r->comm);
		if (rq)
			runnable(w, t, r->pid, r->target_cpu, ts, r->comm);
	} else {
		trig_watch_slow_wake(w, t, r->pid, cpu, r->target_cpu, ts,
				     r->comm);
	}
}

HOT void switch_out(struct trig_watch *w, uint32_t cpu,
		    const struct btr_switch *r, struct tstate *t, bool rq)
{
	uint64_t ts = r->h.ts;
	/* preempted (or running), on a CPU whose queue is counted */
	bool queued = !(r->prev_state & ~(int64_t)STATE_PREEMPTED) &
		      (cpu < w->rq_cpus);

	if (__builtin_expect(ts >= t->in && t->wake <= ts, 1)) {
		t->out = ts;
		t->out_raw = (uint32_t)r->prev_state;
		/* it ran: counted on no queue, or on this CPU's if preempted;
		 * the sink's otherwise (no branch on it). Without `rq` no
		 * thread is on any queue */
		if (!rq)
			; /* no queue counted */
		else if (w->rq_cpus) {
			uint32_t q1 = (cpu + 1) & -(uint32_t)queued;

			rq_leave(w, t);
			t->rq_cpu1 = (uint16_t)q1;
			rq_gain(w, q1, r->prev_pid, ts, r->prev_comm);
		} else {
			rq_leave(w, t);
		}
	} else {
		if (rq)
			rq_leave(w, t);
		trig_watch_slow_out(w, t, r->prev_pid, cpu, ts,
				    (uint32_t)r->prev_state, r->prev_comm);
	}
}

/* The switch-in of the thread whose state is t: its switch-in, its
 * switch-out and the queue it was counted on as they were before this
 * record in prev_in, out and q1 (read from t, perhaps before the
 * switched-out thread's state was written: see on_switch); the rest read
 * from t, which only this thread's own records change. */
HOT void switch_in_at(struct trig_watch *w, uint32_t cpu,
		      const struct btr_switch *r, struct tstate *t,
		      uint64_t prev_in, uint64_t out, uint16_t q1, bool rq)
{
	uint64_t ts = r->h.ts;

	if (rq)
		rq_leave_from(w, t, q1);
	if (ts > prev_in)
		t->in = ts;
	/* its switch-out read before (out > prev_in: a thread never seen
	 * has both 0; equal ones go the careful way), and off the CPU at
	 * most min_off (one compare: a switch-out later than ts wraps round
	 * to more): no wait nor sleep in it can pass a threshold. Else the
	 * wait runs from its waking if that is read and of this sleep
	 * (between the switch-out and ts: the sleep was checked at it),
	 * else from its switch-out (a preempted thread's, whatever wakings
	 * it had while it waited); the slow path if that may pass. */
	if (__builtin_expect(ts - out >= w->min_off || out <= prev_in, 0)) {
		uint64_t start = out, wake = t->wake;
		/* preempted (or running): its wait from its switch-out */
		bool preempted = !(t->out_raw & ~(uint32_t)STATE_PREEMPTED);

		if (wake > out && wake <= ts && !preempted)
			start = wake;
		if (ts - start < w->min_off && out > prev_in)
			; /* neither a wait nor a sleep as long */
		else if (out > prev_in && ts >= out &&
			 !(t->cold & COLD_AHEAD) &&
			 (preempted || (wake >= out && wake <= ts)))
			/* the common long wait: in order, its start read, no
			 * waking read ahead to look at. trig_watch_slow_in's
			 * first case, inline (in a storm, a tenth of the
			 * records): the two must agree. An episode kept apart
			 * is not this one's, and that case leaves it be */
			hit_latency(w, r->next_pid, cpu, start, ts,
				    r->next_comm);
		else
			trig_watch_slow_in(w, t, r->next_pid, cpu, ts,
					   prev_in, r->next_comm);
	}
}

HOT void on_free(struct trig_watch *w, struct tstate *t)
{
	rq_leave(w, t);
	/* the tid may be reused, and the sweep finds a page of freed
	 * threads zero: the cold part holds nothing where its marks are
	 * clear (episode_done zeroes it whole), and is not touched then */
	if (t->cold)
		memset(COLD(w, t), 0, sizeof(struct tcold));
	memset(t, 0, sizeof(*t));
}

HOT void on_switch(struct trig_watch *w, uint32_t cpu,
		   const struct btr_switch *sw, const struct trig_pre *p,
		   bool rq)
{
	/* next's state is read before prev's is written: its loads first,
	 * then the stores to prev's line (same fields, at another address),
	 * then switch_in on what was read. Read after those stores, as
	 * switch_out then switch_in do, the first load of next's line was
	 * the watch's costliest instruction on hackbench, prefetched or not
	 * (a prefetch some records ahead did not change it): this order
	 * read 0.973x of the reader's CPU of that one (95% interval 0.947 to
	 * 1.000), 8 rounds side by side, both with the three triggers. A
	 * switch from a thread to itself is both, in that order. */
	struct tstate *n = p->t[1];

	if (n && p->t[0] != n) {
		uint64_t in = n->in, out = n->out;
		uint16_t q1 = n->rq_cpu1;

		if (p->t[0])
			switch_out(w, cpu, sw, p->t[0], rq);
		switch_in_at(w, cpu, sw, n, in, out, q1, rq);
		return;
	}
	if (p->t[0])
		switch_out(w, cpu, sw, p->t[0], rq);
	if (n)
		switch_in_at(w, cpu, sw, n, n->in, n->out, n->rq_cpu1, rq);
}

#endif
