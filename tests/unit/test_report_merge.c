/* Unit tests of the report's k-way merge of per-CPU queues
 * (userspace/report/merge.c): the order events are handed out in, against
 * a naive reference of the rule (the queue of the last event taken goes on
 * while its head is no later than every other queue's; otherwise the
 * least (head time, queue index)), the watermark, released and reordered,
 * over random seeds: 1 to 300 queues, fine and coarse interleaving, many
 * equal times, batches of 1 to 600 events, rounds of pushes (1 to 3 runs)
 * and walks up to partial watermarks, queues added, emptied and refilled,
 * times at both ends of int64; and over the pending cap, every event
 * handed out once, each the earliest left. */
#include "report/merge.h"
#include "unit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* 0..n-1 */
static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort();
	return p;
}

/* ---- the reference: the rule, naively ---- */

struct ref_q {
	struct rev *v;
	size_t head, n, cap; /* v[head..n) are queued */
	int64_t last;
};

struct ref {
	struct ref_q *q;
	size_t nq;
	bool declared;
	int64_t max_ts, released;
	uint64_t reordered;
	size_t pending;
};

static void ref_add_queue(struct ref *r)
{
	r->q = xrealloc(r->q, (r->nq + 1) * sizeof(*r->q));
	r->q[r->nq++] = (struct ref_q){ .last = INT64_MIN };
}

/* merge_push's rule: the runs merged by time (the first run on equal
 * times), each event moved up to the queue's last or the latest handed
 * out when earlier. */
static void ref_push(struct ref *r, size_t qi, struct rev *const *v,
		     const size_t *n, size_t k)
{
	struct ref_q *q = &r->q[qi];
	size_t pos[MERGE_MAX_RUNS] = { 0 }, j;

	for (;;) {
		size_t b = SIZE_MAX;
		struct rev e;

		for (j = 0; j < k; j++)
			if (pos[j] < n[j] &&
			    (b == SIZE_MAX || v[j][pos[j]].ts < v[b][pos[b]].ts))
				b = j;
		if (b == SIZE_MAX)
			break;
		e = v[b][pos[b]++];
		if (e.ts < q->last) {
			e.ts = q->last;
			r->reordered++;
		}
		if (e.ts < r->released) {
			e.ts = r->released;
			r->reordered++;
		}
		q->last = e.ts;
		if (q->n == q->cap) {
			q->cap = q->cap ? q->cap * 2 : 64;
			q->v = xrealloc(q->v, q->cap * sizeof(*q->v));
		}
		q->v[q->n++] = e;
		r->pending++;
		if (e.ts > r->max_ts)
			r->max_ts = e.ts;
	}
}

static int64_t ref_watermark(const struct ref *r)
{
	int64_t low = INT64_MAX;
	size_t i;

	for (i = 0; i < r->nq; i++)
		if (r->q[i].last < low)
			low = r->q[i].last;
	if (!r->declared && r->max_ts > INT64_MIN + MERGE_NEW_CPU_NS &&
	    low > r->max_ts - MERGE_NEW_CPU_NS)
		low = r->max_ts - MERGE_NEW_CPU_NS;
	return low;
}

/* The queue the next event comes from after cur (SIZE_MAX: none), or
 * SIZE_MAX when every queue is empty. */
static size_t ref_next(const struct ref *r, size_t cur)
{
	size_t i, best = SIZE_MAX;

	for (i = 0; i < r->nq; i++) {
		const struct ref_q *q = &r->q[i];

		if (q->head < q->n &&
		    (best == SIZE_MAX ||
		     q->v[q->head].ts < r->q[best].v[r->q[best].head].ts))
			best = i;
	}
	if (cur != SIZE_MAX && r->q[cur].head < r->q[cur].n &&
	    r->q[cur].v[r->q[cur].head].ts == r->q[best].v[r->q[best].head].ts)
		return cur;
	return best;
}

/* The earliest time queued (INT64_MAX: none). */
static int64_t ref_min_head(const struct ref *r)
{
	size_t i = ref_next(r, SIZE_MAX);

	return i == SIZE_MAX ? INT64_MAX : r->q[i].v[r->q[i].head].ts;
}

/* ---- driving both ---- */

struct run {
	struct merge m;
	struct ref r;
	size_t max_pending;
	int32_t next_id;
	uint8_t *seen;       /* by id: handed out */
	size_t seen_cap;
	size_t bad;          /* mismatches of this seed */
	size_t handed;       /* events handed out */
	size_t over_walks;   /* walks that started over the cap */
	size_t cur;          /* the queue of the last event, of any walk */
};

