/* Unit test of the trigger watch (trigger/watch.c) against schedules it
 * has not seen: random threads that run, sleep in S or D or are
 * preempted, are woken from any CPU and run again on any, a few of their
 * sleeps and waits long. A recorder with --trigger reads its rings in
 * time order across them (rings_drain_merged, checked against real BPF
 * rings by synth_rings merge in tests/cli/21-synth-rings.bats), a pass
 * every drain period: so are the records here, the hits taken after each
 * pass of 50 ms. Every wait and sleep that passes a threshold is known
 * from the schedule itself; the watch must report exactly those, with
 * their intervals. Read as two reader threads read (each its own rings,
 * one ahead of the other; the records noted, and watched by the main
 * thread in time order, trigger/notes.c), it must report the same. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "trigger/spec.h"
#include "trigger/watch.h"
#include "trig_replay.h"
#include "unit.h"

#define MS 1000000ull
#define CPUS 3
#define THREADS 6
#define SPAN (3000 * MS)
#define PASS (50 * MS)
#define MAX_EVENTS 40000
#define MAX_HITS 512
#define LATENCY (20 * MS)
#define BLOCKED (300 * MS)

struct event {
	uint64_t ts;
	uint32_t cpu;
	int is_wake;
	union {
		struct btr_switch sw;
		struct btr_wakeup wk;
	} r;
};

struct sched {
	struct event ev[MAX_EVENTS];
	size_t n;
	struct hit want[MAX_HITS];
	size_t nwant;
};

static uint64_t rng;

static uint64_t rnd(uint64_t lo, uint64_t hi)
{
	return replay_rnd(&rng, lo, hi);
}

static void add(struct sched *s, uint64_t ts, uint32_t cpu, int32_t prev,
		int64_t state, int32_t next, int32_t woken, int32_t target)
{
	struct event *e = &s->ev[s->n++];

	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->cpu = cpu;
	if (woken) {
		e->is_wake = 1;
		e->r.wk.h.ts = ts;
		e->r.wk.h.type = BTR_REC_WAKING;
		e->r.wk.pid = woken;
		e->r.wk.target_cpu = target;
		snprintf(e->r.wk.comm, sizeof(e->r.wk.comm), "t%d", woken);
		return;
	}
	e->r.sw.h.ts = ts;
	e->r.sw.h.type = BTR_REC_SWITCH;
	e->r.sw.prev_pid = prev;
	e->r.sw.prev_state = state;
	e->r.sw.next_pid = next;
	snprintf(e->r.sw.prev_comm, sizeof(e->r.sw.prev_comm), "t%d", prev);
	snprintf(e->r.sw.next_comm, sizeof(e->r.sw.next_comm), "t%d", next);
}

static void want(struct sched *s, uint32_t spec, int32_t tid, uint64_t start,
		 uint64_t end)
{
	s->want[s->nwant++] = (struct hit){ spec, tid, start, end };
}

/* One thread's life: short cycles, and now and then (at most one in any
 * 500 ms, so that one episode kept apart is enough) a long sleep or a
 * long wait. Each sleep's waking comes from a random CPU. */
static void thread_life(struct sched *s, int32_t tid)
{
	uint64_t t = rnd(0, 5 * MS), last_long = 0;
	uint32_t cpu = (uint32_t)rnd(0, CPUS - 1);

	add(s, t, cpu, 0, 0, tid, 0, 0); /* it runs */
	while (t < SPAN && s->n + 4 < MAX_EVENTS && s->nwant + 2 < MAX_HITS) {
		uint64_t kind = rnd(0, 99), start, out;
		bool may_long = t - last_long > 500 * MS || !last_long;
		bool long_sleep = may_long && rnd(0, 99) < 4;
		bool long_wait = may_long && !long_sleep && rnd(0, 99) < 4;
		int64_t state = kind < 15 ? 0x100 : kind < 25 ? 2 : 1;
		uint32_t next_cpu = (uint32_t)rnd(0, CPUS - 1);

		t += rnd(50000, 2 * MS); /* it runs */
		out = t;
		add(s, out, cpu, tid, state, 0, 0, 0);
		if (state == 0x100) {
			start = out;
		} else {
			t += long_sleep ? rnd(BLOCKED + 10 * MS, 800 * MS)
					: rnd(50000, 5 * MS);
			add(s, t, (uint32_t)rnd(0, CPUS - 1), 0, 0, 0, tid,
			    (int32_t)next_cpu);
			if (long_sleep)
				want(s, 1, tid, out, t);
			start = t;
		}
		t += long_wait ? rnd(LATENCY + MS, 60 * MS) : rnd(10000, 3 * MS);
		add(s, t, next_cpu, 0, 0, tid, 0, 0);
		if (long_wait)
			want(s, 0, tid, start, t);
		if (long_sleep || long_wait)
			last_long = t;
		cpu = next_cpu;
	}
}

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void feed(struct trig_watch *w, const struct event *e)
{
	if (e->is_wake)
		trig_watch_record(w, e->cpu, &e->r.wk, sizeof(e->r.wk));
	else
		trig_watch_record(w, e->cpu, &e->r.sw, sizeof(e->r.sw));
}

