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

struct trig_hit;
struct tstate;

/* The states of the threads a record names, looked up (and their lines
 * prefetched) before the reader encodes it: a switch's prev and next, a
 * waking's or a free's thread in t[0]. */
struct trig_pre {
	struct tstate *t[2];
};

#define STRIPES 64u     /* locks over thread ids */
#define QUEUE_MAX 256u  /* hits waiting for the main thread */
#define PAGE_SHIFT 12u  /* threads per page of the thread table: 4096 */
#define TID_MAX (1u << 22) /* the kernel's PID_MAX_LIMIT */
/* a page's bytes: mapped, not allocated, so that only the parts of it
 * that threads were seen in take memory */
#define PAGE_BYTES (sizeof(struct tstate) << PAGE_SHIFT)

#define STATE_S 0x1
#define STATE_D 0x2
#define STATE_PREEMPTED 0x100

/* One thread, in one cache line. */
struct tstate {
	uint64_t wait;     /* runnable since (0: not waiting) */
	uint64_t last_out; /* its last switch-out read */
	uint64_t sleep;    /* went to sleep at, its waking unread (0: not) */
	uint64_t wake_pend; /* a waking read before the switch-out of its
			     * sleep, which pairs it then (0: none; never
			     * with sleep set) */
	/* A wait or a sleep whose end was read before its start (another
	 * CPU's ring read later) and that may pass a threshold: kept apart,
	 * so that the thread's short cycles read in the meantime do not
	 * overwrite it. */
	uint64_t lat_in;   /* a switch-in with no known runnable time (0:
			    * none), whose waking is at most lat_floor_us
			    * before it (since the switch-out before it) */
	uint64_t long_sleep; /* a sleep ended by a switch-in long_until_us
			      * after it, its waking unread (0: none) */
	uint32_t lat_floor_us, long_until_us;
	int32_t rq_cpu1;   /* 1 + the CPU whose queue it is counted on, 0:
			    * none (a new page is all zeros) */
	int32_t states;    /* 'S' or 'D': of sleep (byte 0), of long_sleep
			    * (byte 1) (not chars: a char store would alias
			    * every field of the watch) */
} __attribute__((aligned(64)));

struct stripe {
	_Alignas(64) pthread_mutex_t lock;
};

struct trig_watch {
	const struct trig_spec *specs;
	uint32_t nspecs, ncpus;
	bool locked;
	bool blocked, runqueue; /* some spec of each kind */
	uint64_t min_latency, min_blocked; /* the smallest thresholds */
	struct stripe stripes[STRIPES];
	/* thread state by tid, in pages allocated when a tid of theirs is
	 * first seen (a flat look-up: no hashing on the readers' path) */
	struct tstate *pages[TID_MAX >> PAGE_SHIFT];
	pthread_mutex_t page_lock;
	size_t npages;
	uint64_t min_runqueue;
	/* per CPU: the threads waiting on its queue, and the range of counts
	 * (lo, hi] in which no runqueue spec changes: a gain past hi fires
	 * one, a gain from lo or under re-arms the specs it went under (or
	 * the count had gone under 0: a thread counted before its CPU was
	 * known). Losses are only counted: nothing fires on one, and the
	 * re-arming waits for the next gain. Atomic with reader threads. */
	struct rq {
		int32_t n, lo, hi, pad;
	} *rq;
	uint8_t *rq_over; /* per CPU and runqueue spec: above it (atomic) */
	/* per spec: its hits that end before mute_until are not queued but
	 * counted (the main thread's doing: an action already holds the
	 * spec, or the rate limit is spent); atomic */
	uint64_t *mute_until;
	uint8_t *mute_suppressed; /* 1: counted as suppressed, 0: merged */
	uint64_t muted[2];        /* merged, suppressed */
	pthread_mutex_t qlock;
	struct trig_hit queue[QUEUE_MAX];
	size_t qhead, qlen;
	uint64_t overflow;
};

/* The hot path below is written once and compiled twice, for one reader
 * (no lock, plain counters) and for reader threads (a lock a stripe of
 * thread ids, atomic counters): `locked` is a constant in each. */
#define HOT static inline __attribute__((always_inline))

/* The cold paths, out of line in watch.c. */
void trig_watch_hit(struct trig_watch *w, enum trig_kind k, enum trig_kind k2,
		    int32_t tid, uint32_t cpu, uint64_t start, uint64_t end,
		    char state, const char *comm);
void trig_watch_rq_check(struct trig_watch *w, int32_t cpu, int32_t n,
			 int32_t tid, uint64_t ts, const char *comm);
