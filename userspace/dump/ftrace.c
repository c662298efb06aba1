/* Ftrace bundles for `dump`: regular events and the compact sched arrays,
 * merged and stably sorted by timestamp within the bundle, with compact
 * switches and wakings completed from the per-CPU running task. */
#include <stdlib.h>

#include "dump/dump.h"
#include "record.h"

typedef Perfetto__Protos__FtraceEventBundle Bundle;
typedef Perfetto__Protos__FtraceEventBundle__CompactSched Compact;
typedef Perfetto__Protos__FtraceEvent Event;

enum ev_kind { EV_REGULAR, EV_SWITCH, EV_WAKING };

struct ev {
	uint64_t ts;
	bool has_ts;
	enum ev_kind kind;
	size_t idx;  /* into b->event or the compact arrays */
	size_t seq;  /* keeps the sort stable */
};

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The usable length of parallel arrays: the shortest one, then cut at the
 * first comm index outside the intern table (trace_processor stops the
 * stream there too). */
static size_t usable(struct dump_ctx *c, const char *what,
		     const size_t *lens, size_t n_lens, const uint32_t *comm,
		     size_t n_table)
{
	size_t n = lens[0], i;
	bool differ = false;

	for (i = 1; i < n_lens; i++) {
		differ |= lens[i] != lens[0];
		if (lens[i] < n)
			n = lens[i];
	}
	if (differ)
		dump_warn(c, "compact %s arrays differ in length; using the "
			  "first %zu", what, n);
	for (i = 0; i < n; i++)
		if (comm[i] >= n_table) {
			dump_warn(c, "compact %s %zu: comm index %u outside "
				  "the intern table; skipping the rest",
				  what, i, comm[i]);
			return i;
		}
	return n;
}

/* Appends the compact events of one stream with absolute timestamps. */
static size_t add_compact(struct ev *evs, size_t n, enum ev_kind kind,
			  const uint64_t *ts, size_t count)
{
	uint64_t acc = 0;
	size_t i;

	for (i = 0; i < count; i++, n++) {
		acc += ts[i]; /* first absolute, then deltas */
		evs[n] = (struct ev){ acc, true, kind, i, n };
	}
	return n;
}

/* prev_pid and prev_comm (or the waker) from the task running on the CPU. */
static const struct cpu_task *running(struct dump_ctx *c, const Bundle *b)
{
	return b->has_cpu ? sched_state_current(&c->sched, b->cpu) : NULL;
}

static void put_switch(struct dump_ctx *c, const Bundle *b, uint64_t ts,
		       const Compact *cs, size_t i)
{
	const struct cpu_task *t = running(c, b);
	const char *comm = cs->intern_table[cs->switch_next_comm_index[i]];
	struct line *l = dump_begin(c, "sched_switch", true, ts, b->has_cpu,
				    b->cpu);
	char buf[16];

	if (t) {
		line_int(l, "prev_pid", t->pid);
		line_str(l, "prev_comm", t->comm);
	} else {
		line_unknown(l, "prev_pid");
		line_unknown(l, "prev_comm");
	}
	line_state(l, "prev_state", cs->switch_prev_state[i],
		   sched_state_letters(cs->switch_prev_state[i], buf));
	line_int(l, "next_pid", cs->switch_next_pid[i]);
	line_str(l, "next_comm", comm);
	line_int(l, "next_prio", cs->switch_next_prio[i]);
	line_bool(l, "compact", true);
	dump_end(c);
	if (b->has_cpu)
		sched_state_switch(&c->sched, b->cpu, cs->switch_next_pid[i],
				   comm);
}

/* The context a wakeup came from (common_flags, when it is not 0):
 * irq_context=1 for a hard or soft interrupt, as trace_processor reads it
 * (thread_state.irq_context), and the flags themselves. */
static void put_irq(struct line *l, uint32_t flags)
{
	if (!flags)
		return;
	line_hex(l, "common_flags", flags);
	if (flags & (BTR_FLAG_HARDIRQ | BTR_FLAG_SOFTIRQ))
		line_int(l, "irq_context", 1);
}