/* Reads the schedule's records in time order, or as two reader threads
 * do (`readers`: CPU 0's ring is reader 0's, the others reader 1's), a
 * pass every 50 ms of trace time (trig_replay.h); the watch's hits into
 * got, sorted. */
static size_t read_passes(struct sched *s, struct trig_watch *w,
			  struct hit *got, bool readers)
{
	static struct replay_rec recs[MAX_EVENTS];
	struct replay_hits t = { 0 };
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct event *e = &s->ev[i];

		recs[i] = (struct replay_rec){
			e->ts,
			e->is_wake ? (const void *)&e->r.wk
				   : (const void *)&e->r.sw,
			e->is_wake ? sizeof(e->r.wk) : sizeof(e->r.sw),
			e->cpu, e->cpu != 0
		};
	}
	CHECK_EQ_I64(replay_passes(w, recs, s->n, readers ? 2 : 1, PASS, &rng,
				   &t), 0);
	CHECK_EQ_I64(t.over, 0);
	CHECK(t.n <= MAX_HITS);
	if (t.n > MAX_HITS)
		t.n = MAX_HITS;
	for (i = 0; i < t.n; i++)
		got[i] = t.v[i];
	free(t.v);
	return t.n;
}

/* Schedule `seed` into s, its threads' ids from tid0. */
static void build_schedule(struct sched *s, uint64_t seed, int32_t tid0)
{
	int32_t tid;

	rng = seed;
	s->n = s->nwant = 0;
	for (tid = tid0; tid < tid0 + THREADS; tid++)
		thread_life(s, tid);
	qsort(s->ev, s->n, sizeof(s->ev[0]), cmp_event);
	qsort(s->want, s->nwant, sizeof(s->want[0]), cmp_hit);
}

/* Schedule `seed` into s, its threads' ids from tid0, and a watch of
 * its two specs (in specs), the table one or paged. */
static struct trig_watch *schedule(struct sched *s, uint64_t seed,
				   int32_t tid0, struct trig_spec *specs,
				   bool paged)
{
	struct trig_watch *w;
	char err[128];

	build_schedule(s, seed, tid0);
	trig_spec_parse("latency>20ms", &specs[0], err, sizeof(err));
	trig_spec_parse("blocked>300ms", &specs[1], err, sizeof(err));
	if (paged)
		setenv("BTR_TEST_WATCH_PAGED", "1", 1);
	w = trig_watch_new(specs, 2, CPUS);
	unsetenv("BTR_TEST_WATCH_PAGED");
	CHECK(w != NULL);
	return w;
}

/* Checks that the watch finds exactly the hits schedule `seed` holds,
 * read by one reader or (readers) as two reader threads read it; returns
 * how many. Its threads' ids from tid0, the watch's thread table one
 * table or in pages. */