struct tstate *trig_watch_map_page(struct trig_watch *w, uint32_t p);

HOT void hit_latency(struct trig_watch *w, int32_t tid, uint32_t cpu,
			       uint64_t start, uint64_t end, const char *comm)
{
	if (end - start >= w->min_latency)
		trig_watch_hit(w, TRIG_LATENCY, TRIG_LATENCY, tid, cpu, start, end, 'R',
		    comm);
}

HOT void hit_blocked(struct trig_watch *w, int32_t tid,
			       uint32_t cpu, uint64_t start, uint64_t end,
			       char state, const char *comm)
{
	if (end - start >= w->min_blocked)
		trig_watch_hit(w, TRIG_BLOCKED,
		    state == 'D' ? TRIG_BLOCKED_D : TRIG_BLOCKED, tid, cpu,
		    start, end, state, comm);
}

/* The queue of cpu (a valid one) gained a thread, tid. */
HOT void rq_gain(struct trig_watch *w, int32_t cpu, int32_t tid, uint64_t ts,
		 const char *comm, bool locked)
{
	struct rq *q = &w->rq[cpu];
	int32_t n;

	if (locked)
		n = __atomic_add_fetch(&q->n, 1, __ATOMIC_RELAXED);
	else
		n = ++q->n;
	if (n - 1 <= __atomic_load_n(&q->lo, __ATOMIC_RELAXED) ||
	    n > __atomic_load_n(&q->hi, __ATOMIC_RELAXED))
		trig_watch_rq_check(w, cpu, n, tid, ts, comm);
}

/* The thread leaves the queue it was counted on. */
HOT void rq_leave(struct trig_watch *w, struct tstate *t, bool locked)
{
	if (t->rq_cpu1) {
		if (locked)
			__atomic_sub_fetch(&w->rq[t->rq_cpu1 - 1].n, 1,
					   __ATOMIC_RELAXED);
		else
			w->rq[t->rq_cpu1 - 1].n--;
		t->rq_cpu1 = 0;
	}
}

/* The state of tid (its page mapped on first sight), its line prefetched:
 * looked up before the reader encodes the record, used after. NULL for
 * tid 0 (the idle tasks), a tid past the kernel's limit, or out of
 * memory. A new thread's state is all zeros: pages are mapped zeroed,
 * freed threads zeroed again. */
HOT struct tstate *tstate_of(struct trig_watch *w, int32_t tid)
{
	struct tstate *page, *t;

	if ((uint32_t)tid - 1 >= TID_MAX - 1)
		return NULL;
	page = __atomic_load_n(&w->pages[(uint32_t)tid >> PAGE_SHIFT],
			       __ATOMIC_ACQUIRE);
	if (__builtin_expect(!page, 0) &&
	    !(page = trig_watch_map_page(w, (uint32_t)tid >> PAGE_SHIFT)))
		return NULL;
	t = &page[(uint32_t)tid & ((1u << PAGE_SHIFT) - 1)];
	__builtin_prefetch(t, 1);
	return t;
}

/* Locks tid's stripe with `locked`. */
HOT void hold(struct trig_watch *w, int32_t tid, bool locked)
{
	if (locked)
		pthread_mutex_lock(&w->stripes[(uint32_t)tid % STRIPES].lock);
}

HOT void release(struct trig_watch *w, int32_t tid, bool locked)
{
	if (locked)
		pthread_mutex_unlock(&w->stripes[(uint32_t)tid % STRIPES].lock);
}

/* A span in microseconds, rounded up: bounds kept in 32 bits (71
 * minutes at most, a longer one taken as that). */
