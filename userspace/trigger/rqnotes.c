/* The runqueue counts with reader threads, from notes of the rings'
 * records merged in time order (see rqnotes.h). The model is the one the
 * one-reader watch keeps in its thread states (watch_hot.h: runnable,
 * switch_out, switch_in_at, on_free), on records in time order. */
#include "trigger/rqnotes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trigger/watch.h"
#include "util/grow.h"
#include "util/keyheap.h"

/* Notes handed over and waiting for a slow reader, at most (40 bytes
 * each: 40 MiB), whatever the CPU count: past it they are applied in
 * the order they have. */
#define NOTES_PENDING_MAX ((size_t)1 << 20)

/* A thread's note_state: 1 + the CPU whose queue it is counted on (0:
 * none), on a CPU, woken since its switch-out. */
#define NS_QUEUE 0xffffu
#define NS_ON_CPU (1u << 16)
#define NS_WOKEN (1u << 17)
#define NOTE_STATE_BYTES ((size_t)TID_MAX * sizeof(uint32_t))

int rqnotes_init(struct trig_watch *w)
{
	void *m;

	w->notes = aligned_alloc(_Alignof(struct rq_journal),
				 (size_t)(w->ncpus ? w->ncpus : 1) *
					 sizeof(*w->notes));
	if (w->notes) /* rqnotes_free reads it */
		memset(w->notes, 0, (size_t)w->ncpus * sizeof(*w->notes));
	w->note_heap = calloc(w->ncpus ? w->ncpus : 1,
			      sizeof(*w->note_heap));
	m = mmap(NULL, NOTE_STATE_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	w->note_state = m == MAP_FAILED ? NULL : m;
	if (!w->notes || !w->note_heap || !w->note_state) {
		rqnotes_free(w);
		return -ENOMEM;
	}
	return 0;
}

void rqnotes_free(struct trig_watch *w)
{
	uint32_t c;

	for (c = 0; w->notes && c < w->ncpus; c++) {
		free(w->notes[c].local.v);
		free(w->notes[c].shared.v);
	}
	free(w->notes);
	free(w->note_heap);
	if (w->note_state)
		munmap(w->note_state, NOTE_STATE_BYTES);
	w->notes = NULL;
	w->note_heap = NULL;
	w->note_state = NULL;
}

/* Room for k more notes in v; false: out of memory. */
static bool room(struct rq_notes *v, size_t k)
{
	return !grow_array((void **)&v->v, &v->cap, v->n + k, sizeof(*v->v),
			   256);
}

/* A new note of CPU cpu's ring (NULL: out of memory, counted). */
static struct rq_note *note(struct trig_watch *w, uint32_t cpu)
{
	struct rq_notes *v;

	if (cpu >= w->ncpus)
		return NULL;
	v = &w->notes[cpu].local;
	if (!room(v, 1)) {
		__atomic_add_fetch(&w->notes_lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return &v->v[v->n++];
}

void rqnotes_switch(struct trig_watch *w, uint32_t cpu,
		    const struct btr_switch *r)
{
	struct rq_note *n = note(w, cpu);

	if (!n)
		return;
	*n = (struct rq_note){ .ts = r->h.ts, .tid = r->prev_pid,
			       .next = r->next_pid, .cpu = cpu,
			       .kind = RQ_NOTE_SWITCH,
			       .preempted = out_state(r->prev_state) == 'R' };
	memcpy(n->comm, r->prev_comm, TRIG_COMM_LEN);
}

void rqnotes_waking(struct trig_watch *w, uint32_t cpu,
		    const struct btr_wakeup *r)
{
	struct rq_note *n = note(w, cpu);

	if (!n)
		return;
	*n = (struct rq_note){ .ts = r->h.ts, .tid = r->pid,
			       .cpu = (uint32_t)r->target_cpu,
			       .kind = RQ_NOTE_WAKING };
	memcpy(n->comm, r->comm, TRIG_COMM_LEN);
}

void rqnotes_exit(struct trig_watch *w, uint32_t cpu, int32_t tid,
		  uint64_t ts)
{
	struct rq_note *n = note(w, cpu);

	if (n)
		*n = (struct rq_note){ .ts = ts, .tid = tid,
				       .kind = RQ_NOTE_FREE };
}

void rqnotes_hand(struct trig_watch *w, const uint32_t *cpus, uint32_t n)
{
	uint32_t i;

	pthread_mutex_lock(&w->notes_lock);
	for (i = 0; i < (cpus ? n : w->ncpus); i++) {
		uint32_t c = cpus ? cpus[i] : i;
		struct rq_journal *j;

		if (c >= w->ncpus)
			continue;
		j = &w->notes[c];
		if (!j->local.n)
			continue;
		if (room(&j->shared, j->local.n)) {
			memcpy(&j->shared.v[j->shared.n], j->local.v,
			       j->local.n * sizeof(*j->local.v));
			j->shared.n += j->local.n;
			w->notes_pending += j->local.n;
		} else {
			__atomic_add_fetch(&w->notes_lost, j->local.n,
					   __ATOMIC_RELAXED);
		}
		j->local.n = 0;
	}
	pthread_mutex_unlock(&w->notes_lock);
}

/* The thread's state in the notes' model (NULL: no thread, the idle
 * task or a tid past the kernel's limit). */
static uint32_t *state_of(struct trig_watch *w, int32_t tid)
{
	return tid > 0 && (uint32_t)tid < TID_MAX ? &w->note_state[tid]
						    : NULL;
}

/* The thread leaves the queue it is counted on. The counts are this
 * thread's alone (under notes_lock): plain, as with one reader. */
static void leave(struct trig_watch *w, uint32_t *s)
{
	uint32_t q1 = *s & NS_QUEUE;

	if (q1)
		w->rq1[q1].m--;
	*s &= ~NS_QUEUE;
}

/* The thread joins CPU cpu's queue (runnable in watch_hot.h). */
static void join(struct trig_watch *w, uint32_t *s, int32_t tid,
		 uint32_t cpu, uint64_t ts, const char *comm)
{
	if (cpu >= w->rq_cpus)
		return;
	leave(w, s);
	*s |= cpu + 1;
	rq_gain(w, cpu + 1, tid, ts, comm, false);
}

static void apply(struct trig_watch *w, const struct rq_note *n)
{
	uint32_t *s = state_of(w, n->tid), *x;

	switch (n->kind) {
	case RQ_NOTE_SWITCH:
		if (s) { /* prev: runnable still if preempted */
			leave(w, s);
			*s &= ~(NS_ON_CPU | NS_WOKEN);
			if (n->preempted)
				join(w, s, n->tid, n->cpu, n->ts, n->comm);
		}
		if ((x = state_of(w, n->next))) {
			leave(w, x);
			*x |= NS_ON_CPU;
		}
		break;
	case RQ_NOTE_WAKING:
		/* off the CPU and its first waking since, or running (woken
		 * before its switch-out: that switch-out then takes it off) */
		if (s && (*s & NS_ON_CPU || !(*s & NS_WOKEN)))
			join(w, s, n->tid, n->cpu, n->ts, n->comm);
		if (s)
			*s |= NS_WOKEN;
		break;
	case RQ_NOTE_FREE:
		if (s) {
			leave(w, s);
			*s = 0;
		}
		break;
	}
}

/* Whether ring c has a note left older than past. */
static bool next_before(struct trig_watch *w, uint32_t c, uint64_t past)
{
	const struct rq_journal *j = &w->notes[c];

	return j->head < j->shared.n && j->shared.v[j->head].ts < past;
}

/* ring c's next note's time */
static uint64_t next_ts(const struct trig_watch *w, uint32_t c)
{
	return w->notes[c].shared.v[w->notes[c].head].ts;
}

void rqnotes_apply(struct trig_watch *w, uint64_t past)
{
	/* the rings by their next note's time, then CPU */
	struct keyheap_ent *h = w->note_heap;
	uint32_t n = 0, c;
	bool forced;

	pthread_mutex_lock(&w->notes_lock);
	forced = w->notes_pending > NOTES_PENDING_MAX;
	if (forced) {
		past = UINT64_MAX;
		w->notes_forced += w->notes_pending;
	}
	for (c = 0; c < w->ncpus; c++)
		if (next_before(w, c, past))
			h[n++] = (struct keyheap_ent){ next_ts(w, c), c };
	keyheap_make(h, n);
	/* until the hits' queue is half full: the caller takes them, and
	 * mutes their specs, before the next call applies more (a storm of
	 * runqueue hits, a pass's at once, is muted as with one reader,
	 * not lost to the queue) */
	while (n && (forced || __atomic_load_n(&w->qlen, __ATOMIC_ACQUIRE) <
				       QUEUE_MAX / 2)) {
		struct rq_journal *j = &w->notes[h[0].idx];

		apply(w, &j->shared.v[j->head++]);
		w->notes_pending--;
		if (next_before(w, h[0].idx, past))
			h[0].key = next_ts(w, h[0].idx);
		else
			h[0] = h[--n];
		keyheap_sift(h, n, 0);
	}
	for (c = 0; c < w->ncpus; c++) {
		struct rq_journal *j = &w->notes[c];

		if (j->head == j->shared.n) {
			j->head = j->shared.n = 0;
		} else if (j->head > j->shared.n / 2) {
			memmove(j->shared.v, &j->shared.v[j->head],
				(j->shared.n - j->head) * sizeof(*j->shared.v));
			j->shared.n -= j->head;
			j->head = 0;
		}
	}
	pthread_mutex_unlock(&w->notes_lock);
}

uint64_t rqnotes_inexact(struct trig_watch *w)
{
	uint64_t n;

	pthread_mutex_lock(&w->notes_lock);
	n = w->notes_forced + __atomic_load_n(&w->notes_lost, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&w->notes_lock);
	return n;
}
