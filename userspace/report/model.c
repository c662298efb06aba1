/* Thread states, sched slices and latencies from ordered events
 * (model.h). */
#include "report/model.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TID_TABLE_SIZE ((size_t)sizeof(uint32_t) << TID_BITS)

/* The per-event functions take `plain` (no window, every CPU selected: a
 * report without --from, --to or --cpu), a constant at each call, and are
 * inlined into two copies of the event loop, so that the plain one has no
 * test of the window or the CPU list. */
#define EVENT_FN static inline __attribute__((always_inline))

static enum tstate state_of_slow(uint16_t prev_state)
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

/* The state a prev_state leaves a thread in: state_of_slow by table for
 * the values of kernels >= 4.14 (one load, not a branch a bit: which
 * state a task leaves in is not predictable). */
#define STATE_TABLE 0x200u
static uint8_t state_table[STATE_TABLE];

static void state_table_init(void)
{
	uint32_t v;

	for (v = 0; v < STATE_TABLE; v++)
		state_table[v] = (uint8_t)state_of_slow((uint16_t)v);
}

EVENT_FN enum tstate state_of(uint16_t prev_state)
{
	if (__builtin_expect(prev_state >= STATE_TABLE, 0))
		return TS_OTHER;
	return (enum tstate)state_table[prev_state];
}

void model_init(struct model *m, const struct model_opts *o)
{
	memset(m, 0, sizeof(*m));
	hmap_init(&m->idx, 8, sizeof(uint32_t), hmap_random_seed());
	m->o = *o;
	state_table_init();
}

void model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nthr; i++) {
		if (m->hot[i].lat)
			hist_release(&m->hot[i].lat->h);
		free(m->hot[i].lat);
	}
	for (i = 0; i < TID_MACHINES; i++)
		if (m->direct[i])
			munmap(m->direct[i], TID_TABLE_SIZE);
	free(m->thr);
	free(m->hot);
	hmap_free(&m->idx);
	free(m->cpu);
	memset(m, 0, sizeof(*m));
}

/* A new thread; its index, or UINT32_MAX when out of memory. */
static uint32_t thread_new(struct model *m, uint32_t machine, int32_t tid)
{
	size_t cap = m->capthr;
	struct thread_hot *h;
	struct thread *t;

	if (m->nthr == m->capthr) {
		cap = cap ? cap * 2 : 1024;
		t = realloc(m->thr, cap * sizeof(*m->thr));
		if (t)
			m->thr = t; /* bigger, even if hot fails */
		h = t ? realloc(m->hot, cap * sizeof(*m->hot)) : NULL;
		if (!h) {
			m->oom = true;
			return UINT32_MAX;
		}
		m->hot = h;
		m->capthr = cap;
	}
	t = &m->thr[m->nthr];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->tgid = -1;
	t->machine = machine;
	m->hot[m->nthr] = (struct thread_hot){ .waker = WAKER_NONE,
						    .last_cpu = -1 };
	return (uint32_t)m->nthr++;
}

/* The direct table of machine, mapped when first needed; NULL when the
 * machine is not for it or out of memory. */
static uint32_t *direct_table(struct model *m, uint32_t machine)
{
	void *t;

	if (machine >= TID_MACHINES)
		return NULL;
	if (m->direct[machine])
		return m->direct[machine];
	t = mmap(NULL, TID_TABLE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED) {
		m->oom = true;
		return NULL;
	}
	return m->direct[machine] = t;
}

/* The slot of (machine, tid) in the direct table; NULL when the key is
 * not for the table or out of memory. */
static uint32_t *direct_slot(struct model *m, uint32_t machine, int32_t tid)
{
	uint32_t *t;

	if ((uint32_t)tid >= 1u << TID_BITS || !(t = direct_table(m, machine)))
		return NULL;
	return &t[tid];
}

