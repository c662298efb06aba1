/* Thread ids and their processes from the trace inputs (see
 * trace_tids.h): a walk of the few messages that name them. */
#include "sync/perf/trace_tids.h"

#include <stdbool.h>

#include "util/wire.h"

/* Field numbers (Perfetto's). */
enum {
	PKT_PROCESS_TREE = 2,      /* TracePacket (packet_info.h: the rest) */
	TREE_PROCESSES = 1,        /* ProcessTree */
	TREE_THREADS = 2,
	PROCESS_PID = 1,           /* ProcessTree.Process */
	THREAD_TID = 1,            /* ProcessTree.Thread */
	THREAD_TGID = 3,
	BUNDLE_EVENT = 2,          /* FtraceEventBundle */
	EVENT_PROCESS_EXIT = 238,  /* FtraceEvent */
	EXIT_PID = 2,              /* SchedProcessExitFtraceEvent */
	EXIT_TGID = 3,
};

typedef int (*msg_fn)(struct tid_table *t, const uint8_t *p, size_t n);

/* What to do with a length-delimited field. */
struct on_field {
	uint32_t num;
	msg_fn fn;
};

/* Calls the handler of each length-delimited field of the message that
 * has one; stops at a malformed field. */
static int walk(struct tid_table *t, const uint8_t *p, size_t n,
		const struct on_field *on, size_t non)
{
	struct wire_reader r;
	struct wire_field f;
	size_t i;
	int err;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		for (i = 0; i < non && f.type == WIRE_LEN; i++) {
			if (f.num == on[i].num &&
			    (err = on[i].fn(t, f.data, (size_t)f.val)))
				return err;
		}
	}
	return 0;
}

/* Varint fields a and b of a message (the last of each), -1 if absent. */
static void two_ints(const uint8_t *p, size_t n, uint32_t a, uint32_t b,
		     int32_t *va, int32_t *vb)
{
	struct wire_reader r;
	struct wire_field f;

	*va = *vb = -1;
	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		if (f.type == WIRE_VARINT && f.num == a)
			*va = (int32_t)f.val;
		else if (f.type == WIRE_VARINT && f.num == b)
			*vb = (int32_t)f.val;
	}
}

/* A message whose fields a and b are a tid and its tgid. */
static int tid_pair(struct tid_table *t, const uint8_t *p, size_t n,
		    uint32_t a, uint32_t b)
{
	int32_t tid, tgid;

	two_ints(p, n, a, b, &tid, &tgid);
	return tid_table_add(t, tid, tgid);
}

/* A process is its main thread's tgid. */
static int on_process(struct tid_table *t, const uint8_t *p, size_t n)
{
	int32_t pid, none;

	two_ints(p, n, PROCESS_PID, 0, &pid, &none);
	return tid_table_add(t, pid, pid);
}

static int on_thread(struct tid_table *t, const uint8_t *p, size_t n)
{
	return tid_pair(t, p, n, THREAD_TID, THREAD_TGID);
}

static int on_exit_event(struct tid_table *t, const uint8_t *p, size_t n)
{
	return tid_pair(t, p, n, EXIT_PID, EXIT_TGID);
}

static int on_tree(struct tid_table *t, const uint8_t *p, size_t n)
{
	static const struct on_field on[] = { { TREE_PROCESSES, on_process },
					      { TREE_THREADS, on_thread } };

	return walk(t, p, n, on, 2);
}

static int on_event(struct tid_table *t, const uint8_t *p, size_t n)
{
	static const struct on_field on[] = { { EVENT_PROCESS_EXIT,
						on_exit_event } };

	return walk(t, p, n, on, 1);
}

static int on_bundle(struct tid_table *t, const uint8_t *p, size_t n)
{
	static const struct on_field on[] = { { BUNDLE_EVENT, on_event } };

	return walk(t, p, n, on, 1);
}

int trace_tids_packet(struct tid_table *t, const uint8_t *pkt, size_t len)
{
	static const struct on_field on[] = { { PKT_PROCESS_TREE, on_tree },
					      { PKT_FTRACE_EVENTS, on_bundle } };

	return walk(t, pkt, len, on, 2);
}

static bool on_machine(const struct input *in, uint32_t machine)
{
	size_t s;

	for (s = 0; s < in->scan.fm.n; s++)
		if (in->scan.fm.v[s].machine == machine)
			return true;
	return false;
}

static int collect_one(struct tid_table *t, struct input *in,
		       uint32_t machine)
{
	struct input_packet p;
	uint32_t slot;
	int err = 0;

	if (input_rewind(in))
		return 0;
	while (!err && input_next(in, &p) > 0) {
		slot = file_machines_find(&in->scan.fm, p.info.machine_id);
		if (in->scan.fm.v[slot].machine == machine)
			err = trace_tids_packet(t, p.data, p.len);
	}
	return err;
}

int trace_tids_collect(struct tid_table *t, struct input **in, size_t n,
		       uint32_t machine)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		if (in[i]->file.kind == INPUT_PROTO && on_machine(in[i], machine))
			err = collect_one(t, in[i], machine);
	return err;
}
