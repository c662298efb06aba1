/* Per-CPU prev_pid check of sched_switch events (see switch_check.h). */
#include "stats/switch_check.h"
#include "util/grow.h"

#include <errno.h>
#include <stdlib.h>

typedef Perfetto__Protos__FtraceEventBundle Bundle;

/* CPUs beyond this are not checked (hostile input). */
#define MAX_CPU 4096

struct sw {
	uint64_t ts;
	size_t seq;     /* keeps equal timestamps in bundle order */
	int64_t next, prev;
	bool full;      /* a full event: prev is known */
};

static int cmp_sw(const void *pa, const void *pb)
{
	const struct sw *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static size_t min_n(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* One switch on CPU c, as trace_processor's sched tracker takes it. */
static void take(struct switch_check *s, struct switch_cpu *c,
		 const struct sw *v)
{
	if (v->full && c->open && v->prev != c->running)
		s->mismatched++;
	/* a compact switch opens a slice only once the task is known */
	c->open = v->full || c->known;
	c->known = true;
	c->running = v->next;
	s->seen = true;
}

/* The bundle's switches, compact and regular, with absolute timestamps. */
static size_t collect(const Bundle *b, struct sw *v)
{
	const Perfetto__Protos__FtraceEventBundle__CompactSched *cs =
		b->compact_sched;
	size_t i, n = 0;
	uint64_t acc = 0;

	if (cs) {
		size_t k = min_n(cs->n_switch_timestamp, cs->n_switch_next_pid);

		for (i = 0; i < k; i++, n++) {
			acc += cs->switch_timestamp[i]; /* then deltas */
			v[n] = (struct sw){ acc, n, cs->switch_next_pid[i], -1,
					    false };
		}
	}
	for (i = 0; i < b->n_event; i++) {
		const Perfetto__Protos__FtraceEvent *e = b->event[i];

		if (e->event_case !=
		    PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH)
			continue;
		v[n] = (struct sw){ e->timestamp, n, e->sched_switch->next_pid,
				    e->sched_switch->prev_pid, true };
		n++;
	}
	return n;
}

int switch_check_bundle(struct switch_check *s, const Bundle *b)
{
	size_t cap = b->n_event, i, n;
	struct sw *v;

	if (b->compact_sched)
		cap += min_n(b->compact_sched->n_switch_timestamp,
			     b->compact_sched->n_switch_next_pid);
	if (!cap || !b->has_cpu || b->cpu >= MAX_CPU)
		return 0;
	if (grow_zeroed((void **)&s->cpu, &s->ncpu, (size_t)b->cpu + 1,
			sizeof(*s->cpu)))
		return -ENOMEM;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = collect(b, v);
	qsort(v, n, sizeof(*v), cmp_sw);
	for (i = 0; i < n; i++)
		take(s, &s->cpu[b->cpu], &v[i]);
	free(v);
	return 0;
}

int switch_check_compact(struct switch_check *s, uint32_t cpu, uint64_t n,
			 int64_t last_next)
{
	struct switch_cpu *c;

	if (!n || cpu >= MAX_CPU)
		return 0;
	if (grow_zeroed((void **)&s->cpu, &s->ncpu, (size_t)cpu + 1,
			sizeof(*s->cpu)))
		return -ENOMEM;
	c = &s->cpu[cpu];
	/* as take() would do n times: only the last switch stays */
	c->open = c->known || n > 1;
	c->known = true;
	c->running = last_next;
	s->seen = true;
	return 0;
}

void switch_check_free(struct switch_check *s)
{
	free(s->cpu);
	s->cpu = NULL;
	s->ncpu = 0;
}