static void note_bad(struct run *t, const char *what, uint64_t seed,
		     size_t at)
{
	if (!t->bad)
		fprintf(stderr, "seed %" PRIu64 ": %s at event %zu\n", seed,
			what, at);
	t->bad++;
}

static void add_queue(struct run *t, uint32_t machine, uint32_t cpu)
{
	long qi = merge_queue(&t->m, machine, cpu);

	if (qi != (long)t->r.nq) {
		t->bad++;
		return;
	}
	ref_add_queue(&t->r);
}

/* A time of run events: fine (every queue over the same span), coarse
 * (each queue its own stretch of it) or from a handful of values. */
enum mode { FINE, COARSE, EQUAL, NMODES };

/* Pushes k runs of new events into queue qi, times in [lo, lo + span). */
static void push_runs(struct run *t, size_t qi, int64_t lo, int64_t span,
		      enum mode mode, bool late)
{
	struct rev *v[MERGE_MAX_RUNS];
	size_t n[MERGE_MAX_RUNS], k = 1 + below(MERGE_MAX_RUNS), j, i;
	size_t most = 1 + below(below(4) ? 40 : 400);

	for (j = 0; j < k; j++) {
		int64_t at = lo;

		n[j] = below(most + 1);
		v[j] = xrealloc(NULL, (n[j] + 1) * sizeof(*v[j]));
		if (late && n[j]) /* before what the queue holds: moved up */
			at -= (int64_t)below((uint64_t)span + 1);
		for (i = 0; i < n[j]; i++) {
			int64_t step = mode == EQUAL ? (below(3) == 0) :
				       mode == COARSE ?
						  (int64_t)below(4) :
						  (int64_t)below((uint64_t)span /
								 (n[j] + 1) * 2 +
							 1);
			at += step;
			if (at >= lo + span)
				at = lo + span - 1;
			v[j][i] = (struct rev){ .ts = at, .pid = t->next_id++,
						.pid2 = (int32_t)qi };
		}
	}
	if (merge_push(&t->m, qi, (const struct rev *const *)v, n, k))
		t->bad++;
	ref_push(&t->r, qi, v, n, k);
	for (j = 0; j < k; j++)
		free(v[j]);
}

/* A walk of both: the merge's events, in batches of 1 to 600, against
 * the reference's (exactly, unless the walk starts over the cap: then
 * each must be the earliest left, once). */
static void walk(struct run *t, bool all, uint64_t seed)
{
	struct merge_ev out[600];
	struct merge_walk w;
	int64_t wm = all ? INT64_MAX : ref_watermark(&t->r), last = INT64_MIN;
	bool over = t->r.pending > t->max_pending;
	size_t n, i, cur = t->cur;

	t->over_walks += over;
	merge_begin(&t->m, all, &w);
	while ((n = merge_take(&t->m, &w, out, 1 + below(600)))) {
		for (i = 0; i < n; i++) {
			const struct rev *e = out[i].e;
			size_t qi = out[i].qi, want;
			struct ref_q *q;

			want = ref_next(&t->r, over ? SIZE_MAX : cur);
			if (!over && want == SIZE_MAX) {
				note_bad(t, "an event too many", seed,
					 t->handed);
				return;
			}
			if (!over && (qi != want ||
				      (t->r.q[want].v[t->r.q[want].head].ts >
					       wm &&
				       t->r.pending <= t->max_pending))) {
				note_bad(t, "order", seed, t->handed);
				return;
			}
			if (qi >= t->r.nq || e->pid2 != (int32_t)qi) {
				note_bad(t, "queue", seed, t->handed);
				return;
			}
			q = &t->r.q[qi];
			/* over the cap: the earliest left, the head of its
			 * queue, each event once */
			if (q->head >= q->n || q->v[q->head].pid != e->pid ||
			    q->v[q->head].ts != e->ts ||
			    e->ts != ref_min_head(&t->r) || e->ts < last ||
			    t->seen[e->pid]) {
				note_bad(t, "event", seed, t->handed);
				return;
			}
			t->seen[e->pid] = 1;
			last = e->ts;
			q->head++;
			t->r.pending--;
			if (e->ts > t->r.released)
				t->r.released = e->ts;
			cur = t->cur = qi;
			t->handed++;
		}
	}
	/* what is left waits for the watermark, under the cap */
	if (ref_min_head(&t->r) <= wm && t->r.pending)
		note_bad(t, "stopped early", seed, t->handed);
	if (t->r.pending > t->max_pending && wm != INT64_MAX)
		note_bad(t, "over the cap", seed, t->handed);
	if (t->m.pending != t->r.pending || t->m.released != t->r.released ||
	    t->m.reordered != t->r.reordered)
		note_bad(t, "counts", seed, t->handed);
}

