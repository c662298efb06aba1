/* Unit tests of triggers: the specs (trigger/spec.c), the conditions on
 * records fed in either order of the rings (trigger/watch.c), the rate
 * limit and the snapshots' disk budget (trigger/limit.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"
#include "trigger/limit.h"
#include "trigger/notes.h"
#include "trigger/spec.h"
#include "trigger/watch.h"
#include "trig_recs.h"
#include "util/log.h"
#include "unit.h"

#define MS 1000000ull

static void test_spec(void)
{
	struct trig_spec t;
	char err[256];

	CHECK_EQ_I64(trig_spec_parse("latency>20ms", &t, err, sizeof(err)), 0);
	CHECK_EQ_I64(t.kind, TRIG_LATENCY);
	CHECK(t.threshold == 20 * MS);
	CHECK_STR(trig_spec_name(&t), "latency>20ms");
	CHECK_EQ_I64(trig_spec_parse("blocked>1.5s, comm=mysqld pid=42", &t,
				     err, sizeof(err)), 0);
	CHECK_EQ_I64(t.kind, TRIG_BLOCKED);
	CHECK(t.threshold == 1500 * MS);
	CHECK_STR(t.comm, "mysqld");
	CHECK_EQ_I64(t.pid, 42);
	CHECK(trig_spec_needs_proc(&t));
	CHECK_EQ_I64(trig_spec_parse("D>500ms,cgroup=/system.slice/", &t, err,
				     sizeof(err)), 0);
	CHECK_EQ_I64(t.kind, TRIG_BLOCKED_D);
	CHECK_STR(t.cgroup, "/system.slice");
	CHECK_EQ_I64(trig_spec_parse("runqueue>4", &t, err, sizeof(err)), 0);
	CHECK_EQ_I64(t.kind, TRIG_RUNQUEUE);
	CHECK(t.threshold == 4);
	CHECK_EQ_I64(trig_spec_parse("name:deploy-1.2", &t, err, sizeof(err)), 0);
	CHECK_EQ_I64(t.kind, TRIG_NAMED);
	CHECK_STR(trig_spec_name(&t), "deploy-1.2");
	CHECK_EQ_I64(trig_spec_parse("latency>", &t, err, sizeof(err)), -1);
	CHECK(strstr(err, "bad value ''") != NULL);
	CHECK_EQ_I64(trig_spec_parse("latency>5ms,pid=0", &t, err, sizeof(err)), -1);
	CHECK(strstr(err, "bad pid '0'") != NULL);
	CHECK_EQ_I64(trig_spec_parse(",", &t, err, sizeof(err)), -1);
	CHECK_EQ_I64(trig_spec_parse("", &t, err, sizeof(err)), -1);
	CHECK(trig_cgroup_matches("/system.slice", "/system.slice/a.service"));
	CHECK(trig_cgroup_matches("/system.slice", "/system.slice"));
	CHECK(!trig_cgroup_matches("/system.slice", "/system.slice2"));
	CHECK(trig_cgroup_matches("/", "/user.slice"));
}

/* A watch of specs a and b (in s[0..1]) on ncpus, one reader. */
static struct trig_watch *watch2(struct trig_spec *s, const char *a,
				 const char *b, uint32_t ncpus)
{
	char err[128];

	CHECK_EQ_I64(trig_spec_parse(a, &s[0], err, sizeof(err)), 0);
	CHECK_EQ_I64(trig_spec_parse(b, &s[1], err, sizeof(err)), 0);
	return trig_watch_new(s, 2, ncpus);
}

/* A watch of specs s[0..n) on ncpus, its table the one or (paged) the
 * paged one, as where the one is refused. */
static struct trig_watch *watch_made(const struct trig_spec *s, uint32_t n,
				     uint32_t ncpus, bool paged)
{
	struct trig_watch *w;

	if (paged)
		setenv("BTR_TEST_WATCH_PAGED", "1", 1);
	w = trig_watch_new(s, n, ncpus);
	unsetenv("BTR_TEST_WATCH_PAGED");
	CHECK(w != NULL);
	return w;
}

static size_t take(struct trig_watch *w, struct trig_hit *h, size_t max)
{
	uint64_t over = 0;

	return trig_watch_take(w, h, max, &over);
}

/* A sleep of tid 7 from 100 ms on CPU 0, its waking at 300 ms on CPU 1,
 * its run at 330 ms on CPU 2 (it moved), fed in the given order of
 * indexes: each ring is in time order, the rings are read in any. */
static void latency_order(const int *order, bool want_hit)
{
	struct trig_spec s[2];
	char err[128];
	struct btr_switch out = sw(100 * MS, 7, 1, 0), in = sw(330 * MS, 0, 0, 7);
	struct btr_wakeup w = wk(300 * MS, 7, 0);
	struct btr_switch pre_out = sw(10 * MS, 7, 1, 0), pre_in = sw(25 * MS, 0, 0, 7);
	struct btr_wakeup pre_w = wk(20 * MS, 7, 0);
	const void *recs[3] = { &out, &w, &in };
	size_t lens[3] = { sizeof(out), sizeof(w), sizeof(in) };
	uint32_t cpus[3] = { 0, 1, 2 };
	struct trig_watch *wt;
	struct trig_hit h[4];
	int i;

	trig_spec_parse("latency>20ms", &s[0], err, sizeof(err));
	trig_spec_parse("blocked>150ms", &s[1], err, sizeof(err));
	wt = trig_watch_new(s, 2, 3);
	CHECK(wt != NULL);
	/* a short cycle before, in order: the thread has a history */
	trig_watch_record(wt, 0, &pre_out, sizeof(pre_out));
	trig_watch_record(wt, 1, &pre_w, sizeof(pre_w));
	trig_watch_record(wt, 0, &pre_in, sizeof(pre_in));
	for (i = 0; i < 3; i++)
		trig_watch_record(wt, cpus[order[i]], recs[order[i]],
				  lens[order[i]]);
	CHECK_EQ_I64(take(wt, h, 4), want_hit ? 2 : 0);
	for (i = 0; want_hit && i < 2; i++) {
		const struct trig_hit *x = h[0].spec == (uint32_t)i ? &h[0] : &h[1];

		CHECK_EQ_I64(x->tid, 7);
		CHECK(x->start == (i ? 100 : 300) * MS);
		CHECK(x->end == (i ? 300 : 330) * MS);
		CHECK_EQ_I64(x->state, i ? 'S' : 'R');
		CHECK_STR(x->comm, "t7");
	}
	trig_watch_free(wt);
}

