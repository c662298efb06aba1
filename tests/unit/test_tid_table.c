/* Unit tests of where perf samples printed without a pid find their
 * process: the bounded tid -> tgid table (sync/perf/tid_table.c), what one
 * TracePacket adds to it (sync/perf/trace_tids.c: ProcessTree processes and
 * threads, sched_process_exit events; packets built with protobuf-c from
 * our protos), and the collection from trace files, which uses only the
 * packets of the machine asked for. */
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "convert/convert.h"
#include "sync/perf/tid_table.h"
#include "sync/perf/trace_tids.h"
#include "perfetto/trace.pb-c.h"
#include "util/wire.h"
#include "unit.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__ProcessTree__Thread Thread;
typedef Perfetto__Protos__ProcessTree__Process Process;
typedef Perfetto__Protos__FtraceEvent Event;

static void test_table(void)
{
	struct tid_table t;
	int32_t tid;
	bool all = true;

	tid_table_init(&t, 0);
	CHECK_EQ_I64(t.max, TID_TABLE_MAX);
	CHECK_EQ_I64(tid_table_tgid(&t, 5), -1); /* empty: no slots yet */
	CHECK_EQ_I64(tid_table_add(&t, 11, 10), 0);
	CHECK_EQ_I64(tid_table_add(&t, 10, 10), 0);
	CHECK_EQ_I64(tid_table_add(&t, 11, 10), 0); /* again: no change */
	CHECK_EQ_I64(tid_table_tgid(&t, 11), 10);
	CHECK_EQ_I64(tid_table_tgid(&t, 10), 10);
	CHECK_EQ_I64(tid_table_tgid(&t, 12), -1);
	CHECK_EQ_I64(t.map.n, 2);
	/* the idle task, unknown tgids and negative ids are not threads */
	CHECK_EQ_I64(tid_table_add(&t, 0, 0), 0);
	CHECK_EQ_I64(tid_table_add(&t, 13, 0), 0);
	CHECK_EQ_I64(tid_table_add(&t, 14, -1), 0);
	CHECK_EQ_I64(tid_table_add(&t, -3, 10), 0);
	CHECK_EQ_I64(t.map.n, 2);
	CHECK_EQ_I64(tid_table_tgid(&t, 0), -1);
	CHECK_EQ_I64(tid_table_tgid(&t, 13), -1);
	CHECK_EQ_I64(tid_table_tgid(&t, -3), -1);
	/* a tid reused by another process: no answer, even if seen again */
	CHECK_EQ_I64(tid_table_add(&t, 11, 20), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 11), -1);
	CHECK_EQ_I64(tid_table_add(&t, 11, 10), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 11), -1);
	CHECK_EQ_I64(t.reused, 1);
	CHECK_EQ_I64(tid_table_tgid(&t, 10), 10);
	tid_table_free(&t);
	CHECK_EQ_I64(tid_table_tgid(&t, 10), -1);

	/* many tids (pid_max is up to 4M): every one found after growing */
	tid_table_init(&t, 0);
	for (tid = 1; tid <= 300000; tid++)
		if (tid_table_add(&t, tid * 7, tid % 977 + 1))
			abort();
	for (tid = 1; tid <= 300000; tid++)
		all &= tid_table_tgid(&t, tid * 7) == tid % 977 + 1 &&
		       tid_table_tgid(&t, tid * 7 + 1) == -1;
	CHECK(all);
	CHECK_EQ_I64(t.map.n, 300000);
	CHECK(t.map.cap > 2 * t.map.n && t.map.cap <= 4 * t.map.n);
	tid_table_free(&t);
}

/* The limit: tids past it are refused and counted; known ones still
 * answer, and are still marked when reused. */
static void test_limit(void)
{
	struct tid_table t;
	int32_t tid;
	int err = 0;

	tid_table_init(&t, 1000);
	for (tid = 1; tid <= 5000; tid++)
		err |= tid_table_add(&t, tid, 1);
	CHECK_EQ_I64(err, 0);
	CHECK_EQ_I64(t.map.n, 1000);
	CHECK_EQ_I64(t.refused, 4000);
	CHECK(t.map.cap <= 2048); /* 12 bytes a slot: the memory bound */
	CHECK_EQ_I64(tid_table_tgid(&t, 1000), 1);
	CHECK_EQ_I64(tid_table_tgid(&t, 1001), -1);
	CHECK_EQ_I64(tid_table_add(&t, 1000, 2), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 1000), -1);
	CHECK_EQ_I64(t.refused, 4000);
	tid_table_free(&t);
}

/* Tids an input could pick to share their low bits (with an unkeyed
 * multiplicative hash they all fell into one slot cluster, making the
 * table quadratic): found, in a few probes each on average. */