static void put_waking(struct dump_ctx *c, const Bundle *b, uint64_t ts,
		       const Compact *cs, size_t i)
{
	const struct cpu_task *t = running(c, b);
	struct line *l = dump_begin(c, "sched_waking", true, ts, b->has_cpu,
				    b->cpu);

	line_int(l, "pid", cs->waking_pid[i]);
	line_str(l, "comm", cs->intern_table[cs->waking_comm_index[i]]);
	line_int(l, "prio", cs->waking_prio[i]);
	line_int(l, "target_cpu", cs->waking_target_cpu[i]);
	if (t)
		line_int(l, "waker_pid", t->pid);
	else
		line_unknown(l, "waker_pid");
	if (i < cs->n_waking_common_flags)
		put_irq(l, cs->waking_common_flags[i]);
	line_bool(l, "compact", true);
	dump_end(c);
}

/* FtraceEvent.pid, the task that emitted the event, under `key`. */
static void put_common_pid(struct line *l, const char *key, const Event *e)
{
	if (e->has_pid)
		line_uint(l, key, e->pid);
	else
		line_unknown(l, key);
}

/* The kernel function a blocked reason names: its caller iid looked up in
 * the packet's InternedData.kernel_symbols (the recorder writes every
 * bundle's own); caller_iid=N when it is not there, ? when unset. */
static void put_blocked(struct dump_ctx *c, struct line *l,
			const Perfetto__Protos__SchedBlockedReasonFtraceEvent *r)
{
	const Perfetto__Protos__InternedData *in = c->interned;
	size_t i;

	line_int(l, "pid", r->pid);
	if (!r->has_caller) {
		line_unknown(l, "function");
	} else {
		for (i = 0; in && i < in->n_kernel_symbols; i++)
			if (in->kernel_symbols[i]->iid == r->caller)
				break;
		if (in && i < in->n_kernel_symbols)
			line_str(l, "function",
				 line_printf(l, "%.*s",
					     (int)in->kernel_symbols[i]->str.len,
					     (const char *)in->kernel_symbols[i]->str.data));
		else
			line_uint(l, "caller_iid", r->caller);
	}
	line_uint(l, "io_wait", r->io_wait);
}