static void test_latency_orders(void)
{
	static const int orders[][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
		{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
		latency_order(orders[i], true);
}

/* A long sleep whose waking (another CPU's ring) is read after its
 * switch-in and after the short cycles the thread ran since: the long
 * sleep and the long wait are found all the same. */
static void test_long_then_short(void)
{
	struct trig_spec s[2];
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[4];
	struct btr_switch pre_out = sw(10 * MS, 7, 1, 0), pre_in = sw(25 * MS, 0, 0, 7);
	struct btr_wakeup pre_w = wk(20 * MS, 7, 0);
	struct btr_switch recs0[8];
	struct btr_wakeup late = wk(900 * MS, 7, 0), fast[3];
	uint64_t t;
	int i, n = 0;

	trig_spec_parse("blocked>500ms", &s[0], err, sizeof(err));
	trig_spec_parse("latency>20ms", &s[1], err, sizeof(err));
	wt = trig_watch_new(s, 2, 2);
	/* as its type is aligned: the per-record fields in one line */
	CHECK(wt && (uintptr_t)wt % 64 == 0);
	trig_watch_record(wt, 0, &pre_out, sizeof(pre_out));
	trig_watch_record(wt, 1, &pre_w, sizeof(pre_w));
	trig_watch_record(wt, 0, &pre_in, sizeof(pre_in));
	/* CPU 0's ring: a sleep at 100 ms, the run at 930 ms (woken at 900
	 * on CPU 1), then three short cycles, their wakings on CPU 0 */
	recs0[n++] = sw(100 * MS, 7, 1, 0);
	recs0[n++] = sw(930 * MS, 0, 0, 7);
	for (i = 0, t = 940 * MS; i < 3; i++, t += 3 * MS) {
		recs0[n++] = sw(t, 7, 1, 0);
		fast[i] = wk(t + MS, 7, 0);
		recs0[n++] = sw(t + 2 * MS, 0, 0, 7);
	}
	for (i = 0; i < n; i++) {
		trig_watch_record(wt, 0, &recs0[i], sizeof(recs0[i]));
		if (i >= 2 && i % 2 == 0)
			trig_watch_record(wt, 0, &fast[(i - 2) / 2],
					  sizeof(fast[0]));
	}
	trig_watch_record(wt, 1, &late, sizeof(late)); /* CPU 1, read last */
	CHECK_EQ_I64(take(wt, h, 4), 2);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK(h[0].start == 100 * MS && h[0].end == 900 * MS);
	CHECK_EQ_I64(h[1].spec, 1);
	CHECK(h[1].start == 900 * MS && h[1].end == 930 * MS);
	trig_watch_free(wt);
}

/* A waking of a thread still running (read late, after its switch-out)
 * starts no wait: its next run, long after, fires nothing. */
static void test_stale_waking(void)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[2];
	struct btr_switch in0 = sw(10 * MS, 0, 0, 7), out = sw(50 * MS, 7, 1, 0),
			  in = sw(500 * MS, 0, 0, 7);
	struct btr_wakeup late = wk(40 * MS, 7, 0), w = wk(495 * MS, 7, 0);

	trig_spec_parse("latency>20ms", &s, err, sizeof(err));
	wt = trig_watch_new(&s, 1, 2);
	trig_watch_record(wt, 0, &in0, sizeof(in0));
	trig_watch_record(wt, 0, &out, sizeof(out));
	trig_watch_record(wt, 1, &late, sizeof(late)); /* CPU 1 read after */
	trig_watch_record(wt, 1, &w, sizeof(w));
	trig_watch_record(wt, 0, &in, sizeof(in));
	CHECK_EQ_I64(take(wt, h, 2), 0);
	trig_watch_free(wt);
}

/* A preempted thread waits runnable from its switch-out; short waits and
 * a comm that does not match fire nothing. */
static void test_preempt_and_comm(void)
{
	struct trig_spec s[2];
	struct trig_watch *wt;
	struct trig_hit h[4];
	struct btr_switch p = sw(1 * MS, 7, 0x100, 8), r = sw(30 * MS, 8, 0x100, 7),
			  p2 = sw(31 * MS, 7, 0x100, 8), r2 = sw(32 * MS, 8, 0x100, 7);

	wt = watch2(s, "latency>20ms,comm=t7", "latency>20ms,comm=other", 1);
	FEED(wt, 0, p);
	FEED(wt, 0, r);
	FEED(wt, 0, p2);
	FEED(wt, 0, r2);
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK(h[0].start == 1 * MS && h[0].end == 30 * MS);
	trig_watch_free(wt);
}

/* The warming before a reader's pass (trig_watch_warm) changes no hit,
 * with the one table or the paged one, with tids it must not look up
 * (0, the idle tasks; one past the kernel's limit) among those read: a
 * preempted thread's 29 ms wait fires, its 1 ms one does not. */
static void warm_with(bool paged)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[4];
	struct btr_switch recs[] = {
		sw(1 * MS, 7, 0x100, 8), sw(2 * MS, 8, 1, 0),
		sw(3 * MS, 0, 0, (1 << 22) + 1), sw(30 * MS, 9, 0x100, 7),
		sw(31 * MS, 7, 0x100, 8), sw(32 * MS, 8, 0x100, 7),
	};
	size_t i;

	CHECK_EQ_I64(trig_spec_parse("latency>20ms", &s, err, sizeof(err)), 0);
	wt = watch_made(&s, 1, 2, paged);
	trig_watch_warm(wt); /* nothing read yet */
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		FEED(wt, 0, recs[i]);
		trig_watch_warm(wt);
	}
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].tid, 7);
	CHECK(h[0].start == 1 * MS && h[0].end == 30 * MS);
	trig_watch_free(wt);
}

static void test_warm(void)
{
	trig_watch_warm(NULL); /* no watch: nothing to do */
	warm_with(false);
	warm_with(true);
}

/* Wakings that come in the way of a wait or a sleep:
 * - a thread preempted (R+) while its state was S can still be woken: it
 *   waited to run from its preemption (5 ms), not from that waking;
 * - a long sleep of tid 7 (10 to 210 ms) whose waking (205 ms, CPU 2's
 *   ring) is read last is kept apart at its switch-in; a short cycle's
 *   switch-in (214 ms) read after the waking of the cycle after it (216
 *   ms, CPU 1's ring read ahead of CPU 0's) keeps nothing in its place,
 *   and the long sleep's waking, read at last, still pairs it. */
