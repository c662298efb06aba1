/* Unit tests of a recording's triggers (record/triggers.c) in stop mode:
 * a condition that holds fires once (a Trigger packet at the turn that
 * took it), the same condition again before the stop is merged into it,
 * the stop is due after --trigger-delay, and what the last records hold
 * after the stop (read as the recording ends) is merged into it too, not
 * fired: all of it counted in the trailer's TraceAttributes. */
#include <string.h>
#include <unistd.h>

#include "coll_sink.h"
#include "record.h"
#include "record/options.h"
#include "record/triggers.h"
#include "trigger/watch.h"
#include "trig_recs.h"
#include "unit.h"

#define MS 1000000ull

/* Thread tid preempted on cpu at `out`, run again at `in`: a wait. */
static void wait_of(struct trig_watch *w, uint32_t cpu, int32_t tid,
		    uint64_t out, uint64_t in)
{
	struct btr_switch o = sw(out, tid, 0, 0), i = sw(in, 0, 0, tid);

	FEED(w, cpu, o);
	FEED(w, cpu, i);
}

/* The value of TraceAttributes key `key` among the sink's packets; -1
 * if none has it. */
static int64_t attribute(const struct coll *c, const char *key)
{
	int64_t v = -1;
	size_t i, k;

	for (i = 0; i < c->n; i++) {
		Perfetto__Protos__TracePacket *p = coll_unpack(c, i);

		CHECK(p != NULL);
		if (p && p->data_case ==
				 PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES)
			for (k = 0; k < p->trace_attributes->n_attribute; k++)
				if (!strcmp(p->trace_attributes->attribute[k]->key,
					    key))
					v = p->trace_attributes->attribute[k]
						    ->long_value;
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	return v;
}

/* The Trigger packets among the sink's: how many, and the time and name
 * of the last. */
static size_t triggers(const struct coll *c, uint64_t *ts, char *name,
		       size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < c->n; i++) {
		Perfetto__Protos__TracePacket *p = coll_unpack(c, i);

		CHECK(p != NULL);
		if (p && p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRIGGER) {
			n++;
			*ts = p->timestamp;
			snprintf(name, len, "%s", p->trigger->trigger_name);
		}
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	return n;
}

static void test_stop_merges(void)
{
	char *argv[] = { "bpftrace-rec", "-o", "/tmp/btr-unit-rec-trig.pb",
			 "--trigger", "latency>20ms", "--trigger",
			 "blocked>300ms", "--trigger-mode", "stop",
			 "--trigger-delay", "100ms", NULL };
	struct record_opts o;
	struct coll data, trailer;
	struct rec_triggers *t;
	struct trig_watch *w;
	struct btr_switch s_out;
	struct btr_wakeup s_wake;
	int32_t me = (int32_t)getpid();
	char err[256], name[64] = "";
	uint64_t ts = 0;
	bool done = false;

	memset(&o, 0, sizeof(o));
	CHECK_EQ_I64(record_opts_parse(11, argv, &o, &done), 0);
	CHECK(!done);
	CHECK(o.trigger_stop);
	coll_init(&data);
	coll_init(&trailer);
	t = rec_triggers_new(&o, 2, &data.sink, err, sizeof(err));
	CHECK(t != NULL);
	if (!t)
		return;
	w = rec_triggers_watch(t);
	CHECK(w != NULL);

	/* a 50 ms wait ends at 150 ms: taken at the turn at 160 ms, it
	 * fires; the stop is due at 260 ms */
	wait_of(w, 0, me, 100 * MS, 150 * MS);
	CHECK_EQ_I64(rec_triggers_tick(t, 160 * MS), TRIG_NONE);
	CHECK_EQ_I64(triggers(&data, &ts, name, sizeof(name)), 1);
	CHECK(ts == 160 * MS);
	CHECK_STR(name, "latency>20ms");
	/* the same condition before the stop: merged into it */
	wait_of(w, 1, me + 1, 170 * MS, 200 * MS);
	CHECK_EQ_I64(rec_triggers_tick(t, 210 * MS), TRIG_NONE);
	CHECK_EQ_I64(rec_triggers_tick(t, 270 * MS), TRIG_STOP);
	/* read in the last passes, after the stop was due: a wait past its
	 * due time and a long sleep of a condition not in it. Neither fires
	 * (no Trigger packet); both are merged into the stop */
	wait_of(w, 0, me + 2, 300 * MS, 340 * MS);
	s_out = sw(280 * MS, me + 3, 1, 0);
	s_wake = wk(700 * MS, me + 3, 1);
	FEED(w, 1, s_out);
	FEED(w, 0, s_wake);
	CHECK_EQ_I64(rec_triggers_tick(t, 705 * MS), TRIG_NONE);
	rec_triggers_finish(t, 710 * MS);
	CHECK_EQ_I64(triggers(&data, &ts, name, sizeof(name)), 1);
	CHECK_EQ_I64(rec_triggers_trailer(t, &trailer.sink, 1, false), 0);
	CHECK_EQ_I64(attribute(&trailer, "bpftrace_rec.triggers_fired"), 1);
	CHECK_EQ_I64(attribute(&trailer, "bpftrace_rec.triggers_merged"), 3);
	CHECK_EQ_I64(attribute(&trailer, "bpftrace_rec.triggers_suppressed"), 0);
	/* one reader: every record watched in time order */
	CHECK_EQ_I64(attribute(&trailer,
			       "bpftrace_rec.trigger_records_inexact"), 0);
	rec_triggers_log(t);
	rec_triggers_free(t);
	coll_free(&data);
	coll_free(&trailer);
}

int main(void)
{
	RUN(test_stop_merges);
	return unit_finish();
}