static size_t one_schedule(uint64_t seed, int32_t tid0, bool paged,
			   bool readers)
{
	static struct sched s;
	static struct hit got[MAX_HITS];
	struct trig_spec specs[2];
	struct trig_watch *w = schedule(&s, seed, tid0, specs, paged);
	size_t ngot, i;

	if (!w)
		return 0;
	CHECK(!readers || trig_watch_readers(w, 2) == 0);
	ngot = read_passes(&s, w, got, readers);
	{
		bool was_paged;
		size_t bytes = trig_watch_resident(w, &was_paged);
		size_t page = (size_t)sysconf(_SC_PAGESIZE);

		CHECK(was_paged == paged);
		/* the threads' lines: one or two pages (they may straddle) */
		CHECK(bytes >= page && bytes <= 2 * page);
	}
	CHECK_EQ_I64(ngot, s.nwant);
	for (i = 0; i < ngot && i < s.nwant; i++) {
		if (!memcmp(&got[i], &s.want[i], sizeof(got[i])))
			continue;
		fprintf(stderr, "seed %llu%s: hit %zu: got spec %u tid %d %llu..%llu, want spec %u tid %d %llu..%llu\n",
			(unsigned long long)seed,
			readers ? " (two readers)" : "", i, got[i].spec,
			got[i].tid,
			(unsigned long long)got[i].start,
			(unsigned long long)got[i].end, s.want[i].spec,
			s.want[i].tid, (unsigned long long)s.want[i].start,
			(unsigned long long)s.want[i].end);
		CHECK(0);
		break;
	}
	trig_watch_free(w);
	return s.nwant;
}

static void test_random_schedules(void)
{
	uint64_t seed;
	size_t hits = 0;

	/* the table one or paged, threads at either end of the tids */
	for (seed = 1; seed <= 200; seed++)
		hits += one_schedule(seed,
				     seed % 8 < 4 ? 100 : TID_MAX - THREADS,
				     seed % 2, false);
	/* long waits and sleeps, many of them */
	CHECK(hits > 1000);
}

/* A wait whose switch-in one reader reads before the other reads the
 * thread's run before it: the reader ahead pairs that switch-in with the
 * last start it knows (the waking before that run), a hit held until
 * both readers are past it. The run's switch-in, read then, shows that
 * hit is not one wait; the run's switch-out (preempted) that comes next
 * starts the real one, which ends at the same switch-in. */
/* The records of s fed to a watch of `spec0` and `spec1` with two reader
 * threads in the order given (as the readers took turns), the hits taken
 * after each and once both are past all: into *t. */
static void feed_in_order(const struct sched *s, const size_t *order,
			  size_t n, const char *spec0, const char *spec1,
			  struct replay_hits *t)
{
	struct trig_spec specs[2];
	struct trig_watch *w;
	char err[128];
	size_t i;

	trig_spec_parse(spec0, &specs[0], err, sizeof(err));
	trig_spec_parse(spec1, &specs[1], err, sizeof(err));
	w = trig_watch_new(specs, 2, CPUS);
	CHECK(w != NULL && trig_watch_readers(w, 2) == 0);
	if (!w)
		return;
	for (i = 0; i < n; i++) {
		feed(w, &s->ev[order[i]]);
		replay_take(w, t);
	}
	trig_watch_frontier(w, 0, UINT64_MAX, NULL, 0);
	trig_watch_frontier(w, 1, UINT64_MAX, NULL, 0);
	replay_take(w, t);
	trig_watch_free(w);
}

static void test_reader_ahead(void)
{
	static struct sched s;
	struct replay_hits t = { 0 };
	/* CPU 1's ring (reader 1) first, then CPU 0's (reader 0) */
	static const size_t order[] = { 0, 1, 2, 5, 3, 4 };

	s.n = 0;
	add(&s, 1 * MS, 1, 0, 0, 7, 0, 0);        /* it runs on CPU 1 */
	add(&s, 2 * MS, 1, 7, 1, 0, 0, 0);        /* sleeps (S) */
	add(&s, 3 * MS, 1, 0, 0, 0, 7, 0);        /* woken onto CPU 0 */
	add(&s, 6 * MS + 500000, 0, 0, 0, 7, 0, 0); /* runs there */
	add(&s, 7 * MS + 500000, 0, 7, 0x100, 0, 0, 0); /* preempted */
	add(&s, 37 * MS + 400000, 1, 0, 0, 7, 0, 0); /* runs on CPU 1 */
	feed_in_order(&s, order, sizeof(order) / sizeof(order[0]),
		      "latency>20ms", "blocked>300ms", &t);
	CHECK_EQ_I64(t.n, 1);
	if (t.n == 1) {
		CHECK_EQ_I64(t.v[0].spec, 0);
		CHECK_EQ_I64(t.v[0].tid, 7);
		CHECK_EQ_I64(t.v[0].start, 7 * MS + 500000);
		CHECK_EQ_I64(t.v[0].end, 37 * MS + 400000);
	}
	free(t.v);
}