static void test_wakings_in_the_way(void)
{
	struct btr_switch in0 = sw(1 * MS, 0, 0, 7), p = sw(5 * MS, 7, 0x100, 8),
			  r = sw(35 * MS, 8, 1, 7);
	struct btr_wakeup w0 = wk(30 * MS, 7, 0);
	struct btr_switch out = sw(10 * MS, 7, 1, 0), in = sw(210 * MS, 0, 0, 7),
			  out2 = sw(211 * MS, 7, 1, 0), in2 = sw(214 * MS, 0, 0, 7);
	struct btr_wakeup next_w = wk(216 * MS, 7, 0), w = wk(205 * MS, 7, 0);
	struct trig_spec s[2];
	struct trig_hit h[4];
	struct trig_watch *wt = watch2(s, "latency>20ms", "latency>40ms", 1);

	FEED(wt, 0, in0);
	FEED(wt, 0, p);
	FEED(wt, 0, w0);
	FEED(wt, 0, r);
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK(h[0].start == 5 * MS && h[0].end == 35 * MS);
	trig_watch_free(wt);

	wt = watch2(s, "latency>20ms", "blocked>100ms", 3);
	FEED(wt, 0, out);
	FEED(wt, 0, in);
	FEED(wt, 0, out2);
	FEED(wt, 1, next_w);
	FEED(wt, 0, in2);
	CHECK_EQ_I64(take(wt, h, 4), 0);
	FEED(wt, 2, w); /* read last */
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 1);
	CHECK(h[0].start == 10 * MS && h[0].end == 205 * MS);
	trig_watch_free(wt);
}

/* With reader threads, the reader of the wakings' ring may run a sleep
 * ahead of the reader of the thread's own: it reads the waking of the
 * next sleep before the switch-in that ended the last one. That waking
 * still pairs with its sleep's switch-out and switch-in, read later: a
 * 50 ms wait after a short sleep, then a 200 ms sleep. */
static void test_waking_ahead(void)
{
	struct btr_switch out0 = sw(10 * MS, 7, 1, 0), in0 = sw(12 * MS, 0, 0, 7),
			  out1 = sw(13 * MS, 7, 1, 0), in1 = sw(64 * MS, 0, 0, 7),
			  out2 = sw(65 * MS, 7, 2, 0), in2 = sw(266 * MS, 0, 0, 7);
	struct btr_wakeup w0 = wk(11 * MS, 7, 1), w1 = wk(14 * MS, 7, 1),
			  w2 = wk(265 * MS, 7, 1);
	struct trig_spec s[2];
	struct trig_hit h[4];
	struct trig_watch *wt = watch2(s, "latency>20ms", "blocked>100ms", 2);

	FEED(wt, 1, out0);
	FEED(wt, 0, w0);
	FEED(wt, 0, w1); /* ahead of in0 and out1 */
	FEED(wt, 1, in0);
	FEED(wt, 1, out1);
	CHECK_EQ_I64(take(wt, h, 4), 0);
	FEED(wt, 1, in1);
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK(h[0].start == 14 * MS && h[0].end == 64 * MS);
	FEED(wt, 0, w2); /* ahead of out2 */
	FEED(wt, 1, out2);
	FEED(wt, 1, in2);
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 1);
	CHECK(h[0].start == 65 * MS && h[0].end == 265 * MS && h[0].state == 'D');
	trig_watch_free(wt);
}

/* What a thread's cold part is marked as holding (COLD_*). */
static unsigned cold_marks(struct trig_watch *wt, int32_t tid)
{
	return tstate_of(wt, tid)->cold;
}

/* A waking read ahead that no sleep took (two wakings of one sleep, read
 * in order): given up at the thread's next long wait, whose switch-out
 * is later than it, so that the thread's long waits are not all taken
 * the slow way after it; a sleep whose waking came while the thread still
 * ran (before its switch-out: a wakeup that raced its sleep) keeps its
 * episode apart, and the next waits are still found. */
static void test_stale_ahead(void)
{
	struct btr_switch out0 = sw(100 * MS, 7, 1, 0), in0 = sw(170 * MS, 0, 0, 7),
			  out1 = sw(200 * MS, 7, 1, 0), in1 = sw(400 * MS, 0, 0, 7),
			  out2 = sw(420 * MS, 7, 1, 0), in2 = sw(450 * MS, 0, 0, 7),
			  out3 = sw(460 * MS, 7, 0, 0), in3 = sw(500 * MS, 0, 0, 7);
	struct btr_wakeup w0 = wk(150 * MS, 7, 0), w0b = wk(160 * MS, 7, 0),
			  w1 = wk(300 * MS, 7, 0), w2 = wk(410 * MS, 7, 0);
	struct trig_spec s[2];
	struct trig_hit h[4];
	struct trig_watch *wt = watch2(s, "latency>15ms", "blocked>500ms", 1);

	FEED(wt, 0, out0);
	FEED(wt, 0, w0);
	FEED(wt, 0, w0b); /* a second waking of the same sleep: kept ahead */
	CHECK_EQ_I64(cold_marks(wt, 7), COLD_AHEAD);
	FEED(wt, 0, in0);
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK(h[0].start == 150 * MS && h[0].end == 170 * MS);
	FEED(wt, 0, out1);
	FEED(wt, 0, w1);
	FEED(wt, 0, in1); /* 100 ms from its waking */
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK(h[0].start == 300 * MS && h[0].end == 400 * MS);
	CHECK_EQ_I64(cold_marks(wt, 7), 0);
	FEED(wt, 0, w2); /* while it runs: races its sleep */
	FEED(wt, 0, out2);
	FEED(wt, 0, in2); /* no waking after the switch-out: kept apart */
	CHECK_EQ_I64(cold_marks(wt, 7), COLD_EPISODE);
	CHECK_EQ_I64(take(wt, h, 4), 0);
	FEED(wt, 0, out3); /* preempted */
	FEED(wt, 0, in3); /* 40 ms runnable */
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK(h[0].start == 460 * MS && h[0].end == 500 * MS);
	trig_watch_free(wt);
}

/* An encoder for trig_watch_around that counts its calls and refuses the
 * record when *ctx's refuse is set. */
struct enc_probe {
	int calls, typed, refuse;
};

static int probe_enc(void *ctx, const void *rec, size_t len)
{
	struct enc_probe *p = ctx;

	(void)rec;
	(void)len;
	p->calls++;
	return p->refuse ? -EINVAL : 0;
}

/* The typed ones count apart: a whole switch or waking goes to them. */
static int probe_sw(void *ctx, const struct btr_switch *r)
{
	((struct enc_probe *)ctx)->typed++;
	return probe_enc(ctx, r, sizeof(*r));
}

static int probe_wk(void *ctx, const struct btr_wakeup *r)
{
	((struct enc_probe *)ctx)->typed++;
	return probe_enc(ctx, r, sizeof(*r));
}

