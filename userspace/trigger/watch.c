/* Trigger conditions from scheduler records (watch.h). */
#include "trigger/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "util/hashmap.h"

#define STRIPES 64u     /* locks over thread ids */
#define QUEUE_MAX 256u  /* hits waiting for the main thread */

#define STATE_S 0x1
#define STATE_D 0x2
#define STATE_PREEMPTED 0x100

struct tstate {
	uint64_t wait;     /* runnable since (0: not waiting) */
	uint64_t in_pend;  /* a switch-in no runnable time was seen for */
	uint64_t in_floor; /* its thread's last switch-out before it */
	uint64_t last_in, last_out;
	uint64_t sleep;    /* went to sleep at (0: not sleeping) */
	uint64_t sleep_until; /* a switch-in after it was read: its waking
			       * is no later (0: none read) */
	uint64_t wake_pend; /* a waking seen before its sleep */
	int32_t rq_cpu;    /* the queue it is counted on, -1: none */
	char sleep_state;
};

struct stripe {
	_Alignas(64) pthread_mutex_t lock;
	struct hmap threads; /* tid -> struct tstate */
};

struct trig_watch {
	const struct trig_spec *specs;
	uint32_t nspecs, ncpus;
	bool locked;
	bool latency, blocked, runqueue; /* some spec of each kind */
	uint64_t min_latency, min_blocked; /* the smallest thresholds */
	struct stripe stripes[STRIPES];
	int32_t *rq;      /* threads waiting per CPU (atomic) */
	uint8_t *rq_over; /* per CPU and runqueue spec: above it (atomic) */
	pthread_mutex_t qlock;
	struct trig_hit queue[QUEUE_MAX];
	size_t qhead, qlen;
	uint64_t overflow;
};

struct trig_watch *trig_watch_new(const struct trig_spec *specs, uint32_t n,
				  uint32_t ncpus, bool locked)
{
	struct trig_watch *w = calloc(1, sizeof(*w));
	uint64_t seed = hmap_random_seed();
	uint32_t i;

	if (!w)
		return NULL;
	w->specs = specs;
	w->nspecs = n;
	w->ncpus = ncpus;
	w->locked = locked;
	w->min_latency = w->min_blocked = UINT64_MAX;
	for (i = 0; i < n; i++) {
		switch (specs[i].kind) {
		case TRIG_LATENCY:
			w->latency = true;
			if (specs[i].threshold < w->min_latency)
				w->min_latency = specs[i].threshold;
			break;
		case TRIG_BLOCKED:
		case TRIG_BLOCKED_D:
			w->blocked = true;
			if (specs[i].threshold < w->min_blocked)
				w->min_blocked = specs[i].threshold;
			break;
		case TRIG_RUNQUEUE:
			w->runqueue = true;
			break;
		case TRIG_NAMED:
			break;
		}
	}
	for (i = 0; i < STRIPES; i++) {
		pthread_mutex_init(&w->stripes[i].lock, NULL);
		hmap_init(&w->stripes[i].threads, sizeof(int32_t),
			  sizeof(struct tstate), seed);
	}
	pthread_mutex_init(&w->qlock, NULL);
	w->rq = calloc(ncpus ? ncpus : 1, sizeof(*w->rq));
	w->rq_over = calloc((size_t)(ncpus ? ncpus : 1) * (n ? n : 1), 1);
	if (!w->rq || !w->rq_over) {
		trig_watch_free(w);
		return NULL;
	}
	return w;
}

void trig_watch_free(struct trig_watch *w)
{
	uint32_t i;

	if (!w)
		return;
	for (i = 0; i < STRIPES; i++) {
		hmap_free(&w->stripes[i].threads);
		pthread_mutex_destroy(&w->stripes[i].lock);
	}
	pthread_mutex_destroy(&w->qlock);
	free(w->rq);
	free(w->rq_over);
	free(w);
}

static void push(struct trig_watch *w, const struct trig_hit *h)
{
	pthread_mutex_lock(&w->qlock);
	if (w->qlen == QUEUE_MAX)
		w->overflow++;
	else
		w->queue[(w->qhead + w->qlen++) % QUEUE_MAX] = *h;
	pthread_mutex_unlock(&w->qlock);
}

size_t trig_watch_take(struct trig_watch *w, struct trig_hit *out, size_t max,
		       uint64_t *overflow)
{
	size_t n = 0;

	pthread_mutex_lock(&w->qlock);
	while (n < max && w->qlen) {
		out[n++] = w->queue[w->qhead];
		w->qhead = (w->qhead + 1) % QUEUE_MAX;
		w->qlen--;
	}
	*overflow += w->overflow;
	w->overflow = 0;
	pthread_mutex_unlock(&w->qlock);
	return n;
}