/* thread_idx for a thread not in the direct table yet, or not for it. */
static uint32_t thread_idx_slow(struct model *m, uint32_t machine, int32_t tid)
{
	uint64_t key = (uint64_t)machine << 32 | (uint32_t)tid;
	uint32_t *slot = direct_slot(m, machine, tid), *i, n;
	bool added;

	if (slot) {
		if (*slot)
			return *slot - 1;
		n = thread_new(m, machine, tid);
		if (n != UINT32_MAX)
			*slot = n + 1;
		return n;
	}
	if (m->oom)
		return UINT32_MAX;
	i = hmap_insert(&m->idx, &key, &added);
	if (!i) {
		m->oom = true;
		return UINT32_MAX;
	}
	if (!added)
		return *i;
	n = thread_new(m, machine, tid);
	if (n == UINT32_MAX)
		hmap_remove(&m->idx, &key);
	else
		*i = n;
	return n;
}

/* The index of thread (machine, tid), whose machine's direct table is t
 * (NULL: none yet), added when new; UINT32_MAX when out of memory. One
 * load when the thread is in t. */
static inline uint32_t thread_in(struct model *m, const uint32_t *t,
				 uint32_t machine, int32_t tid)
{
	uint32_t v;

	if (t && (uint32_t)tid < 1u << TID_BITS && (v = t[tid]))
		return v - 1;
	return thread_idx_slow(m, machine, tid);
}

static inline uint32_t thread_idx(struct model *m, uint32_t machine,
				  int32_t tid)
{
	return thread_in(m, machine < TID_MACHINES ? m->direct[machine] : NULL,
			 machine, tid);
}

/* thread_idx for an event of CPU c (of machine): its table is the CPU's. */
static inline uint32_t thread_on(struct model *m, const struct cpu_stat *c,
				 uint32_t machine, int32_t tid)
{
	return thread_in(m, c->tids, machine, tid);
}

static struct thread *thread_of(struct model *m, uint32_t machine, int32_t tid)
{
	uint32_t i = thread_idx(m, machine, tid);

	return i == UINT32_MAX ? NULL : &m->thr[i];
}

/* The part of [a, b) inside the window. */
EVENT_FN uint64_t clip(const struct model *m, int64_t a, int64_t b,
		       bool plain)
{
	if (plain || !m->windowed)
		return b > a ? (uint64_t)(b - a) : 0;
	if (a < m->from)
		a = m->from;
	if (b > m->to)
		b = m->to;
	return b > a ? (uint64_t)(b - a) : 0;
}

EVENT_FN bool in_window(const struct model *m, int64_t ts, bool plain)
{
	return plain || !m->windowed || (ts >= m->from && ts <= m->to);
}

/* A latency of d ns of thread i (hot line h), ended at ts. */
EVENT_FN void note_latency(struct model *m, struct thread_hot *h, uint64_t d,
			 int64_t ts)
{
	struct lat *l = h->lat;

	if (!l && (l = h->lat = aligned_alloc(_Alignof(struct lat),
					       sizeof(*l))))
		memset(l, 0, sizeof(*l));
	if (!l || hist_add(&l->h, d)) {
		m->oom = true;
		return;
	}
	l->sum += d;
	if (d >= l->max) {
		l->max = d;
		l->max_ts = ts;
	}
	if (h->waker != WAKER_NONE)
		sketch16_note(&l->wk, (uint32_t)h->waker);
}

/* d ns off the CPU after thread i blocked in its function. */
static void note_blocked(struct model *m, uint32_t i, uint64_t d)
{
	sketch_note(m->thr[i].bl, m->thr[i].bl_ns, BLOCKED_SLOTS,
		    m->thr[i].blocked, d);
}

/* The end at ts of thread i's state st, when it is not a latency: the
 * length of a sleep (S, D) added without a branch on the state (which
 * state a thread leaves is not predictable), its blocked function
 * counted (rare: a call) and forgotten; a blocked reason may come just
 * before its switch-out, so Running and runnable states keep it. */
EVENT_FN void end_state(struct model *m, uint32_t i, unsigned st, int64_t ts,
			bool plain)
{
	struct thread_hot *h = &m->hot[i];
	bool sleep = st == TS_S || st == TS_D;
	uint64_t d = sleep ? clip(m, h->since, ts, plain) : 0;

	h->off_s += st == TS_S ? d : 0;
	h->off_d += st == TS_D ? d : 0;
	if (__builtin_expect(sleep && m->sleep_hook != NULL, 0))
		m->sleep_hook(m->sleep_ctx, i, h->since, (int64_t)d);
	if (__builtin_expect(h->blocked && sleep, 0))
		note_blocked(m, i, d);
	h->blocked = st == TS_R || st == TS_RP || st == TS_RUNNING ?
			     h->blocked : 0;
}