#define PROBE ((struct trig_enc){ probe_enc, probe_sw, probe_wk })

/* trig_watch_around: every record goes to the encoder, a record it
 * refuses is not watched (its error returned), nor is one too short for
 * its type; the one after them is. */
static void test_around(void)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[2];
	struct enc_probe p = { 0, 0, 0 };
	struct btr_switch out = sw(10 * MS, 7, 1, 0), in = sw(60 * MS, 0, 0, 7);
	struct btr_wakeup w = wk(20 * MS, 7, 0);

	trig_spec_parse("latency>20ms", &s, err, sizeof(err));
	wt = trig_watch_new(&s, 1, 1);
	CHECK_EQ_I64(trig_watch_around(wt, 0, &out, sizeof(out), PROBE, &p), 0);
	/* the waking refused by the encoder: the watch never saw it */
	p.refuse = 1;
	CHECK_EQ_I64(trig_watch_around(wt, 0, &w, sizeof(w), PROBE, &p),
		     -EINVAL);
	p.refuse = 0;
	/* cut short: encoded (the encoder judges it), not watched */
	CHECK_EQ_I64(trig_watch_around(wt, 0, &w, sizeof(w) - 1, PROBE, &p),
		     0);
	/* the switch-in finds no waking read: had either been watched, its
	 * 40 ms wait would be a hit now; the episode is kept instead */
	CHECK_EQ_I64(trig_watch_around(wt, 0, &in, sizeof(in), PROBE, &p), 0);
	CHECK_EQ_I64(p.calls, 4);
	CHECK_EQ_I64(p.typed, 3); /* not the one cut short */
	CHECK_EQ_I64(take(wt, h, 2), 0);
	/* the waking read late pairs it */
	CHECK_EQ_I64(trig_watch_around(wt, 0, &w, sizeof(w), PROBE, &p), 0);
	CHECK_EQ_I64(p.calls, 5);
	CHECK_EQ_I64(take(wt, h, 2), 1);
	CHECK(h[0].start == 20 * MS && h[0].end == 60 * MS);
	trig_watch_free(wt);
}

/* Threads queued on one CPU: the spec fires once when passed, again only
 * after the queue went back under it; a preempted thread is queued, a
 * sleeping one is not. With one reader (the queue of "no CPU" a sink that
 * takes the leaves and gains of threads not queued), the table the one
 * or the paged one. */
static void runqueue_with(bool paged)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[8];
	struct btr_wakeup w;
	struct btr_switch in, out;
	int32_t t;

	trig_spec_parse("runqueue>2", &s, err, sizeof(err));
	wt = watch_made(&s, 1, 4, paged);
	for (t = 10; t < 15; t++) { /* five threads onto CPU 3 */
		w = wk((uint64_t)t * MS, t, 3);
		trig_watch_record(wt, 0, &w, sizeof(w));
	}
	CHECK_EQ_I64(take(wt, h, 8), 1);
	CHECK_EQ_I64(h[0].cpu, 3);
	CHECK_EQ_I64(h[0].value, 3);
	CHECK_EQ_I64(h[0].tid, 12);
	for (t = 10; t < 13; t++) { /* three run: two left */
		in = sw((uint64_t)(20 + t) * MS, 0, 0, t);
		trig_watch_record(wt, 3, &in, sizeof(in));
	}
	w = wk(40 * MS, 20, 3); /* three again */
	trig_watch_record(wt, 0, &w, sizeof(w));
	CHECK_EQ_I64(take(wt, h, 8), 1);
	CHECK_EQ_I64(h[0].tid, 20);
	for (t = 13; t < 15; t++) { /* two run: thread 20 alone */
		in = sw((uint64_t)(40 + t) * MS, 0, 0, t);
		trig_watch_record(wt, 3, &in, sizeof(in));
	}
	/* 13 and 14 go to sleep: still one waiting, nothing fires */
	out = sw(60 * MS, 13, 1, 0);
	trig_watch_record(wt, 3, &out, sizeof(out));
	out = sw(61 * MS, 14, 1, 0);
	trig_watch_record(wt, 3, &out, sizeof(out));
	CHECK_EQ_I64(take(wt, h, 8), 0);
	/* 11 and 12, which ran, are preempted: three waiting, it fires */
	out = sw(62 * MS, 11, 0x100, 0);
	trig_watch_record(wt, 3, &out, sizeof(out));
	CHECK_EQ_I64(take(wt, h, 8), 0);
	out = sw(63 * MS, 12, 0, 0);
	trig_watch_record(wt, 3, &out, sizeof(out));
	CHECK_EQ_I64(take(wt, h, 8), 1);
	CHECK_EQ_I64(h[0].tid, 12);
	CHECK_EQ_I64(h[0].value, 3);
	trig_watch_free(wt);
}

/* Two specs one apart (no count between them in which a gain changes
 * none): each fires as its threshold is passed, and again after the queue
 * went under it. */
static void runqueue_adjacent(bool paged)
{
	struct trig_spec s[2];
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[8];
	struct btr_wakeup w;
	struct btr_switch in;
	int32_t t;

	trig_spec_parse("runqueue>2", &s[0], err, sizeof(err));
	trig_spec_parse("runqueue>3", &s[1], err, sizeof(err));
	wt = watch_made(s, 2, 2, paged);
	for (t = 10; t < 13; t++) {
		w = wk((uint64_t)t * MS, t, 1);
		trig_watch_record(wt, 0, &w, sizeof(w));
	}
	CHECK_EQ_I64(take(wt, h, 8), 1); /* 3 waiting */
	CHECK_EQ_I64(h[0].spec, 0);
	w = wk(13 * MS, 13, 1);
	trig_watch_record(wt, 0, &w, sizeof(w));
	CHECK_EQ_I64(take(wt, h, 8), 1); /* 4 */
	CHECK_EQ_I64(h[0].spec, 1);
	in = sw(20 * MS, 0, 0, 10); /* 3 */
	trig_watch_record(wt, 1, &in, sizeof(in));
	w = wk(21 * MS, 14, 1); /* 4 again */
	trig_watch_record(wt, 0, &w, sizeof(w));
	CHECK_EQ_I64(take(wt, h, 8), 1);
	CHECK_EQ_I64(h[0].spec, 1);
	CHECK_EQ_I64(h[0].tid, 14);
	for (t = 11; t < 15; t++) { /* all run: 0 */
		in = sw((uint64_t)(30 + t) * MS, 0, 0, t);
		trig_watch_record(wt, 1, &in, sizeof(in));
	}
	for (t = 20; t < 24; t++) { /* 1 to 4: both again */
		w = wk((uint64_t)(50 + t) * MS, t, 1);
		trig_watch_record(wt, 0, &w, sizeof(w));
	}
	CHECK_EQ_I64(take(wt, h, 8), 2);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK_EQ_I64(h[0].tid, 22);
	CHECK_EQ_I64(h[1].spec, 1);
	CHECK_EQ_I64(h[1].tid, 23);
	trig_watch_free(wt);
}