/* One seed: a scenario drawn from it, run against the reference. */
static size_t one_seed(uint64_t seed, size_t *handed, size_t *over_walks)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 5, 8, 9, 16, 33, 300 };
	struct run t;
	size_t nq, rounds, r, i, events;
	enum mode mode;
	int64_t at, span, unit;
	bool extremes;
	uint32_t machines;

	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	memset(&t, 0, sizeof(t));
	t.cur = SIZE_MAX;
	merge_init(&t.m);
	t.r.max_ts = INT64_MIN;
	t.r.released = INT64_MIN;
	nq = sizes[below(sizeof(sizes) / sizeof(*sizes))];
	if (nq > 9 && below(2))
		nq = 9 + below(292);
	mode = (enum mode)below(NMODES);
	extremes = below(8) == 0;
	machines = below(4) ? 1 : 2;
	/* ns per step: the 250 ms window of undeclared CPUs matters or not */
	unit = below(3) == 0 ? 40000000 : below(2) ? 1 : 1000;
	rounds = 2 + below(10);
	events = 0;
	/* the cap on pending events, low in some seeds to go over it */
	t.max_pending = below(6) == 0 ? 50 + below(400) : MERGE_MAX_PENDING;
	t.m.max_pending = t.max_pending;
	t.seen_cap = 1u << 20;
	t.seen = calloc(t.seen_cap, 1);
	if (!t.seen)
		abort();
	if (below(2)) {
		t.r.declared = true;
		if (merge_declare_cpus(&t.m, 0, (uint32_t)nq))
			t.bad++;
		for (i = 0; i < nq; i++)
			ref_add_queue(&t.r);
	}
	at = extremes ? INT64_MIN : (int64_t)below(1000) * unit;
	for (r = 0; r < rounds && !t.bad; r++) {
		size_t pushes;

		/* queues appear over the first rounds */
		while (t.r.nq < nq && (r > 2 || below(2))) {
			uint32_t c = (uint32_t)t.r.nq;

			add_queue(&t, c % machines, c / machines);
		}
		span = (int64_t)(1 + below(100)) * unit;
		if (mode == EQUAL)
			span = 1 + (int64_t)below(4);
		pushes = t.r.nq ? 1 + below(t.r.nq * 2) : 0;
		if (events > 30000 || t.next_id > (int32_t)(t.seen_cap - 4000))
			pushes = 0;
		for (i = 0; i < pushes; i++) {
			size_t qi = below(t.r.nq);
			int64_t lo = at;

			if (mode == COARSE) /* its own part of the span */
				lo += span * (int64_t)qi / (int64_t)t.r.nq;
			push_runs(&t, qi, lo, span, mode,
				  below(16) == 0 && lo > INT64_MIN + span);
			events = (size_t)t.next_id;
		}
		walk(&t, r + 1 == rounds || below(5) == 0, seed);
		/* the next round starts at or after this one's end (or a bit
		 * before it: its events are moved up) */
		at += span - (int64_t)below(3) * (span / 4);
		if (extremes && r == 0)
			at = -(int64_t)below(1000);
	}
	if (extremes && !t.bad) { /* the end of time, on several queues */
		for (i = 0; i < t.r.nq; i += 1 + below(3)) {
			struct rev e[3] = { { .ts = INT64_MAX - 1 },
					    { .ts = INT64_MAX },
					    { .ts = INT64_MAX } };
			struct rev *v[1] = { e };
			size_t n[1] = { 1 + below(3) }, j;

			for (j = 0; j < 3; j++) {
				e[j].pid = t.next_id++;
				e[j].pid2 = (int32_t)i;
			}
			if (merge_push(&t.m, i, (const struct rev *const *)v,
				       n, 1))
				t.bad++;
			ref_push(&t.r, i, v, n, 1);
		}
		walk(&t, true, seed);
	}
	if (t.r.pending || t.m.pending)
		note_bad(&t, "left over", seed, t.handed);
	*handed += t.handed;
	*over_walks += t.over_walks;
	for (i = 0; i < t.r.nq; i++)
		free(t.r.q[i].v);
	free(t.r.q);
	free(t.seen);
	merge_free(&t.m);
	return t.bad;
}

