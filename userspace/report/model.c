/* Thread states, sched slices and latencies from ordered events
 * (model.h). */
#include "report/model.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

void model_init(struct model *m, const struct model_opts *o)
{
	memset(m, 0, sizeof(*m));
	hmap_init(&m->idx, 8, sizeof(uint32_t), hmap_random_seed());
	m->o = *o;
}

void model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nthr; i++)
		free(m->thr[i].hist);
	free(m->thr);
	hmap_free(&m->idx);
	free(m->cpu);
	memset(m, 0, sizeof(*m));
}

static struct thread *thread_of(struct model *m, uint32_t machine, int32_t tid)
{
	uint64_t key = (uint64_t)machine << 32 | (uint32_t)tid;
	struct thread *t;
	uint32_t *i;
	bool added;

	i = hmap_insert(&m->idx, &key, &added);
	if (!i) {
		m->oom = true;
		return NULL;
	}
	if (!added)
		return &m->thr[*i];
	if (grow_array((void **)&m->thr, &m->capthr, m->nthr + 1,
		       sizeof(*m->thr), 1024)) {
		hmap_remove(&m->idx, &key);
		m->oom = true;
		return NULL;
	}
	*i = (uint32_t)m->nthr;
	t = &m->thr[m->nthr++];
	memset(t, 0, sizeof(*t));
	{
		t->tid = tid;
		t->tgid = -1;
		t->machine = machine;
		t->waker = -1;
		t->last_cpu = -1;
	}
	return t;
}

/* The part of [a, b) inside the window. */
static uint64_t clip(const struct model *m, int64_t a, int64_t b)
{
	if (a < m->from)
		a = m->from;
	if (b > m->to)
		b = m->to;
	return b > a ? (uint64_t)(b - a) : 0;
}

static bool in_window(const struct model *m, int64_t ts)
{
	return ts >= m->from && ts <= m->to;
}

static enum tstate state_of(uint16_t prev_state)
{
	if (prev_state & 0xfe00)
		return TS_OTHER; /* not a state of kernels >= 4.14 */
	if (!(prev_state & 0xff))
		return prev_state & 0x100 ? TS_RP : TS_R;
	if (prev_state & 0x01)
		return TS_S;
	if (prev_state & 0x02)
		return TS_D;
	return TS_OTHER;
}

static void note_waker(struct thread *t, int32_t waker)
{
	struct waker_slot *min = &t->wk[0];
	int i;

	for (i = 0; i < WAKER_SLOTS; i++) {
		struct waker_slot *s = &t->wk[i];

		if (s->count && s->tid == waker) {
			s->count++;
			return;
		}
		if (!s->count) {
			*s = (struct waker_slot){ waker, 1 };
			return;
		}
		if (s->count < min->count)
			min = s;
	}
	/* space-saving: the least frequent gives its slot */
	*min = (struct waker_slot){ waker, min->count + 1 };
}

/* Ends t's current state at ts; switch_in when it ends by running on the
 * CPU of queue qi. */
static void close_state(struct model *m, struct thread *t, int64_t ts,
			bool switch_in, size_t qi)
{
	uint64_t d;

	switch (t->state) {
	case TS_R:
	case TS_RP:
		if (!switch_in || !in_window(m, ts) || !m->cpu[qi].selected ||
		    ts < t->since)
			break;
		d = (uint64_t)(ts - t->since);
		if (!t->hist && !(t->hist = calloc(1, sizeof(*t->hist)))) {
			m->oom = true;
			break;
		}
		hist_add(t->hist, d);
		t->lat_sum += d;
		if (d >= t->lat_max) {
			t->lat_max = d;
			t->lat_max_ts = ts;
		}
		if (t->waker >= 0)
			note_waker(t, t->waker);
		break;
	case TS_S:
		t->off_s += clip(m, t->since, ts);
		break;
	case TS_D:
		t->off_d += clip(m, t->since, ts);
		break;
	default:
		break;
	}
	t->waker = -1;
}

static void open_state(struct thread *t, enum tstate s, int64_t ts)
{
	t->state = (uint8_t)s;
	t->since = ts;
}