static void test_runqueue(void)
{
	runqueue_with(false);
	runqueue_with(true);
	runqueue_adjacent(false);
	runqueue_adjacent(true);
}

/* Specs texts[0..n) muted until 200 ms (as suppressed or as merged), the
 * watch's table paged or not: tid 7 waits 50 ms from a waking (muted), then
 * 40 ms preempted (muted), then 50 ms from a waking after the mute
 * (queued). Checks that `queued` hits came and `counted` were muted. With
 * one latency spec and no comm= the muted ones are counted inline
 * (hit_latency), else in trig_watch_hit: the same counts. */
static void mute_case(const char *const *texts, uint32_t n, bool paged,
		      bool suppressed, int queued, uint64_t counted)
{
	struct trig_spec s[3];
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[4];
	uint64_t merged = 0, supp = 0;
	uint32_t i;
	struct btr_wakeup w1 = wk(100 * MS, 7, 0), w2 = wk(300 * MS, 7, 0);
	struct btr_switch r1 = sw(150 * MS, 0, 0, 7), p1 = sw(155 * MS, 7, 0, 0),
			  r2 = sw(195 * MS, 0, 0, 7), o1 = sw(196 * MS, 7, 1, 0),
			  r3 = sw(350 * MS, 0, 0, 7);

	for (i = 0; i < n; i++)
		CHECK_EQ_I64(trig_spec_parse(texts[i], &s[i], err, sizeof(err)),
			     0);
	wt = watch_made(s, n, 1, paged);
	for (i = 0; i < n; i++)
		trig_watch_mute(wt, i, 200 * MS, suppressed);
	FEED(wt, 0, w1);
	FEED(wt, 0, r1); /* 50 ms from its waking, muted */
	FEED(wt, 0, p1);
	FEED(wt, 0, r2); /* 40 ms preempted, muted */
	FEED(wt, 0, o1);
	FEED(wt, 0, w2);
	FEED(wt, 0, r3); /* 50 ms, after the mute */
	CHECK_EQ_I64(take(wt, h, 4), queued);
	for (i = 0; i < (uint32_t)queued && i < 4; i++)
		CHECK(h[i].end == 350 * MS && h[i].start == 300 * MS);
	trig_watch_muted(wt, &merged, &supp);
	CHECK_EQ_I64(suppressed ? supp : merged, counted);
	CHECK_EQ_I64(suppressed ? merged : supp, 0);
	trig_watch_free(wt);
}

/* A muted spec's hits are counted, not queued, until the time given. */
static void test_mute(void)
{
	static const char *const one[] = { "latency>20ms", "blocked>500ms",
					   "runqueue>8" };
	static const char *const two[] = { "latency>20ms", "latency>45ms" };
	static const char *const other[] = { "latency>20ms comm=other" };
	static const char *const mine[] = { "latency>20ms comm=t7",
					    "blocked>500ms" };
	int k;

	for (k = 0; k < 4; k++) {
		bool paged = k & 1, supp = k & 2;

		mute_case(one, 3, paged, supp, 1, 2); /* counted inline */
		mute_case(two, 2, paged, supp, 2, 3); /* the 40 ms: one */
		mute_case(other, 1, paged, supp, 0, 0);
		mute_case(mine, 2, paged, supp, 1, 2);
	}
}

/* A watch of the one spec `text` (parsed into *s, which it keeps) on 2
 * CPUs, as two reader threads use it; NULL, a check failed, if it cannot
 * be made. */
static struct trig_watch *two_reader_watch(struct trig_spec *s,
					   const char *text)
{
	struct trig_watch *w;
	char err[128];

	CHECK_EQ_I64(trig_spec_parse(text, s, err, sizeof(err)), 0);
	w = trig_watch_new(s, 1, 2);
	CHECK(w != NULL);
	if (w && trig_watch_readers(w, 2)) {
		CHECK(!"trig_watch_readers");
		trig_watch_free(w);
		w = NULL;
	}
	return w;
}

/* A thread's free read by a reader ahead of its last records (the free
 * is in the ring of the CPU that freed it). Reader 1 reads a waking that
 * raced a sleep and a later waking of the running thread; reader 0 the
 * sleep's switch-out (paired as read with the later waking: a false
 * sleep); reader 1 the free; reader 0 the run inside the sleep. The
 * notes, merged in time order, show no sleep that long. */
static void test_free_read_ahead(void)
{
	struct trig_spec spec;
	struct trig_watch *w;
	struct btr_switch in0, out, in;
	struct btr_wakeup k1, k2;
	struct btr_exit fr;
	struct trig_hit h[4];
	uint64_t over = 0;

	w = two_reader_watch(&spec, "blocked>5ms");
	if (!w)
		return;
	in0 = sw(1 * MS, 0, 0, 7);
	k1 = wk(2 * MS + 35000, 7, 0);
	k2 = wk(7 * MS, 7, 0);
	out = sw(2 * MS, 7, 1, 0);
	in = sw(6 * MS, 0, 0, 7);
	memset(&fr, 0, sizeof(fr));
	fr.h.ts = 8 * MS;
	fr.h.type = BTR_REC_FREE;
	fr.pid = fr.tgid = 7;
	FEED(w, 0, in0); /* reader 0 */
	FEED(w, 1, k1);  /* reader 1, ahead */
	FEED(w, 1, k2);
	FEED(w, 0, out); /* reader 0: a sleep of 2 to 7 ms, as paired */
	FEED(w, 1, fr);  /* reader 1 */
	FEED(w, 0, in);  /* reader 0: it ran at 6 ms */
	trig_watch_frontier(w, 0, UINT64_MAX, NULL, 0);
	trig_watch_frontier(w, 1, UINT64_MAX, NULL, 0);
	CHECK_EQ_I64(trig_watch_take(w, h, 4, &over), 0);
	trig_watch_free(w);
}

/* The sweep gives back the pages of the thread table whose threads are
 * all freed, and only those: a live thread's state outlives it, a freed
 * thread's tid works again after it. The table one or paged. */