static void test_random_against_reference(void)
{
	size_t bad = 0, handed = 0, over = 0;
	uint64_t seed;

	for (seed = 1; seed <= 300; seed++)
		bad += one_seed(seed, &handed, &over);
	CHECK_EQ_I64(bad, 0);
	/* the seeds did reach what they are for */
	CHECK(handed > 1000000);
	CHECK(over > 20);
}

/* Takes a whole walk into ts[] and qi[]; how many. */
static size_t take_all(struct merge *m, bool all, int64_t *ts, size_t *qi,
		       size_t max)
{
	struct merge_walk w;
	struct merge_ev out[2];
	size_t n, i, k = 0;

	merge_begin(m, all, &w);
	while ((n = merge_take(m, &w, out, 2)))
		for (i = 0; i < n && k < max; i++, k++) {
			ts[k] = out[i].e->ts;
			qi[k] = out[i].qi;
		}
	return k;
}

static void push1(struct merge *m, size_t qi, const int64_t *ts, size_t n)
{
	struct rev e[8];
	const struct rev *v[1] = { e };
	size_t i;

	for (i = 0; i < n; i++)
		e[i] = (struct rev){ .ts = ts[i] };
	CHECK(merge_push(m, qi, v, &n, 1) == 0);
}

/* merge.h's example: 10, 20, 25 go out; 30 waits for CPU 1. */
static void test_watermark_example(void)
{
	struct merge m;
	int64_t ts[8], far[1] = { 900000000 };
	size_t qi[8];

	merge_init(&m);
	CHECK(merge_declare_cpus(&m, 0, 2) == 0);
	push1(&m, 0, (int64_t[]){ 10, 30 }, 2);
	push1(&m, 1, (int64_t[]){ 20, 25 }, 2);
	CHECK_EQ_I64(take_all(&m, false, ts, qi, 8), 3);
	CHECK(ts[0] == 10 && ts[1] == 20 && ts[2] == 25);
	CHECK(qi[0] == 0 && qi[1] == 1 && qi[2] == 1);
	CHECK_EQ_I64(m.released, 25);
	push1(&m, 1, far, 1);
	CHECK_EQ_I64(take_all(&m, false, ts, qi, 8), 1);
	CHECK(ts[0] == 30 && qi[0] == 0);
	CHECK_EQ_I64(take_all(&m, true, ts, qi, 8), 1);
	CHECK(ts[0] == far[0] && qi[0] == 1);
	merge_free(&m);
}

/* On equal times the queue of the last event goes on, in a new walk too;
 * a queue that cannot go on gives the least (time, queue). */
static void test_ties(void)
{
	struct merge m;
	int64_t ts[8];
	size_t qi[8];

	merge_init(&m);
	CHECK(merge_declare_cpus(&m, 0, 3) == 0);
	push1(&m, 0, (int64_t[]){ 5 }, 1);
	push1(&m, 1, (int64_t[]){ 3, 5 }, 2);
	push1(&m, 2, (int64_t[]){ 4, 5 }, 2);
	CHECK_EQ_I64(take_all(&m, true, ts, qi, 8), 5);
	/* 3 (q1), 4 (q2), 5 (q2 goes on), 5 (q0: the least), 5 (q1) */
	CHECK(qi[0] == 1 && qi[1] == 2 && qi[2] == 2 && qi[3] == 0 &&
	      qi[4] == 1);
	CHECK(ts[2] == 5 && ts[3] == 5 && ts[4] == 5);
	/* a new walk goes on with the last event's queue, q1, on equal
	 * times too, as trace_processor's one run does */
	push1(&m, 0, (int64_t[]){ 6 }, 1);
	push1(&m, 1, (int64_t[]){ 6 }, 1);
	CHECK_EQ_I64(take_all(&m, true, ts, qi, 8), 2);
	CHECK(qi[0] == 1 && qi[1] == 0);
	merge_free(&m);
}

int main(void)
{
	RUN(test_watermark_example);
	RUN(test_ties);
	RUN(test_random_against_reference);
	return unit_finish();
}