size_t trig_watch_threads(struct trig_watch *w)
{
	size_t n = 0, i;

	for (i = 0; i < STRIPES; i++) {
		pthread_mutex_lock(&w->stripes[i].lock);
		n += w->stripes[i].threads.n;
		pthread_mutex_unlock(&w->stripes[i].lock);
	}
	return n;
}

static bool comm_ok(const struct trig_spec *s, const char *comm)
{
	return !s->comm[0] || !strncmp(s->comm, comm, TRIG_COMM_LEN);
}

/* Hits of the specs of kind k (or k2) that value passes. */
static void check(struct trig_watch *w, enum trig_kind k, enum trig_kind k2,
		  const struct trig_hit *base)
{
	struct trig_hit h = *base;
	uint32_t i;

	for (i = 0; i < w->nspecs; i++) {
		const struct trig_spec *s = &w->specs[i];

		if ((s->kind != k && s->kind != k2) || h.value < s->threshold ||
		    !comm_ok(s, h.comm))
			continue;
		h.spec = i;
		push(w, &h);
	}
}

static void hit_latency(struct trig_watch *w, int32_t tid, uint32_t cpu,
			uint64_t start, uint64_t end, const char *comm)
{
	struct trig_hit h = { .tid = tid, .cpu = cpu, .start = start,
			      .end = end, .value = end - start, .state = 'R' };

	if (h.value < w->min_latency)
		return;
	memcpy(h.comm, comm, TRIG_COMM_LEN);
	check(w, TRIG_LATENCY, TRIG_LATENCY, &h);
}

static void hit_blocked(struct trig_watch *w, int32_t tid, uint32_t cpu,
			uint64_t start, uint64_t end, char state,
			const char *comm)
{
	struct trig_hit h = { .tid = tid, .cpu = cpu, .start = start,
			      .end = end, .value = end - start, .state = state };

	if (h.value < w->min_blocked)
		return;
	memcpy(h.comm, comm, TRIG_COMM_LEN);
	check(w, TRIG_BLOCKED, state == 'D' ? TRIG_BLOCKED_D : TRIG_BLOCKED, &h);
}

/* The queue of cpu gained (+1) or lost (-1) a thread; a runqueue spec
 * fires when the count passes it, once until it is back under. */
static void rq_add(struct trig_watch *w, int32_t cpu, int d, int32_t tid,
		   uint64_t ts, const char *comm)
{
	int32_t n;
	uint32_t i;

	if (cpu < 0 || (uint32_t)cpu >= w->ncpus)
		return;
	n = __atomic_add_fetch(&w->rq[cpu], d, __ATOMIC_RELAXED);
	if (n < 0) /* a thread counted before its CPU was known */
		__atomic_store_n(&w->rq[cpu], n = 0, __ATOMIC_RELAXED);
	for (i = 0; i < w->nspecs; i++) {
		const struct trig_spec *s = &w->specs[i];
		uint8_t *over = &w->rq_over[(size_t)cpu * w->nspecs + i];
		struct trig_hit h = { .spec = i, .tid = tid, .cpu = (uint32_t)cpu,
				      .start = ts, .end = ts, .value = (uint64_t)n,
				      .state = 'R' };

		if (s->kind != TRIG_RUNQUEUE)
			continue;
		if ((uint64_t)n <= s->threshold) {
			__atomic_store_n(over, 0, __ATOMIC_RELAXED);
			continue;
		}
		if (d < 0 || __atomic_exchange_n(over, 1, __ATOMIC_RELAXED) ||
		    !comm_ok(s, comm))
			continue;
		memcpy(h.comm, comm, TRIG_COMM_LEN);
		push(w, &h);
	}
}

/* The thread leaves the queue it was counted on. */
static void rq_leave(struct trig_watch *w, struct tstate *t)
{
	if (t->rq_cpu >= 0 && w->runqueue)
		rq_add(w, t->rq_cpu, -1, 0, 0, "");
	t->rq_cpu = -1;
}

static struct stripe *lock_tid(struct trig_watch *w, int32_t tid)
{
	struct stripe *s = &w->stripes[(uint32_t)tid % STRIPES];

	if (w->locked)
		pthread_mutex_lock(&s->lock);
	return s;
}

static void unlock(struct trig_watch *w, struct stripe *s)
{
	if (w->locked)
		pthread_mutex_unlock(&s->lock);
}

static struct tstate *thread(struct stripe *s, int32_t tid)
{
	bool added;
	struct tstate *t = hmap_insert(&s->threads, &tid, &added);

	if (t && added)
		t->rq_cpu = -1;
	return t;
}

/* tid became runnable at ts on the queue of CPU qcpu (a waking or a
 * preemption seen on CPU cpu). */