static void sweep_case(bool paged)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), per = page / 32, i;
	struct trig_spec s[2];
	char err[128];
	struct trig_watch *wt;
	struct trig_hit h[4];
	struct btr_exit fr;
	struct btr_switch out, in;
	struct btr_wakeup w;
	int32_t base = 64 * 1024, tid;
	bool was_paged;

	trig_spec_parse("latency>20ms", &s[0], err, sizeof(err));
	trig_spec_parse("blocked>500ms", &s[1], err, sizeof(err));
	wt = watch_made(s, 2, 1, paged);
	/* three pages of threads, each asleep */
	for (i = 0; i < 3 * per; i++) {
		out = sw(1 * MS, base + (int32_t)i, 1, 0);
		trig_watch_record(wt, 0, &out, sizeof(out));
	}
	CHECK_EQ_I64(trig_watch_resident(wt, &was_paged), 3 * page);
	CHECK(was_paged == paged);
	/* one of the third page runs 99 ms later, its waking unread: the
	 * episode is kept apart, in its cold part, a page of its own */
	in = sw(100 * MS, 0, 0, base + 2 * (int32_t)per + 5);
	trig_watch_record(wt, 0, &in, sizeof(in));
	CHECK_EQ_I64(trig_watch_resident(wt, &was_paged), 4 * page);
	/* all freed but one, in the first page */
	memset(&fr, 0, sizeof(fr));
	fr.h.type = BTR_REC_FREE;
	for (i = 0; i < 3 * per; i++) {
		if (i == 1)
			continue;
		fr.h.ts = 200 * MS;
		fr.pid = base + (int32_t)i;
		trig_watch_record(wt, 0, &fr, sizeof(fr));
	}
	CHECK_EQ_I64(trig_watch_resident(wt, &was_paged), 4 * page);
	CHECK_EQ_I64(trig_watch_sweep(wt, TABLE_BYTES / page), 3);
	CHECK_EQ_I64(trig_watch_resident(wt, &was_paged), page);
	CHECK_EQ_I64(trig_watch_sweep(wt, TABLE_BYTES / page), 0);
	/* the live one's sleep from 1 ms is whole: 600 ms */
	w = wk(601 * MS, base + 1, 0);
	trig_watch_record(wt, 0, &w, sizeof(w));
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 1);
	CHECK_EQ_I64(h[0].tid, base + 1);
	CHECK(h[0].start == 1 * MS && h[0].end == 601 * MS);
	/* a tid of a page given back, reused: preempted 50 ms */
	tid = base + 2 * (int32_t)per + 3;
	out = sw(700 * MS, tid, 0x100, 0);
	in = sw(750 * MS, 0, 0, tid);
	trig_watch_record(wt, 0, &out, sizeof(out));
	trig_watch_record(wt, 0, &in, sizeof(in));
	CHECK_EQ_I64(take(wt, h, 4), 1);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK_EQ_I64(h[0].tid, tid);
	CHECK(h[0].start == 700 * MS && h[0].end == 750 * MS);
	CHECK_EQ_I64(trig_watch_resident(wt, &was_paged), 2 * page);
	trig_watch_free(wt);
}

static void test_sweep(void)
{
	sweep_case(false);
	sweep_case(true);
}

/* A thread's queue is kept in 16 bits: a watch for more than
 * TRIG_CPUS_MAX CPUs is refused, one for that many made. */
static void test_cpu_limit(void)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *wt;

	trig_spec_parse("runqueue>4", &s, err, sizeof(err));
	CHECK(trig_watch_new(&s, 1, TRIG_CPUS_MAX + 1) == NULL);
	wt = trig_watch_new(&s, 1, TRIG_CPUS_MAX);
	CHECK(wt != NULL);
	trig_watch_free(wt);
}

/* --trigger-max: N/TIME or none; each refusal says which part is wrong. */
static void test_rate_parse(void)
{
	static const struct {
		const char *arg, *why;
	} bad[] = {
		{ "0/1h", "N '0' is not from 1 to 1000000 (none: no limit)" },
		{ "1000001/1h", "N '1000001' is not from 1" },
		{ "/1h", "N '' is not" },
		{ "x/1h", "N 'x' is not" },
		{ "12345678901234567890/1h", "N '12345678901234567890' is not" },
		{ "3/0", "TIME '0' is not a time over 0" },
		{ "3/", "TIME '' is not" },
		{ "3/1x", "TIME '1x' is not" },
		{ "3", "neither N/TIME (e.g. 10/1h) nor none" },
		{ "", "neither N/TIME" },
		{ "nonE", "neither N/TIME" },
		{ "none/1h", "N 'none' is not" },
	};
	uint32_t max = 7;
	uint64_t win = 7;
	char err[128];
	size_t i;

	CHECK_EQ_I64(trig_rate_parse("3/1s", &max, &win, err, sizeof(err)), 0);
	CHECK_EQ_I64(max, 3);
	CHECK(win == 1000 * MS);
	CHECK_EQ_I64(trig_rate_parse("1000000/1h", &max, &win, err,
				     sizeof(err)), 0);
	CHECK_EQ_I64(max, 1000000);
	CHECK(win == 3600000 * MS);
	/* none: no limit, as trig_rate_init takes a max of 0 */
	CHECK_EQ_I64(trig_rate_parse("none", &max, &win, err, sizeof(err)), 0);
	CHECK_EQ_I64(max, 0);
	CHECK(win == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK_EQ_I64(trig_rate_parse(bad[i].arg, &max, &win, err,
					     sizeof(err)), -1);
		if (!strstr(err, bad[i].why))
			fprintf(stderr, "%s: '%s', not '%s'\n", bad[i].arg,
				err, bad[i].why);
		CHECK(strstr(err, bad[i].why) != NULL);
	}
}

static void test_rate(void)
{
	struct trig_rate r;
	uint64_t t;

	CHECK_EQ_I64(trig_rate_init(&r, 3, 1000 * MS), 0);
	CHECK(trig_rate_allow(&r, 0));
	CHECK(trig_rate_allow(&r, 100 * MS));
	CHECK(trig_rate_next(&r, 150 * MS) == 150 * MS);
	CHECK(trig_rate_allow(&r, 200 * MS));
	CHECK(trig_rate_next(&r, 250 * MS) == 1000 * MS);
	CHECK(!trig_rate_allow(&r, 900 * MS));
	CHECK(trig_rate_allow(&r, 1000 * MS)); /* the first left the window */
	CHECK(!trig_rate_allow(&r, 1050 * MS));
	CHECK(trig_rate_allow(&r, 1100 * MS));
	trig_rate_free(&r);
	/* a window that would wrap past the end of time saturates there */
	CHECK_EQ_I64(trig_rate_init(&r, 1, UINT64_MAX - 10), 0);
	CHECK(trig_rate_allow(&r, 100));
	CHECK(!trig_rate_allow(&r, 200));
	CHECK(trig_rate_next(&r, 200) == UINT64_MAX);
	trig_rate_free(&r);
	/* no limit (--trigger-max none): every trigger may act at once */
	CHECK_EQ_I64(trig_rate_init(&r, 0, 0), 0);
	for (t = 0; t < 1000; t++)
		CHECK(trig_rate_allow(&r, t));
	CHECK(trig_rate_next(&r, 1000) == 1000);
	trig_rate_free(&r);
}