/* Reduced from a hackbench capture replayed as two readers read it
 * (replay_triggers): a sleep whose waking raced it (read before its
 * switch-out: no waking after it, neither a wait nor a sleep), then two
 * short sleeps on CPU 1. Reader 0 reads ahead: its wakings, then a
 * switch-in 27 ms on, which the watch kept apart as the end of one long
 * episode from the raced sleep's switch-out. Reader 1's run inside it
 * (switch-in, switch-out) showed it was not one; paired with the waking
 * of the next short sleep anyway, it made a sleep of 6.4 ms that never
 * was. Now a switch-in inside the kept episode ends it there, and a
 * switch-out inside it starts it anew: no hit. */
static void test_raced_sleep_ahead(void)
{
	static struct sched s;
	struct replay_hits t = { 0 };
	/* the records as the readers took turns */
	static const size_t order[] = { 0, 1, 8, 2, 9, 3, 4, 5, 6, 7 };
	const uint64_t base = 21808400 * (uint64_t)MS;

	s.n = 0;
	add(&s, base + 2327702, 0, 0, 0, 0, 7, 1);        /* 0 woken */
	add(&s, base + 2357266, 0, 0, 0, 0, 7, 1);        /* 1 again */
	add(&s, base + 2366414, 1, 7, 1, 0, 0, 0);        /* 2 sleeps (S) */
	add(&s, base + 8093946, 1, 0, 0, 7, 0, 0);        /* 3 runs: no
							   * waking since */
	add(&s, base + 8105477, 1, 7, 1, 0, 0, 0);        /* 4 sleeps */
	add(&s, base + 8782639, 1, 0, 0, 0, 7, 1);        /* 5 woken */
	add(&s, base + 8783899, 1, 0, 0, 7, 0, 0);        /* 6 runs */
	add(&s, base + 13629727, 1, 7, 1, 0, 0, 0);       /* 7 sleeps */
	add(&s, base + 14773833, 0, 0, 0, 0, 7, 0);       /* 8 woken */
	add(&s, base + 29190572, 0, 0, 0, 7, 0, 0);       /* 9 runs */
	feed_in_order(&s, order, sizeof(order) / sizeof(order[0]),
		      "latency>20ms", "blocked>5ms", &t);
	CHECK_EQ_I64(t.n, 0);
	free(t.v);
}

/* As reader threads read: exactly the hits one reader finds (before the
 * notes, the reader threads' watch paired records as each read them,
 * and found 97.9% of them). */
static void test_two_readers(void)
{
	size_t hits = 0;
	uint64_t seed;

	for (seed = 1; seed <= 200; seed++)
		hits += one_schedule(seed, 100, seed % 2, true);
	fprintf(stderr, "two readers: %zu hits, as one reader\n", hits);
	CHECK(hits > 1000);
}

/* Also from a hackbench capture: reader 1 (CPU 1's wakings) reads ahead
 * a sleep's waking and a later waking that raced the next sleep, reader
 * 0 then the sleep's switch-out, which pairs with the later one (the
 * watch keeps one waking): a false sleep of 5 ms, held. The thread's run
 * inside it, read next in order by reader 0, goes no slow path; it is
 * looked at against the held hit all the same, which it cancels. */
static void test_run_read_in_order(void)
{
	static struct sched s;
	struct replay_hits t = { 0 };
	static const size_t order[] = { 0, 2, 4, 1, 3, 5 };
	const uint64_t base = 21806490 * (uint64_t)MS;

	s.n = 0;
	add(&s, base + 8753615, 0, 0, 0, 7, 0, 0);  /* 0 runs */
	add(&s, base + 8757205, 0, 7, 1, 0, 0, 0);  /* 1 sleeps (S) */
	add(&s, base + 8792550, 1, 0, 0, 0, 7, 0);  /* 2 woken */
	add(&s, base + 13595050, 0, 0, 0, 7, 0, 0); /* 3 runs */
	add(&s, base + 13762270, 1, 0, 0, 0, 7, 0); /* 4 woken, running */
	add(&s, base + 13762952, 0, 7, 1, 0, 0, 0); /* 5 sleeps */
	feed_in_order(&s, order, sizeof(order) / sizeof(order[0]),
		      "latency>20ms", "blocked>5ms", &t);
	CHECK_EQ_I64(t.n, 0);
	free(t.v);
}