static void put_regular(struct dump_ctx *c, const Bundle *b, const Event *e)
{
	struct line *l;
	char buf[16];

#define BEGIN(kind) \
	(l = dump_begin(c, kind, e->has_timestamp, e->timestamp, b->has_cpu, \
			b->cpu))
	switch (e->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH: {
		const Perfetto__Protos__SchedSwitchFtraceEvent *s =
			e->sched_switch;

		BEGIN("sched_switch");
		line_int(l, "prev_pid", s->prev_pid);
		line_str(l, "prev_comm", s->prev_comm);
		line_state(l, "prev_state", s->prev_state,
			   sched_state_letters(s->prev_state, buf));
		line_int(l, "next_pid", s->next_pid);
		line_str(l, "next_comm", s->next_comm);
		line_int(l, "next_prio", s->next_prio);
		dump_end(c);
		if (b->has_cpu)
			sched_state_switch(&c->sched, b->cpu, s->next_pid,
					   s->next_comm);
		return;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKING:
		BEGIN("sched_waking");
		line_int(l, "pid", e->sched_waking->pid);
		line_str(l, "comm", e->sched_waking->comm);
		line_int(l, "prio", e->sched_waking->prio);
		line_int(l, "target_cpu", e->sched_waking->target_cpu);
		put_common_pid(l, "waker_pid", e);
		put_irq(l, e->has_common_flags ? e->common_flags : 0);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON:
		BEGIN("sched_blocked_reason");
		put_blocked(c, l, e->sched_blocked_reason);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW:
		BEGIN("sched_wakeup_new");
		line_int(l, "pid", e->sched_wakeup_new->pid);
		line_str(l, "comm", e->sched_wakeup_new->comm);
		line_int(l, "prio", e->sched_wakeup_new->prio);
		line_int(l, "target_cpu", e->sched_wakeup_new->target_cpu);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK:
		BEGIN("task_newtask");
		line_int(l, "pid", e->task_newtask->pid);
		line_str(l, "comm", e->task_newtask->comm);
		line_hex(l, "clone_flags", e->task_newtask->clone_flags);
		line_int(l, "oom_score_adj", e->task_newtask->oom_score_adj);
		put_common_pid(l, "parent_pid", e);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME:
		BEGIN("task_rename");
		line_int(l, "pid", e->task_rename->pid);
		line_str(l, "oldcomm", e->task_rename->oldcomm);
		line_str(l, "newcomm", e->task_rename->newcomm);
		if (b->has_cpu)
			sched_state_rename(&c->sched, b->cpu,
					   e->task_rename->pid,
					   e->task_rename->newcomm);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK:
		BEGIN("sched_process_fork");
		line_int(l, "parent_pid", e->sched_process_fork->parent_pid);
		line_str(l, "parent_comm", e->sched_process_fork->parent_comm);
		line_int(l, "child_pid", e->sched_process_fork->child_pid);
		line_str(l, "child_comm", e->sched_process_fork->child_comm);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC:
		BEGIN("sched_process_exec");
		line_int(l, "pid", e->sched_process_exec->pid);
		line_int(l, "old_pid", e->sched_process_exec->old_pid);
		line_str(l, "filename", e->sched_process_exec->filename);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT:
		BEGIN("sched_process_exit");
		line_int(l, "pid", e->sched_process_exit->pid);
		line_int(l, "tgid", e->sched_process_exit->tgid);
		line_str(l, "comm", e->sched_process_exit->comm);
		line_int(l, "prio", e->sched_process_exit->prio);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE:
		BEGIN("sched_process_free");
		line_int(l, "pid", e->sched_process_free->pid);
		line_str(l, "comm", e->sched_process_free->comm);
		line_int(l, "prio", e->sched_process_free->prio);
		break;
	default:
		/* An event type we do not model (kept as unknown fields). */
		BEGIN("unknown_event");
		put_common_pid(l, "pid", e);
		line_unknown_fields(l, "fields", &e->base);
		break;
	}
#undef BEGIN
	dump_end(c);
}

void dump_ftrace_bundle(struct dump_ctx *c, const Bundle *b)
{
	const Compact *cs = b->compact_sched;
	size_t n_sw = 0, n_wk = 0, n = 0, i;
	struct ev *evs;

	if (cs) {
		size_t sw[] = { cs->n_switch_timestamp,
				cs->n_switch_prev_state, cs->n_switch_next_pid,
				cs->n_switch_next_prio,
				cs->n_switch_next_comm_index };
		size_t wk[] = { cs->n_waking_timestamp, cs->n_waking_pid,
				cs->n_waking_target_cpu, cs->n_waking_prio,
				cs->n_waking_comm_index };

		n_sw = usable(c, "switch", sw, 5, cs->switch_next_comm_index,
			      cs->n_intern_table);
		n_wk = usable(c, "waking", wk, 5, cs->waking_comm_index,
			      cs->n_intern_table);
	}
	evs = malloc((b->n_event + n_sw + n_wk + 1) * sizeof(*evs));
	if (!evs) {
		dump_warn(c, "out of memory; bundle skipped");
		return;
	}
	for (i = 0; i < b->n_event; i++, n++)
		evs[n] = (struct ev){ b->event[i]->timestamp,
				      b->event[i]->has_timestamp, EV_REGULAR,
				      i, n };
	if (cs) {
		n = add_compact(evs, n, EV_SWITCH, cs->switch_timestamp, n_sw);
		n = add_compact(evs, n, EV_WAKING, cs->waking_timestamp, n_wk);
	}
	qsort(evs, n, sizeof(*evs), cmp_ev);

	if (b->has_lost_events && b->lost_events) {
		dump_begin(c, "lost_events", n && evs[0].has_ts,
			   n ? evs[0].ts : 0, b->has_cpu, b->cpu);
		dump_end(c);
	}
	for (i = 0; i < n; i++) {
		switch (evs[i].kind) {
		case EV_REGULAR:
			put_regular(c, b, b->event[evs[i].idx]);
			break;
		case EV_SWITCH:
			put_switch(c, b, evs[i].ts, cs, evs[i].idx);
			break;
		case EV_WAKING:
			put_waking(c, b, evs[i].ts, cs, evs[i].idx);
			break;
		}
	}
	free(evs);
}