/* Ends thread i's current state at ts; latency when it ends by running
 * at a time and on a CPU that count (in the window, on a CPU of the
 * list). */
EVENT_FN void close_state(struct model *m, uint32_t i, int64_t ts,
			 bool latency, bool plain)
{
	struct thread_hot *h = &m->hot[i];
	unsigned st = h->state;

	if (latency && (st == TS_R || st == TS_RP) && ts >= h->since)
		note_latency(m, h, (uint64_t)(ts - h->since), ts);
	end_state(m, i, st, ts, plain);
	h->waker = WAKER_NONE;
}

static void open_state(struct thread_hot *h, enum tstate s, int64_t ts)
{
	h->state = (uint8_t)s;
	h->since = ts;
}

/* A CPU's first compact switch: trace_processor has no prev for it, so
 * it only learns who runs (no slice, no thread state). */
static void first_compact(struct model *m, uint32_t machine,
			  struct cpu_stat *c, const struct rev *e)
{
	uint32_t i;

	c->known = true;
	c->slice = false;
	c->cur = e->pid;
	c->since = e->ts;
	c->cur_i = UINT32_MAX;
	if (e->pid && (i = thread_on(m, c, machine, e->pid)) != UINT32_MAX) {
		c->cur_i = i;
		if (e->name)
			m->hot[i].name = e->name;
	}
}

/* Thread i switched out at ts into state s. A thread that was not
 * Running (the kernel hid a switch: a mismatched one) leaves the state
 * it was in open: not counted, as trace_processor leaves its dur -1. */
EVENT_FN void switch_out(struct model *m, uint32_t i, enum tstate s,
			 int64_t ts, bool plain)
{
	struct thread_hot *h = &m->hot[i];

	if (__builtin_expect(h->state != TS_RUNNING && h->state != TS_NONE,
			     0)) {
		m->cut++;
		h->blocked = 0;
		h->waker = WAKER_NONE;
	} else {
		close_state(m, i, ts, false, plain);
	}
	open_state(h, s, ts);
	if (__builtin_expect(m->sleep_hook != NULL, 0) &&
	    (s == TS_S || s == TS_D)) /* the sample at this switch-out */
		m->sleep_hook(m->sleep_ctx, i, ts, -1);
}

/* The end of the slice of thread i in state s: a switch out, voluntary
 * or not (without a branch on the state). */
EVENT_FN void count_switch(struct model *m, uint32_t i, enum tstate s)
{
	struct thread_hot *h = &m->hot[i];
	bool r = s == TS_R || s == TS_RP;

	h->invol += r;
	h->vol += !r;
	if (__builtin_expect((r & !h->invol) | (!r & !h->vol), 0))
		*(r ? &m->thr[i].invol : &m->thr[i].vol) += 1ull << 32;
}

/* A switch on c, the CPU of queue qi. */
EVENT_FN void on_switch(struct model *m, uint32_t machine, size_t qi,
		       struct cpu_stat *c, const struct rev *e, bool plain)
{
	bool full = e->kind == REV_SWITCH_FULL;
	int32_t prev = full ? e->pid2 : c->cur;
	bool selected = plain || c->selected;
	bool counted = in_window(m, e->ts, plain) && selected;
	bool ends = c->slice && prev == c->cur; /* the open slice */
	enum tstate s = state_of(e->state);
	struct thread_hot *h;
	uint32_t i;