/* A waking kept ahead (tcold.ahead) is the one of the sleep whose
 * switch-out reader 0 reads last (found by a review): reader 1 reads two
 * wakings and the switch-in they led to before reader 0 reads the run
 * and the sleep between them. The wait from the second waking is found,
 * as one reader finds it. */
static void test_ahead_waking_paired(void)
{
	static struct sched s;
	struct replay_hits t = { 0 };
	static const size_t order[] = { 0, 1, 2, 5, 6, 3, 4 };

	s.n = 0;
	add(&s, 1 * MS, 0, 0, 0, 7, 0, 0);  /* 0 runs */
	add(&s, 2 * MS, 0, 7, 1, 0, 0, 0);  /* 1 sleeps (S) */
	add(&s, 3 * MS, 1, 0, 0, 0, 7, 0);  /* 2 woken */
	add(&s, 4 * MS, 0, 0, 0, 7, 0, 0);  /* 3 runs */
	add(&s, 5 * MS, 0, 7, 1, 0, 0, 0);  /* 4 sleeps */
	add(&s, 6 * MS, 1, 0, 0, 0, 7, 0);  /* 5 woken */
	add(&s, 20 * MS, 1, 0, 0, 7, 0, 0); /* 6 runs, 14 ms later */
	feed_in_order(&s, order, sizeof(order) / sizeof(order[0]),
		      "latency>5ms", "blocked>50ms", &t);
	CHECK_EQ_I64(t.n, 1);
	if (t.n == 1) {
		CHECK_EQ_I64(t.v[0].spec, 0);
		CHECK_EQ_I64(t.v[0].start, 6 * MS);
		CHECK_EQ_I64(t.v[0].end, 20 * MS);
	}
	free(t.v);
}

/* runqueue> with two reader threads: the counts kept from the rings'
 * notes, watched in time order once both readers are past them
 * (trigger/notes.c), fire exactly where one reader reading in time
 * order fires (counted as read, a reader ahead made a CPU's count pass N
 * when its queue never did: on real records, runqueue>4 fired 10 to 61
 * times where one reader fires 7). */
static void test_runqueue_two_readers(void)
{
	static struct sched s;
	static struct hit one[MAX_HITS], two[MAX_HITS];
	struct trig_spec specs[2];
	char err[128];
	size_t n1, n2, total = 0;
	uint64_t seed;

	trig_spec_parse("runqueue>3", &specs[0], err, sizeof(err));
	trig_spec_parse("runqueue>4", &specs[1], err, sizeof(err));
	for (seed = 1; seed <= 100; seed++) {
		struct trig_watch *w;

		build_schedule(&s, seed, 100);
		w = trig_watch_new(specs, 2, CPUS);
		CHECK(w != NULL);
		if (!w)
			return;
		n1 = read_passes(&s, w, one, false);
		trig_watch_free(w);
		w = trig_watch_new(specs, 2, CPUS);
		CHECK(w != NULL && trig_watch_readers(w, 2) == 0);
		if (!w)
			return;
		n2 = read_passes(&s, w, two, true);
		trig_watch_free(w);
		CHECK_EQ_I64(n2, n1);
		if (n2 != n1 || memcmp(one, two, n1 * sizeof(one[0]))) {
			fprintf(stderr, "seed %llu: runqueue hits differ\n",
				(unsigned long long)seed);
			CHECK(0);
			return;
		}
		total += n1;
	}
	fprintf(stderr, "runqueue with two readers: %zu hits, as one reader\n",
		total);
	CHECK(total > 200);
}

int main(void)
{
	RUN(test_random_schedules);
	RUN(test_reader_ahead);
	RUN(test_raced_sleep_ahead);
	RUN(test_run_read_in_order);
	RUN(test_ahead_waking_paired);
	RUN(test_two_readers);
	RUN(test_runqueue_two_readers);
	return unit_finish();
}
