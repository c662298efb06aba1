/* Unit tests of the stats' sched_switch prev_pid check (stats/switch_check.c):
 * compact switches set the running task, full ones are checked against it,
 * in timestamp order within a bundle, per CPU. */
#include <stdlib.h>

#include "stats/switch_check.h"
#include "unit.h"

typedef Perfetto__Protos__FtraceEventBundle Bundle;
typedef Perfetto__Protos__FtraceEventBundle__CompactSched Compact;
typedef Perfetto__Protos__FtraceEvent Event;
typedef Perfetto__Protos__SchedSwitchFtraceEvent Switch;

/* A bundle of CPU `cpu` with compact switches (delta timestamps) and up to
 * 4 full ones. */
struct fixture {
	Bundle b;
	Compact cs;
	uint64_t ts[8];
	int32_t next[8];
	Event ev[4];
	Switch sw[4];
	Event *evp[4];
};

static void fx_init(struct fixture *f, uint32_t cpu)
{
	memset(f, 0, sizeof(*f));
	perfetto__protos__ftrace_event_bundle__init(&f->b);
	perfetto__protos__ftrace_event_bundle__compact_sched__init(&f->cs);
	f->b.has_cpu = 1;
	f->b.cpu = cpu;
	f->b.compact_sched = &f->cs;
	f->cs.switch_timestamp = f->ts;
	f->cs.switch_next_pid = f->next;
	f->b.event = f->evp;
}

static void fx_compact(struct fixture *f, uint64_t abs_ts, int32_t next)
{
	size_t i = f->cs.n_switch_timestamp, k;
	uint64_t before = 0;

	for (k = 0; k < i; k++)
		before += f->ts[k];
	f->ts[i] = abs_ts - before;
	f->next[i] = next;
	f->cs.n_switch_timestamp = f->cs.n_switch_next_pid = i + 1;
}

static void fx_full(struct fixture *f, uint64_t ts, int32_t prev, int32_t next)
{
	size_t i = f->b.n_event++;

	perfetto__protos__ftrace_event__init(&f->ev[i]);
	perfetto__protos__sched_switch_ftrace_event__init(&f->sw[i]);
	f->ev[i].has_timestamp = 1;
	f->ev[i].timestamp = ts;
	f->ev[i].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	f->ev[i].sched_switch = &f->sw[i];
	f->sw[i].has_prev_pid = f->sw[i].has_next_pid = 1;
	f->sw[i].prev_pid = prev;
	f->sw[i].next_pid = next;
	f->evp[i] = &f->ev[i];
}

static void test_order_within_bundle(void)
{
	struct switch_check s = { 0 };
	struct fixture f;

	fx_init(&f, 1);
	fx_compact(&f, 100, 10);
	fx_compact(&f, 300, 30);
	fx_full(&f, 200, 10, 20); /* between them: matches 10 */
	fx_full(&f, 400, 99, 40); /* 30 was running: mismatch */
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 1);
	CHECK(s.seen);
	/* the next bundle of CPU 1 goes on from 40 */
	fx_init(&f, 1);
	fx_full(&f, 500, 40, 50);
	fx_full(&f, 600, 41, 60);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 2);
	switch_check_free(&s);
}

static void test_cpus_apart(void)
{
	struct switch_check s = { 0 };
	struct fixture f;

	fx_init(&f, 0);
	fx_compact(&f, 100, 7);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	/* CPU 3's first switch: nothing known to check against */
	fx_init(&f, 3);
	fx_full(&f, 150, 5, 8);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	fx_init(&f, 0);
	fx_full(&f, 200, 7, 9);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 0);
	switch_check_free(&s);
}

/* As trace_processor: a CPU's first compact switch opens no slice, so a
 * full switch right after it is not checked; a full one opens a slice. */
static void test_first_slice(void)
{
	struct switch_check s = { 0 };
	struct fixture f;

	fx_init(&f, 0);
	fx_compact(&f, 100, 7);
	fx_full(&f, 200, 5, 9); /* no slice open yet: not a mismatch */
	fx_full(&f, 300, 6, 10); /* 9's slice is open: a mismatch */
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 1);
	fx_init(&f, 1);
	fx_full(&f, 100, 1, 2); /* first on CPU 1, full: opens a slice */
	fx_full(&f, 200, 3, 4);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 2);
	/* a negative prev_pid in a full event is a prev_pid like any */
	fx_init(&f, 1);
	fx_full(&f, 300, -4, 5);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK_EQ_I64(s.mismatched, 3);
	switch_check_free(&s);
}

static void test_no_switches(void)
{
	struct switch_check s = { 0 };
	struct fixture f;

	fx_init(&f, 2);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK(!s.seen);
	/* a CPU number past the bound is ignored, not allocated */
	fx_init(&f, 1u << 30);
	fx_compact(&f, 1, 1);
	CHECK_EQ_I64(switch_check_bundle(&s, &f.b), 0);
	CHECK(!s.seen && s.ncpu == 0);
	switch_check_free(&s);
}

int main(void)
{
	RUN(test_order_within_bundle);
	RUN(test_cpus_apart);
	RUN(test_first_slice);
	RUN(test_no_switches);
	return unit_finish();
}