	if (counted)
		c->switches++;
	if (__builtin_expect(!c->known && !full, 0)) {
		first_compact(m, machine, c, e);
		return;
	}
	if (full && c->slice && prev != c->cur)
		c->mismatched++;
	if (ends) {
		uint64_t d = clip(m, c->since, e->ts, plain);

		if (selected) {
			c->busy += c->cur ? d : 0;
			c->idle += c->cur ? 0 : d;
		}
		if (c->cur && c->cur_i != UINT32_MAX) {
			if (selected)
				m->hot[c->cur_i].cpu_ns += d;
			if (counted)
				count_switch(m, c->cur_i, s);
		}
	}
	if (prev) {
		i = c->known && prev == c->cur ? c->cur_i :
			thread_on(m, c, machine, prev);
		if (i != UINT32_MAX)
			switch_out(m, i, s, e->ts, plain);
	}
	c->known = true;
	c->slice = true;
	c->cur = e->pid;
	c->since = e->ts;
	c->cur_i = UINT32_MAX;
	if (!e->pid || (i = thread_on(m, c, machine, e->pid)) == UINT32_MAX)
		return;
	c->cur_i = i;
	close_state(m, i, e->ts, counted, plain);
	h = &m->hot[i];
	open_state(h, TS_RUNNING, e->ts);
	c->migrations_in += (h->last_cpu >= 0) &
			    ((size_t)h->last_cpu != qi) & counted;
	h->last_cpu = (int32_t)qi;
	if (e->name)
		m->hot[i].name = e->name;
}

/* Thread i woken at ts by waker: a thread not Running or R becomes R
 * (close_state without latency, open_state R), without a branch on its
 * state. An R+ thread (preempted while going to sleep) too, as
 * trace_processor takes R+ for a blocked state: its latency is then
 * counted from the waking. */
EVENT_FN void wake(struct model *m, uint32_t i, int64_t ts, int32_t waker,
		   bool plain)
{
	struct thread_hot *h = &m->hot[i];
	unsigned st = h->state;
	bool keep = st == TS_RUNNING || st == TS_R;

	end_state(m, i, st, ts, plain);
	h->waker = keep ? h->waker : waker;
	h->since = keep ? h->since : ts;
	h->state = keep ? (uint8_t)st : (uint8_t)TS_R;
}

/* A waking on c, the CPU of queue qi. */
EVENT_FN void on_waking(struct model *m, uint32_t machine,
		       const struct cpu_stat *c, const struct rev *e, bool plain)
{
	struct thread_hot *h;
	int32_t waker;
	uint32_t i;

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
	/* in interrupt context: the interrupt woke it, not the task it
	 * interrupted (state: the waking's common_flags) */
	if (__builtin_expect(e->state & (FTRACE_FLAG_HARDIRQ |
					 FTRACE_FLAG_SOFTIRQ), 0))
		waker = e->state & FTRACE_FLAG_HARDIRQ ? WAKER_HARDIRQ :
							 WAKER_SOFTIRQ;
	if (!e->pid || (i = thread_on(m, c, machine, e->pid)) == UINT32_MAX)
		return;
	h = &m->hot[i];
	h->name = h->name ? h->name : e->name;
	wake(m, i, e->ts, waker, plain);
}

static void on_newtask(struct model *m, uint32_t machine,
		       const struct rev *e)
{
	struct thread *parent;
	int32_t tgid = e->pid;
	uint32_t i;

	if (!e->pid)
		return;
	if (e->flags & REV_CLONE_THREAD) {
		parent = thread_of(m, machine, e->pid2);
		tgid = parent && parent->tgid >= 0 ? parent->tgid : e->pid2;
	}
	i = thread_idx(m, machine, e->pid);
	if (i == UINT32_MAX)
		return;
	m->thr[i].tgid = tgid;
	if (e->name)
		m->hot[i].name = e->name;
	/* a new thread: whatever state a former thread of that tid left
	 * open stays open (trace_processor's new utid) */
	m->hot[i].blocked = 0;
	open_state(&m->hot[i], TS_R, e->ts);
	m->hot[i].waker = e->pid2;
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
	m->cpu[qi].machine = q->machine;
	m->cpu[qi].tids = direct_table(m, q->machine);
}

/* Events other than switches and wakings. */
static void on_other(struct model *m, uint32_t machine, const struct rev *e)
{
	uint32_t i;

	switch (e->kind) {
	case REV_NEWTASK:
		on_newtask(m, machine, e);
		break;
	case REV_RENAME:
		if (e->pid && (i = thread_idx(m, machine, e->pid)) != UINT32_MAX)
			m->hot[i].name = e->name;
		break;
	case REV_BLOCKED:
		if (e->pid && e->name &&
		    (i = thread_idx(m, machine, e->pid)) != UINT32_MAX) {
			m->thr[i].blocked = e->name;
			m->hot[i].blocked = 1;
		}
		break;
	default:
		break;
	}
}