HOT uint32_t span_us(uint64_t from, uint64_t to)
{
	uint64_t us = (to - from + 999) / 1000;

	return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* tid became runnable at ts on the queue of CPU qcpu (a waking or a
 * preemption seen on CPU cpu). */
HOT void runnable(struct trig_watch *w, struct tstate *t, int32_t tid,
		  uint32_t cpu, int32_t qcpu, uint64_t ts, const char *comm,
		  bool locked)
{
	if (__builtin_expect(t->lat_in != 0, 0) && ts <= t->lat_in &&
	    t->lat_in - ts <= (uint64_t)t->lat_floor_us * 1000) {
		/* its switch-in was read first */
		hit_latency(w, tid, cpu, ts, t->lat_in, comm);
		t->lat_in = 0;
		return;
	}
	/* older than a switch-out read, which shows it running after it (a
	 * waking of a running thread read late) */
	if (ts < t->last_out)
		return;
	if (!t->wait)
		t->wait = ts;
	if (w->runqueue && (uint32_t)qcpu < w->ncpus) {
		rq_leave(w, t, locked);
		t->rq_cpu1 = qcpu + 1;
		rq_gain(w, qcpu, tid, ts, comm, locked);
	}
}

HOT void on_waking(struct trig_watch *w, uint32_t cpu,
		   const struct btr_wakeup *r, struct tstate *t, bool locked)
{
	uint64_t ts = r->h.ts;

	hold(w, r->pid, locked);
	if (t->sleep && ts >= t->sleep) {
		hit_blocked(w, r->pid, cpu, t->sleep, ts, (char)t->states,
			    r->comm);
		t->sleep = 0;
	} else if (__builtin_expect(t->long_sleep != 0, 0) &&
		   ts >= t->long_sleep &&
		   ts - t->long_sleep <= (uint64_t)t->long_until_us * 1000) {
		hit_blocked(w, r->pid, cpu, t->long_sleep, ts,
			    (char)(t->states >> 8), r->comm);
		t->long_sleep = 0;
	} else if (ts > t->last_out) {
		/* its sleep's switch-out may come later (a waking older than
		 * the last switch-out read woke the thread before it ran) */
		t->wake_pend = ts;
	}
	runnable(w, t, r->pid, cpu, r->target_cpu, ts, r->comm, locked);
	release(w, r->pid, locked);
}

HOT void switch_out(struct trig_watch *w, uint32_t cpu,
		    const struct btr_switch *r, struct tstate *t, bool locked)
{
	uint64_t ts = r->h.ts;
	int64_t st = r->prev_state;

	hold(w, r->prev_pid, locked);
	if (t->wait <= ts)
		t->wait = 0; /* it was running: that wait is over */
	if (ts > t->last_out)
		t->last_out = ts;
	rq_leave(w, t, locked);
	if (st == 0 || st == STATE_PREEMPTED) {
		runnable(w, t, r->prev_pid, cpu, (int32_t)cpu, ts, r->prev_comm,
			 locked);
	} else if (w->blocked && (st == STATE_S || st == STATE_D)) {
		int32_t state = st == STATE_D ? 'D' : 'S';

		if (t->wake_pend >= ts) { /* its waking, read first */
			hit_blocked(w, r->prev_pid, cpu, ts, t->wake_pend,
				    (char)state, r->prev_comm);
		} else {
			t->sleep = ts;
			t->states = (t->states & ~0xff) | state;
		}
		t->wake_pend = 0;
	}
	release(w, r->prev_pid, locked);
}

HOT void switch_in(struct trig_watch *w, uint32_t cpu,
		   const struct btr_switch *r, struct tstate *t, bool locked)
{
	uint64_t ts = r->h.ts;

	hold(w, r->next_pid, locked);
	rq_leave(w, t, locked);
	if (t->sleep && t->sleep <= ts) {
		/* it runs again, its waking unread: a sleep that may be long
		 * goes apart, the thread's next sleeps may come first */
		if (ts - t->sleep >= w->min_blocked) {
			t->long_sleep = t->sleep;
			t->long_until_us = span_us(t->sleep, ts);
			t->states = (t->states & 0xff) | (t->states & 0xff) << 8;
		}
		t->sleep = 0;
	}
	if (t->wait && t->wait <= ts) {
		hit_latency(w, r->next_pid, cpu, t->wait, ts, r->next_comm);
		t->wait = 0;
	} else if (t->last_out && ts - t->last_out >= w->min_latency) {
		/* a long run since its switch-out, its runnable time unread:
		 * a wait that may be long */
		t->lat_in = ts;
		t->lat_floor_us = span_us(t->last_out, ts);
	}
	release(w, r->next_pid, locked);
}

HOT void on_free(struct trig_watch *w, int32_t tid, struct tstate *t,
		 bool locked)
{
	hold(w, tid, locked);
	rq_leave(w, t, locked);
	memset(t, 0, sizeof(*t)); /* the tid may be reused */
	release(w, tid, locked);
}

HOT void on_switch(struct trig_watch *w, uint32_t cpu,
		   const struct btr_switch *sw, const struct trig_pre *p,
		   bool locked)
{
	if (p->t[0])
		switch_out(w, cpu, sw, p->t[0], locked);
	if (p->t[1])
		switch_in(w, cpu, sw, p->t[1], locked);
}

#endif