static void on_switch(struct model *m, const struct cpu_queue *q, size_t qi,
		      const struct rev *e)
{
	struct cpu_stat *c = &m->cpu[qi];
	bool full = e->kind == REV_SWITCH_FULL;
	int32_t prev = full ? e->pid2 : c->cur;
	struct thread *t;

	if (in_window(m, e->ts) && c->selected)
		c->switches++;
	if (full && c->known && prev != c->cur)
		c->mismatched++;
	if (c->known && prev == c->cur) {
		uint64_t d = clip(m, c->since, e->ts);

		if (c->selected) {
			if (c->cur)
				c->busy += d;
			else
				c->idle += d;
		}
		if (c->cur && c->selected && (t = thread_of(m, q->machine, c->cur)))
			t->cpu_ns += d;
	}
	if ((c->known || full) && prev) {
		enum tstate s = state_of(e->state);

		t = thread_of(m, q->machine, prev);
		if (t) {
			close_state(m, t, e->ts, false, qi);
			open_state(t, s, e->ts);
			if (in_window(m, e->ts) && c->selected) {
				if (s == TS_R || s == TS_RP)
					t->invol++;
				else
					t->vol++;
			}
		}
	}
	c->known = true;
	c->cur = e->pid;
	c->since = e->ts;
	if (!e->pid || !(t = thread_of(m, q->machine, e->pid)))
		return;
	close_state(m, t, e->ts, true, qi);
	open_state(t, TS_RUNNING, e->ts);
	if (t->last_cpu >= 0 && (size_t)t->last_cpu != qi &&
	    in_window(m, e->ts) && c->selected)
		c->migrations_in++;
	t->last_cpu = (int32_t)qi;
	if (e->name)
		t->name = e->name;
}

static void on_waking(struct model *m, const struct cpu_queue *q, size_t qi,
		      const struct rev *e)
{
	struct cpu_stat *c = &m->cpu[qi];
	int32_t waker;
	struct thread *t;

	if (e->kind == REV_WAKING) {
		if (!c->known) {
			/* trace_processor drops it: no task to wake from */
			m->skipped_wakings++;
			return;
		}
		waker = c->cur;
	} else {
		waker = e->pid2;
	}
	if (!e->pid || !(t = thread_of(m, q->machine, e->pid)))
		return;
	if (e->name && !t->name)
		t->name = e->name;
	if (t->state == TS_RUNNING || t->state == TS_R || t->state == TS_RP)
		return;
	close_state(m, t, e->ts, false, qi);
	open_state(t, TS_R, e->ts);
	t->waker = waker;
}

static void on_newtask(struct model *m, const struct cpu_queue *q,
		       const struct rev *e)
{
	struct thread *parent, *t;
	int32_t tgid = e->pid;

	if (!e->pid)
		return;
	if (e->flags & REV_CLONE_THREAD) {
		parent = thread_of(m, q->machine, e->pid2);
		tgid = parent && parent->tgid >= 0 ? parent->tgid : e->pid2;
	}
	t = thread_of(m, q->machine, e->pid);
	if (!t)
		return;
	t->tgid = tgid;
	if (e->name)
		t->name = e->name;
	close_state(m, t, e->ts, false, 0);
	open_state(t, TS_R, e->ts);
	t->waker = e->pid2;
}

static void grow_cpus(struct model *m, size_t qi, const struct cpu_queue *q)
{
	size_t n = qi + 1, i;
	struct cpu_stat *c;

	c = realloc(m->cpu, n * sizeof(*c));
	if (!c) {
		m->oom = true;
		return;
	}
	for (i = m->ncpu; i < n; i++)
		c[i] = (struct cpu_stat){ 0 };
	m->cpu = c;
	m->ncpu = n;
	m->cpu[qi].selected = !m->o.cpus ||
		(q->cpu < m->o.ncpus && m->o.cpus[q->cpu]);
}

void model_event(struct model *m, const struct cpu_queue *q, size_t qi,
		 const struct rev *e)
{
	struct thread *t;

	if (!m->started) {
		m->started = true;
		m->first = e->ts;
		m->from = m->o.has_from ? e->ts + m->o.from : INT64_MIN;
		m->to = m->o.has_to ? e->ts + m->o.to : INT64_MAX;
	}
	if (qi >= m->ncpu) {
		size_t i;

		/* queues are numbered as they appear: fill up to qi */
		for (i = m->ncpu; i <= qi && !m->oom; i++)
			grow_cpus(m, i, q - (qi - i));
		if (m->oom)
			return;
	}
	m->last = e->ts;
	m->events++;
	switch (e->kind) {
	case REV_SWITCH:
	case REV_SWITCH_FULL:
		on_switch(m, q, qi, e);
		break;
	case REV_WAKING:
	case REV_WAKING_FULL:
		on_waking(m, q, qi, e);
		break;
	case REV_NEWTASK:
		on_newtask(m, q, e);
		break;
	case REV_RENAME:
		if (e->pid && (t = thread_of(m, q->machine, e->pid)))
			t->name = e->name;
		break;
	default:
		break;
	}
}

void model_thread_info(struct model *m, uint32_t machine, int32_t tid,
		       int32_t tgid, uint32_t name)
{
	struct thread *t;

	if (!tid || !(t = thread_of(m, machine, tid)))
		return;
	if (tgid > 0)
		t->tgid = tgid;
	if (name)
		t->name = name;
}

const struct thread *model_find(const struct model *m, uint32_t machine,
				int32_t tid)
{
	uint64_t key = (uint64_t)machine << 32 | (uint32_t)tid;
	const uint32_t *i = hmap_find(&m->idx, &key);

	return i ? &m->thr[*i] : NULL;
}

void model_finish(struct model *m)
{
	(void)m; /* open slices and states have no length */
}