/* Figures for the CPUs of queues up to qi: queues are numbered as they
 * appear, and a CPU has figures up to the last queue with events. 0, or
 * -1 when out of memory. */
static int cpus_upto(struct model *m, const struct merge *mg, size_t qi)
{
	while (m->ncpu <= qi && !m->oom)
		grow_cpus(m, m->ncpu, &mg->q[m->ncpu]);
	return m->oom ? -1 : 0;
}

/* The first event: the window starts from it. */
static void start(struct model *m, int64_t ts)
{
	m->started = true;
	m->first = ts;
	m->from = m->o.has_from ? ts + m->o.from : INT64_MIN;
	m->to = m->o.has_to ? ts + m->o.to : INT64_MAX;
	m->windowed = m->o.has_from || m->o.has_to;
}

/* Events taken from the merge at a time. */
#define MODEL_BATCH 512

EVENT_FN void take(struct model *m, struct merge *mg, bool all, bool plain)
{
	struct merge_walk w;
	struct merge_ev ev[MODEL_BATCH];
	size_t k, n, top;

	merge_begin(mg, all, &w);
	while ((n = merge_take(mg, &w, ev, MODEL_BATCH))) {
		if (!m->started)
			start(m, ev[0].e->ts);
		/* the batch's CPUs have figures: no test of it per event (the
		 * CPU changes at nearly every event) */
		for (top = 0, k = 0; k < n; k++)
			top = ev[k].qi > top ? ev[k].qi : top;
		if (top >= m->ncpu && cpus_upto(m, mg, top))
			return;
		for (k = 0; k < n; k++) {
			const struct rev *e = ev[k].e;
			size_t qi = ev[k].qi;
			struct cpu_stat *c = &m->cpu[qi];
			uint32_t machine = c->machine;

			c->first = c->events ? c->first : e->ts;
			c->events++;
			c->last = e->ts;
			/* switches and wakings first: nearly every event */
			if (e->kind <= REV_SWITCH_FULL)
				on_switch(m, machine, qi, c, e, plain);
			else if (e->kind <= REV_WAKING_FULL)
				on_waking(m, machine, c, e, plain);
			else
				on_other(m, machine, e);
		}
		m->events += n;
		m->last = ev[n - 1].e->ts;
	}
}

void model_take(struct model *m, struct merge *mg, bool all)
{
	if (!m->o.has_from && !m->o.has_to && !m->o.cpus)
		take(m, mg, all, true);
	else
		take(m, mg, all, false);
}

void model_thread_info(struct model *m, uint32_t machine, int32_t tid,
		       int32_t tgid, uint32_t name)
{
	uint32_t i;

	if (!tid || (i = thread_idx(m, machine, tid)) == UINT32_MAX)
		return;
	if (tgid > 0)
		m->thr[i].tgid = tgid;
	if (name)
		m->hot[i].name = name;
}

const struct thread *model_find(const struct model *m, uint32_t machine,
				int32_t tid)
{
	uint64_t key = (uint64_t)machine << 32 | (uint32_t)tid;
	const uint32_t *i;

	if (machine < TID_MACHINES && (uint32_t)tid < 1u << TID_BITS) {
		const uint32_t *t = m->direct[machine];
		uint32_t v = t ? t[tid] : 0;

		return v ? &m->thr[v - 1] : NULL;
	}
	i = hmap_find(&m->idx, &key);
	return i ? &m->thr[*i] : NULL;
}

void model_finish(struct model *m)
{
	size_t i;

	/* open slices and states have no length: only the sums move */
	for (i = 0; i < m->nthr; i++) {
		const struct thread_hot *h = &m->hot[i];
		struct thread *t = &m->thr[i];

		t->cpu_ns = h->cpu_ns;
		t->off_s = h->off_s;
		t->off_d = h->off_d;
		t->vol += h->vol;
		t->invol += h->invol;
		t->name = h->name;
		if (h->lat) {
			t->hist = &h->lat->h;
			t->lat_sum = h->lat->sum;
			t->lat_max = h->lat->max;
			t->lat_max_ts = h->lat->max_ts;
			sketch16_slots(&h->lat->wk, t->wk);
		}
	}
}