/* The limiter the storms' log lines share (util/log.h). */
static void test_log_limit(void)
{
	struct log_limit l = { 0, 0 };
	uint64_t held = 99;

	CHECK(log_limit_due(&l, 100, 10, &held));
	CHECK(held == 0);
	CHECK(!log_limit_due(&l, 105, 10, &held));
	CHECK(!log_limit_due(&l, 109, 10, &held));
	CHECK(log_limit_due(&l, 110, 10, &held));
	CHECK(held == 2);
	CHECK(!log_limit_due(&l, 111, 10, &held));
}

static void test_files(void)
{
	char dir[] = "/tmp/btr-unit-trig.XXXXXX", p[5][64];
	struct trig_files f = { .budget = 250 };
	int i, fd;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < 5; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/t.%d.pb", dir, i + 1);
		fd = open(p[i], O_WRONLY | O_CREAT, 0600);
		CHECK(fd >= 0);
		close(fd);
		if (i < 4)
			CHECK_EQ_I64(trig_files_add(&f, p[i], 100), 0);
	}
	/* 400 bytes in four files over 250: the two oldest removed */
	CHECK_EQ_I64(f.removed, 2);
	CHECK(access(p[0], F_OK) != 0 && access(p[1], F_OK) != 0);
	CHECK(access(p[2], F_OK) == 0 && access(p[3], F_OK) == 0);
	/* one file over the budget alone is kept */
	CHECK_EQ_I64(trig_files_add(&f, p[4], 1000), 0);
	CHECK_EQ_I64(f.n, 1);
	CHECK_EQ_I64(f.removed, 4);
	CHECK(access(p[4], F_OK) == 0);
	trig_files_free(&f);
	unlink(p[4]);
	rmdir(dir);
}

/* A snapshot that cannot be removed (here a folder: unlink gives EISDIR,
 * as a read-only or busy file gives its error) is left, out of the
 * account, and not counted as removed; the next oldest go instead. */
static void test_files_unremovable(void)
{
	char dir[] = "/tmp/btr-unit-trig.XXXXXX", p[4][64];
	struct trig_files f = { .budget = 250 };
	int i, fd;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < 4; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/t.%d.pb", dir, i + 1);
		if (i == 0) {
			CHECK(mkdir(p[i], 0700) == 0);
		} else {
			fd = open(p[i], O_WRONLY | O_CREAT, 0600);
			CHECK(fd >= 0);
			close(fd);
		}
	}
	CHECK_EQ_I64(trig_files_add(&f, p[0], 100), 0);
	CHECK_EQ_I64(trig_files_add(&f, p[1], 100), 0);
	CHECK_EQ_I64(trig_files_add(&f, p[2], 100), 0);
	/* 300 over 250: the oldest cannot go, and leaves the account */
	CHECK_EQ_I64(f.removed, 0);
	CHECK(access(p[0], F_OK) == 0);
	CHECK_EQ_I64(f.n, 2);
	CHECK(f.total == 200);
	CHECK_EQ_I64(trig_files_add(&f, p[3], 100), 0);
	CHECK_EQ_I64(f.removed, 1);
	CHECK(access(p[1], F_OK) != 0);
	CHECK(access(p[2], F_OK) == 0 && access(p[3], F_OK) == 0);
	trig_files_free(&f);
	rmdir(p[0]);
	unlink(p[2]);
	unlink(p[3]);
	rmdir(dir);
}

/* With reader threads (trigger/notes.c): the records are noted, and
 * watched by the main thread once every reader's frontier is past them,
 * merged in time order. A wait whose waking is in one reader's ring and
 * whose run is in the other's, handed over in the wrong order, is the
 * wait one reader finds; so are a queue's gains from one ring and its
 * loss from the other. A reader far behind holds the notes back until
 * NOTES_PENDING_MAX wait, then every note handed over is watched as it
 * is, and counted. */
static void test_notes(void)
{
	struct trig_spec s[2];
	char err[128];
	struct trig_watch *w;
	struct trig_hit h[4];
	struct btr_wakeup r;
	struct btr_switch in;
	const uint32_t ring0 = 0, ring1 = 1;
	uint64_t n;
	int32_t t;

	CHECK_EQ_I64(trig_spec_parse("runqueue>2", &s[0], err, sizeof(err)), 0);
	CHECK_EQ_I64(trig_spec_parse("latency>20ms", &s[1], err, sizeof(err)),
		     0);
	w = trig_watch_new(s, 2, 2);
	if (!w || trig_watch_readers(w, 2)) {
		CHECK(!"trig_watch_readers");
		trig_watch_free(w);
		return;
	}
	/* three threads woken onto CPU 1 from ring 0 (reader 0); the first
	 * runs on CPU 1 at 40 ms (reader 1): a wait of 30 ms */
	for (t = 10; t < 13; t++) {
		r = wk((uint64_t)t * MS, t, 1);
		trig_watch_record(w, 0, &r, sizeof(r));
	}
	in = sw(40 * MS, 0, 0, 10);
	trig_watch_record(w, 1, &in, sizeof(in));
	trig_watch_frontier(w, 1, 100 * MS, &ring1, 1);
	CHECK_EQ_I64(take(w, h, 4), 0); /* reader 0 is not past them */
	trig_watch_frontier(w, 0, 100 * MS, &ring0, 1);
	CHECK_EQ_I64(take(w, h, 4), 2);
	CHECK_EQ_I64(h[0].spec, 0);
	CHECK_EQ_I64(h[0].cpu, 1);
	CHECK_EQ_I64(h[0].value, 3);
	CHECK_EQ_I64(h[0].tid, 12);
	CHECK_EQ_I64(h[1].spec, 1);
	CHECK_EQ_I64(h[1].tid, 10);
	CHECK(h[1].start == 10 * MS && h[1].end == 40 * MS);
	CHECK_EQ_I64(trig_watch_inexact(w), 0);
	/* reader 1 stays behind: the notes wait, up to NOTES_PENDING_MAX
	 * of them (two threads onto CPU 0, then one of them woken again and
	 * again) */
	r = wk(200 * MS, 13, 0);
	trig_watch_record(w, 0, &r, sizeof(r));
	for (n = 0; n < NOTES_PENDING_MAX - 8; n++) {
		r = wk(201 * MS + n, 14, 0);
		trig_watch_record(w, 0, &r, sizeof(r));
	}
	trig_watch_frontier(w, 0, 2000 * MS, &ring0, 1);
	CHECK_EQ_I64(take(w, h, 4), 0);
	CHECK_EQ_I64(trig_watch_inexact(w), 0);
	/* a third, and past the bound: every note handed over watched */
	r = wk(2001 * MS, 15, 0);
	trig_watch_record(w, 0, &r, sizeof(r));
	for (n = 0; n < 16; n++) {
		r = wk(2002 * MS + n, 14, 0);
		trig_watch_record(w, 0, &r, sizeof(r));
	}
	trig_watch_frontier(w, 0, 3000 * MS, &ring0, 1);
	CHECK_EQ_I64(take(w, h, 4), 1);
	CHECK_EQ_I64(h[0].cpu, 0);
	CHECK_EQ_I64(h[0].value, 3);
	CHECK_EQ_I64(h[0].tid, 15);
	CHECK(trig_watch_inexact(w) > NOTES_PENDING_MAX);
	trig_watch_frontier(w, 1, 3000 * MS, &ring1, 1);
	CHECK_EQ_I64(take(w, h, 4), 0);
	trig_watch_free(w);
}