static void runnable(struct trig_watch *w, struct tstate *t, int32_t tid,
		     uint32_t cpu, int32_t qcpu, uint64_t ts, const char *comm)
{
	if (t->in_pend && t->in_floor <= ts && ts <= t->in_pend) {
		/* its switch-in was read first */
		hit_latency(w, tid, cpu, ts, t->in_pend, comm);
		t->in_pend = 0;
		return;
	}
	/* older than a switch-in read, which ended it, or than a switch-out
	 * read, which shows it running after it (a waking of a running
	 * thread read late) */
	if (ts <= t->last_in || ts < t->last_out)
		return;
	if (!t->wait)
		t->wait = ts;
	if (w->runqueue) {
		rq_leave(w, t);
		t->rq_cpu = qcpu;
		rq_add(w, qcpu, 1, tid, ts, comm);
	}
}

static void on_waking(struct trig_watch *w, uint32_t cpu,
		      const struct btr_wakeup *r)
{
	struct stripe *s = lock_tid(w, r->pid);
	struct tstate *t = thread(s, r->pid);
	uint64_t ts = r->h.ts;

	if (!t)
		goto out;
	if (w->blocked) {
		if (t->sleep && ts >= t->sleep &&
		    (!t->sleep_until || ts <= t->sleep_until)) {
			hit_blocked(w, r->pid, cpu, t->sleep, ts,
				    t->sleep_state, r->comm);
			t->sleep = 0;
		} else if (ts > t->last_out) {
			t->wake_pend = ts; /* its sleep may come later */
		}
	}
	if (w->latency || w->runqueue)
		runnable(w, t, r->pid, cpu, r->target_cpu, ts, r->comm);
out:
	unlock(w, s);
}

static void switch_out(struct trig_watch *w, uint32_t cpu,
		       const struct btr_switch *r)
{
	struct stripe *s = lock_tid(w, r->prev_pid);
	struct tstate *t = thread(s, r->prev_pid);
	uint64_t ts = r->h.ts;
	int64_t st = r->prev_state;

	if (!t)
		goto out;
	if (t->wait && t->wait <= ts)
		t->wait = 0; /* it was running: that wait is over */
	if (ts > t->last_out)
		t->last_out = ts;
	rq_leave(w, t);
	if (st == 0 || st == STATE_PREEMPTED) {
		if (w->latency || w->runqueue)
			runnable(w, t, r->prev_pid, cpu, (int32_t)cpu, ts,
				 r->prev_comm);
	} else if (w->blocked && (st == STATE_S || st == STATE_D)) {
		char state = st == STATE_D ? 'D' : 'S';

		if (t->wake_pend >= ts) {
			hit_blocked(w, r->prev_pid, cpu, ts, t->wake_pend,
				    state, r->prev_comm);
			t->wake_pend = 0;
		} else {
			t->sleep = ts;
			t->sleep_until = 0;
			t->sleep_state = state;
			t->wake_pend = 0;
		}
	}
out:
	unlock(w, s);
}

static void switch_in(struct trig_watch *w, uint32_t cpu,
		      const struct btr_switch *r)
{
	struct stripe *s = lock_tid(w, r->next_pid);
	struct tstate *t = thread(s, r->next_pid);
	uint64_t ts = r->h.ts;

	if (!t)
		goto out;
	rq_leave(w, t);
	if (t->sleep && t->sleep <= ts && !t->sleep_until)
		t->sleep_until = ts;
	if (t->wait && t->wait <= ts) {
		hit_latency(w, r->next_pid, cpu, t->wait, ts, r->next_comm);
		t->wait = 0;
	} else if (w->latency) {
		t->in_pend = ts;
		t->in_floor = t->last_out;
	}
	if (ts > t->last_in)
		t->last_in = ts;
out:
	unlock(w, s);
}

static void on_exit_record(struct trig_watch *w, int32_t tid)
{
	struct stripe *s = lock_tid(w, tid);
	struct tstate *t = hmap_find(&s->threads, &tid);

	if (t) {
		rq_leave(w, t);
		hmap_remove(&s->threads, &tid);
	}
	unlock(w, s);
}

void trig_watch_record(struct trig_watch *w, uint32_t cpu, const void *rec,
		       size_t len)
{
	const struct btr_hdr *h = rec;

	switch (h->type) {
	case BTR_REC_SWITCH:
	case BTR_REC_SWITCH_BLOCKED: {
		const struct btr_switch *r = rec;

		if (len < sizeof(*r))
			return;
		if (r->prev_pid > 0)
			switch_out(w, cpu, r);
		if (r->next_pid > 0)
			switch_in(w, cpu, r);
		break;
	}
	case BTR_REC_WAKING:
	case BTR_REC_WAKEUP_NEW:
		if (len >= sizeof(struct btr_wakeup) &&
		    ((const struct btr_wakeup *)rec)->pid > 0)
			on_waking(w, cpu, rec);
		break;
	case BTR_REC_FREE:
		if (len >= sizeof(struct btr_exit))
			on_exit_record(w, ((const struct btr_exit *)rec)->pid);
		break;
	default:
		break;
	}
}