static void test_hostile_tids(void)
{
	struct tid_table t;
	int32_t k;
	bool all = true;
	uint64_t ops = 0;

	tid_table_init(&t, 0);
	for (k = 1; k <= 100000; k++, ops++)
		if (tid_table_add(&t, k << 12, 7))
			abort();
	for (k = 1; k <= 100000; k++, ops += 2)
		all &= tid_table_tgid(&t, k << 12) == 7 &&
		       tid_table_tgid(&t, (k << 12) + 1) == -1;
	CHECK(all);
	CHECK_EQ_I64(t.map.n, 100000);
	printf("  %.2f probes per operation\n", (double)t.map.probes / (double)ops);
	CHECK(t.map.probes < 4 * ops);
	tid_table_free(&t);
}

/* A packed TracePacket into b (freed by the caller). */
static void pack(const Packet *p, struct wbuf *b)
{
	b->len = 0;
	if (!wbuf_reserve(b, perfetto__protos__trace_packet__get_packed_size(p)))
		abort();
	b->len = perfetto__protos__trace_packet__pack(p, b->p);
}

static void tree_packet(struct wbuf *b, uint32_t machine)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessTree tree = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	Thread th[3] = { PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT,
			 PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT,
			 PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT };
	Thread *pth[3] = { &th[0], &th[1], &th[2] };
	Process pr = PERFETTO__PROTOS__PROCESS_TREE__PROCESS__INIT, *ppr = &pr;

	pr.has_pid = 1;
	pr.pid = 100; /* a process: its main thread */
	th[0].has_tid = th[0].has_tgid = 1;
	th[0].tid = 101;
	th[0].tgid = 100;
	th[0].name = "worker";
	th[1].has_tid = 1; /* no tgid: says nothing */
	th[1].tid = 102;
	th[2].has_tid = th[2].has_tgid = 1;
	th[2].tid = -5; /* a 10-byte varint, not a thread */
	th[2].tgid = 100;
	tree.n_processes = 1;
	tree.processes = &ppr;
	tree.n_threads = 3;
	tree.threads = pth;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
	pkt.process_tree = &tree;
	pkt.has_timestamp = 1;
	pkt.timestamp = 1000;
	pkt.has_machine_id = machine != 0;
	pkt.machine_id = machine;
	pack(&pkt, b);
}

/* A bundle: a newtask (ignored) and the exit of thread tid of tgid. */
static void exit_packet(struct wbuf *b, int32_t tid, int32_t tgid)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle bundle =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Event ev[2] = { PERFETTO__PROTOS__FTRACE_EVENT__INIT,
			PERFETTO__PROTOS__FTRACE_EVENT__INIT };
	Event *pev[2] = { &ev[0], &ev[1] };
	Perfetto__Protos__TaskNewtaskFtraceEvent nt =
		PERFETTO__PROTOS__TASK_NEWTASK_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedProcessExitFtraceEvent ex =
		PERFETTO__PROTOS__SCHED_PROCESS_EXIT_FTRACE_EVENT__INIT;

	nt.has_pid = 1;
	nt.pid = 300;
	ev[0].has_timestamp = ev[0].has_pid = 1;
	ev[0].timestamp = 5;
	ev[0].pid = 299;
	ev[0].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK;
	ev[0].task_newtask = &nt;
	ex.has_pid = ex.has_tgid = 1;
	ex.pid = tid;
	ex.tgid = tgid;
	ex.comm = "short";
	ev[1].has_timestamp = ev[1].has_pid = 1;
	ev[1].timestamp = 6;
	ev[1].pid = tid;
	ev[1].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT;
	ev[1].sched_process_exit = &ex;
	bundle.has_cpu = 1;
	bundle.n_event = 2;
	bundle.event = pev;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	pkt.ftrace_events = &bundle;
	pack(&pkt, b);
}