/* In the sanitizer's build, an allocation refused (test_readers_enomem's
 * RLIMIT_AS) returns NULL, as it does without it, instead of ending the
 * test with a report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

/* The address space this process has mapped, in bytes (0: unknown). */
static rlim_t mapped_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

/* trig_watch_readers out of memory: the notes of 60000 CPUs' rings take
 * some 8 MiB, refused under a limit of a few MiB more than is mapped:
 * -ENOMEM, and the watch is freed whole (the sanitizer's build finds a
 * leak). The same watch without the limit takes reader threads. */
static void test_readers_enomem(void)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *w;
	struct rlimit old, lim;
	rlim_t used;

	CHECK_EQ_I64(trig_spec_parse("runqueue>2", &s, err, sizeof(err)), 0);
	w = trig_watch_new(&s, 1, 60000);
	CHECK(w != NULL);
	used = mapped_bytes();
	CHECK(used > 0);
	if (!w || !used || getrlimit(RLIMIT_AS, &old)) {
		trig_watch_free(w);
		return;
	}
	lim = old;
	lim.rlim_cur = used + ((rlim_t)4 << 20);
	CHECK_EQ_I64(setrlimit(RLIMIT_AS, &lim), 0);
	CHECK_EQ_I64(trig_watch_readers(w, 2), -ENOMEM);
	CHECK_EQ_I64(setrlimit(RLIMIT_AS, &old), 0);
	trig_watch_free(w);
	w = trig_watch_new(&s, 1, 60000);
	CHECK(w != NULL && trig_watch_readers(w, 2) == 0);
	trig_watch_free(w);
}

/* Notes lost to memory: a reader's list that cannot grow (an RLIMIT_AS
 * some MiB over what is mapped) loses the notes past it, counts them as
 * inexact, and the watch goes on: a wait whose waking was noted before
 * and whose run is noted after, by the other reader, is found. */
static void test_notes_enomem(void)
{
	struct trig_spec s;
	char err[128];
	struct trig_watch *w;
	struct trig_hit h[4];
	struct rlimit old, lim;
	struct btr_wakeup r;
	struct btr_switch in;
	const uint32_t ring0 = 0, ring1 = 1;
	const uint64_t flood = 200000;
	uint64_t n, lost;
	rlim_t used;

	CHECK_EQ_I64(trig_spec_parse("latency>20ms", &s, err, sizeof(err)), 0);
	w = trig_watch_new(&s, 1, 2);
	if (!w || trig_watch_readers(w, 2)) {
		CHECK(!"trig_watch_readers");
		trig_watch_free(w);
		return;
	}
	r = wk(1 * MS, 7, 1);
	trig_watch_record(w, 0, &r, sizeof(r));
	used = mapped_bytes();
	CHECK(used > 0);
	if (!used || getrlimit(RLIMIT_AS, &old)) {
		trig_watch_free(w);
		return;
	}
	lim = old;
	lim.rlim_cur = used + ((rlim_t)16 << 20);
	CHECK_EQ_I64(setrlimit(RLIMIT_AS, &lim), 0);
	/* 200000 notes of 88 bytes: the list's doubling past 131072 (11 MiB
	 * to 22) is refused */
	for (n = 0; n < flood; n++) {
		r = wk(2 * MS + n, 9, 0);
		trig_watch_record(w, 0, &r, sizeof(r));
	}
	CHECK_EQ_I64(setrlimit(RLIMIT_AS, &old), 0);
	in = sw(50 * MS, 0, 0, 7);
	trig_watch_record(w, 1, &in, sizeof(in));
	trig_watch_frontier(w, 0, UINT64_MAX, &ring0, 1);
	trig_watch_frontier(w, 1, UINT64_MAX, &ring1, 1);
	CHECK_EQ_I64(take(w, h, 4), 1);
	CHECK_EQ_I64(h[0].tid, 7);
	CHECK(h[0].start == 1 * MS && h[0].end == 50 * MS);
	lost = trig_watch_inexact(w);
	fprintf(stderr, "notes lost to memory: %llu of %llu\n",
		(unsigned long long)lost, (unsigned long long)flood);
	CHECK(lost > 0 && lost < flood);
	trig_watch_free(w);
}

int main(void)
{
	RUN(test_spec);
	RUN(test_latency_orders);
	RUN(test_stale_waking);
	RUN(test_long_then_short);
	RUN(test_preempt_and_comm);
	RUN(test_warm);
	RUN(test_wakings_in_the_way);
	RUN(test_waking_ahead);
	RUN(test_stale_ahead);
	RUN(test_around);
	RUN(test_runqueue);
	RUN(test_notes);
	RUN(test_readers_enomem);
	RUN(test_notes_enomem);
	RUN(test_mute);
	RUN(test_free_read_ahead);
	RUN(test_sweep);
	RUN(test_cpu_limit);
	RUN(test_rate_parse);
	RUN(test_rate);
	RUN(test_log_limit);
	RUN(test_files);
	RUN(test_files_unremovable);
	return unit_finish();
}