static void test_packets(void)
{
	struct tid_table t;
	struct wbuf b = { 0 };
	/* ProcessTree { Thread { tid 7, tgid 6 }, a Thread cut short } */
	static const uint8_t bad[] = { 0x12, 0x09, 0x12, 0x04, 0x08, 0x07,
				       0x18, 0x06, 0x12, 0x09, 0x08 };

	tid_table_init(&t, 0);
	tree_packet(&b, 0);
	CHECK_EQ_I64(trace_tids_packet(&t, b.p, b.len), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 100), 100);
	CHECK_EQ_I64(tid_table_tgid(&t, 101), 100);
	CHECK_EQ_I64(tid_table_tgid(&t, 102), -1);
	CHECK_EQ_I64(t.map.n, 2);
	exit_packet(&b, 201, 200);
	CHECK_EQ_I64(trace_tids_packet(&t, b.p, b.len), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 201), 200);
	CHECK_EQ_I64(tid_table_tgid(&t, 300), -1); /* newtask: no tgid */
	CHECK_EQ_I64(tid_table_tgid(&t, 299), -1); /* the event's task */
	CHECK_EQ_I64(t.map.n, 3);
	/* a ProcessTree cut short: what comes before the cut counts */
	CHECK_EQ_I64(trace_tids_packet(&t, bad, sizeof(bad)), 0);
	CHECK_EQ_I64(tid_table_tgid(&t, 7), 6);
	CHECK_EQ_I64(t.map.n, 4);
	/* a packet cut short, or with other fields only: nothing */
	CHECK_EQ_I64(trace_tids_packet(&t, bad, 5), 0);
	CHECK_EQ_I64(trace_tids_packet(&t, (const uint8_t *)"\x40\x01", 2), 0);
	CHECK_EQ_I64(t.map.n, 4);
	wbuf_free(&b);
	tid_table_free(&t);
}

/* Appends packet b to a trace file being built. */
static void frame(struct wbuf *file, const struct wbuf *b)
{
	wbuf_field_bytes(file, 1, b->p, b->len);
}

/* Opens the trace in file as an input read from an unlinked file. */
static void open_input(struct input *in, const struct wbuf *file)
{
	FILE *f = tmpfile();
	int fd;

	if (!f || file->oom || fwrite(file->p, 1, file->len, f) != file->len ||
	    fflush(f) || (fd = dup(fileno(f))) < 0)
		abort();
	fclose(f);
	if (input_open_fd(in, "t.pb", fd, 0))
		abort();
}

/* The tids of machine m in the input are exactly want[0..n) (tid, tgid). */
static void check_collect(struct input *in, uint32_t m,
			  const int32_t (*want)[2], size_t n)
{
	struct tid_table t;
	size_t i;

	tid_table_init(&t, 0);
	CHECK_EQ_I64(trace_tids_collect(&t, &in, 1, m), 0);
	CHECK_EQ_I64(t.map.n, n);
	for (i = 0; i < n; i++)
		CHECK_EQ_I64(tid_table_tgid(&t, want[i][0]), want[i][1]);
	CHECK_EQ_I64(t.reused + t.refused, 0);
	tid_table_free(&t);
}

/* A trace with a ProcessTree of its own machine and, on remote machine 7,
 * the exit of thread 501 of process 500; then another tree naming thread
 * 101 for process 900 on machine 7 (another machine's tid 101). */
static void test_collect(void)
{
	static const int32_t own[][2] = { { 100, 100 }, { 101, 100 } };
	static const int32_t remote[][2] = { { 501, 500 }, { 101, 900 } };
	struct wbuf file = { 0 }, b = { 0 };
	struct input in, *failed = NULL;
	struct sync_stats st = { 0 };
	struct timeline tl;
	uint32_t m0, m7;
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessTree tree = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	Thread th = PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT, *pth = &th;
	struct input *inputs[1] = { &in };

	tree_packet(&b, 0);
	frame(&file, &b);
	exit_packet(&b, 501, 500);
	/* the same bundle on machine 7: field 98 appended */
	wbuf_field_varint(&b, 98, 7);
	frame(&file, &b);
	th.has_tid = th.has_tgid = 1;
	th.tid = 101;
	th.tgid = 900;
	tree.n_threads = 1;
	tree.threads = &pth;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
	pkt.process_tree = &tree;
	pkt.has_machine_id = 1;
	pkt.machine_id = 7;
	pack(&pkt, &b);
	frame(&file, &b);
	open_input(&in, &file);
	if (timeline_init(&tl))
		abort();
	CHECK_EQ_I64(convert_prepare(inputs, 1, 0, &tl, &st, &failed), 0);
	CHECK_EQ_I64(in.scan.fm.n, 2);
	m0 = in.scan.fm.v[0].machine;
	m7 = in.scan.fm.v[file_machines_find(&in.scan.fm, 7)].machine;
	CHECK(m0 != m7);

	check_collect(&in, m0, own, 2);
	check_collect(&in, m7, remote, 2);
	check_collect(&in, 99, NULL, 0); /* a machine of no input */
	check_collect(&in, m0, own, 2);  /* read again from the start */

	timeline_free(&tl);
	input_close(&in);
	wbuf_free(&b);
	wbuf_free(&file);
}

int main(void)
{
	RUN(test_table);
	RUN(test_limit);
	RUN(test_hostile_tids);
	RUN(test_packets);
	RUN(test_collect);
	return unit_finish();
}
