/* Bounded-window k-way merge of per-CPU event queues (merge.h). */
#include "report/merge.h"

#include <stdlib.h>
#include <string.h>

void merge_init(struct merge *m)
{
	memset(m, 0, sizeof(*m));
	hmap_init(&m->idx, 8, sizeof(uint32_t), hmap_random_seed());
	m->max_ts = INT64_MIN;
	m->released = INT64_MIN;
	m->max_pending = MERGE_MAX_PENDING;
}

int merge_declare_cpus(struct merge *m, uint32_t machine, uint32_t ncpus)
{
	uint32_t cpu;

	if (ncpus > MERGE_MAX_DECLARED)
		return 0; /* implausible: leave them to the window */
	for (cpu = 0; cpu < ncpus; cpu++)
		if (merge_queue(m, machine, cpu) < 0)
			return -1;
	m->cpus_declared = true;
	return 0;
}

void merge_free(struct merge *m)
{
	size_t i;

	for (i = 0; i < m->nq; i++)
		free(m->q[i].v);
	free(m->q);
	free(m->heads);
	hmap_free(&m->idx);
	memset(m, 0, sizeof(*m));
}

long merge_queue(struct merge *m, uint32_t machine, uint32_t cpu)
{
	uint64_t key = (uint64_t)machine << 32 | cpu;
	uint32_t *qi;
	bool added;

	qi = hmap_insert(&m->idx, &key, &added);
	if (!qi)
		return -1;
	if (!added)
		return (long)*qi;
	if (m->nq == m->capq) {
		size_t cap = m->capq ? m->capq * 2 : 16;
		struct cpu_queue *q = realloc(m->q, cap * sizeof(*q));
		struct merge_head *h = q ? realloc(m->heads, cap * sizeof(*h)) :
					   NULL;

		if (q)
			m->q = q; /* bigger, even if heads fails */
		if (!h) {
			hmap_remove(&m->idx, &key);
			return -1;
		}
		m->heads = h;
		m->capq = cap;
	}
	m->q[m->nq] = (struct cpu_queue){ .machine = machine, .cpu = cpu,
					  .last = INT64_MIN };
	*qi = (uint32_t)m->nq;
	return (long)m->nq++;
}

/* Makes room for n more events in q. */
static int reserve(struct cpu_queue *q, size_t n)
{
	size_t cap = q->cap ? q->cap : 1024, i;
	struct rev *v;

	if (q->n + n <= q->cap)
		return 0;
	while (cap < q->n + n)
		cap *= 2;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < q->n; i++)
		v[i] = q->v[(q->head + i) & (q->cap - 1)];
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
	return 0;
}

/* Appends e to q's ring at pos (masked), at q->last or later, and not
 * before what was handed out already. */
static inline void put(struct merge *m, struct cpu_queue *q, size_t pos,
		       const struct rev *e)
{
	struct rev *d = &q->v[pos & (q->cap - 1)];

	*d = *e;
	if (d->ts < q->last) {
		d->ts = q->last;
		m->reordered++;
	}
	if (d->ts < m->released) { /* its turn has passed */
		d->ts = m->released;
		m->reordered++;
	}
	q->last = d->ts;
}

/* (ts, qi) comes before h in the heads' order. */
static inline bool head_before(int64_t ts, size_t qi,
			       const struct merge_head *h)
{
	return ts < h->ts || (ts == h->ts && qi < h->qi);
}

/* Queue qi, empty until now, has its first event at ts. */
static void heads_insert(struct merge *m, size_t qi, int64_t ts)
{
	size_t k = m->nheads++;

	for (; k && head_before(ts, qi, &m->heads[k - 1]); k--)
		m->heads[k] = m->heads[k - 1];
	m->heads[k] = (struct merge_head){ ts, qi };
}

/* The time of run r's next event, INT64_MAX when it has none. */
static inline int64_t next_ts(const struct rev *const *v, const size_t *n,
			      const size_t *pos, size_t r)
{
	return pos[r] < n[r] ? v[r][pos[r]].ts : INT64_MAX;
}

/* The common case of merge_push, without moving any time: no event
 * before the queue's last one or the latest handed out, and room up to
 * the end of the ring. The runs (each in time order) go to q's ring from
 * slot pos on (masked) in time order, the first run first on equal times:
 * the first two merged up to each event of the third (few: the regular
 * events), which follows them. False when it does not apply (nothing
 * done). */
static bool push_plain(struct merge *m, struct cpu_queue *q, size_t pos,
		       const struct rev *const *rv, const size_t *rn)
{
	/* an empty run may be NULL */
	const struct rev *a = rv[0], *ae = rn[0] ? a + rn[0] : a, *b = rv[1],
			 *be = rn[1] ? b + rn[1] : b, *c = rv[2];
	int64_t low = q->last > m->released ? q->last : m->released;
	struct rev *d = &q->v[pos & (q->cap - 1)];
	size_t j;

	if ((pos & (q->cap - 1)) + rn[0] + rn[1] + rn[2] > q->cap)
		return false; /* it wraps: rare, the general path */
	if ((rn[0] && a->ts < low) || (rn[1] && b->ts < low) ||
	    (rn[2] && c->ts < low))
		return false;
	for (j = 0; j <= rn[2]; j++) {
		int64_t lim = j < rn[2] ? c[j].ts : INT64_MAX;

		while (a < ae && b < be) {
			bool tb = b->ts < a->ts;
			const struct rev *src = tb ? b : a;

			if (src->ts > lim)
				break;
			*d++ = *src;
			a += !tb;
			b += tb;
		}
		while (a < ae && a->ts <= lim)
			*d++ = *a++;
		while (b < be && b->ts <= lim)
			*d++ = *b++;
		if (j < rn[2])
			*d++ = c[j];
	}
	q->last = d[-1].ts;
	return true;
}

int merge_push(struct merge *m, size_t qi, const struct rev *const *v,
	       const size_t *n, size_t k)
{
	struct cpu_queue *q = &m->q[qi];
	const struct rev *rv[MERGE_MAX_RUNS] = { 0 };
	size_t rn[MERGE_MAX_RUNS] = { 0 }, pos[MERGE_MAX_RUNS] = { 0 };
	size_t total = 0, start, i, r;
	int64_t t[MERGE_MAX_RUNS];

	for (r = 0; r < k && r < MERGE_MAX_RUNS; r++) {
		rv[r] = v[r];
		rn[r] = n[r];
		total += n[r];
	}
	if (!total)
		return 0;
	if (reserve(q, total))
		return -1;
	start = q->head + q->n;
	if (push_plain(m, q, start, rv, rn))
		goto queued;
	for (r = 0; r < MERGE_MAX_RUNS; r++)
		t[r] = next_ts(rv, rn, pos, r);
	for (i = 0; i < total; i++) {
		/* the earliest next event, the first run on ties; without
		 * branches, as which run comes next is not predictable */
		size_t b = t[1] < t[0];
		int64_t bt = b ? t[1] : t[0];

		b = t[2] < bt ? 2 : b;
		if (pos[b] >= rn[b]) /* a time of INT64_MAX: the first run left */
			for (b = 0; pos[b] >= rn[b]; b++)
				;
		put(m, q, start + i, &rv[b][pos[b]++]);
		t[b] = next_ts(rv, rn, pos, b);
	}
queued:
	if (!q->n)
		heads_insert(m, qi, q->v[q->head].ts);
	q->n += total;
	m->pending += total;
	if (q->last > m->max_ts)
		m->max_ts = q->last;
	return 0;
}

/* The time up to which every queue may be emptied. */
static int64_t watermark(const struct merge *m)
{
	int64_t low = INT64_MAX;
	size_t i;

	for (i = 0; i < m->nq; i++)
		if (m->q[i].last < low)
			low = m->q[i].last;
	/* CPUs not declared: one not seen yet may bring events that old */
	if (!m->cpus_declared && m->max_ts > INT64_MIN + MERGE_NEW_CPU_NS &&
	    low > m->max_ts - MERGE_NEW_CPU_NS)
		low = m->max_ts - MERGE_NEW_CPU_NS;
	return low;
}

void merge_begin(struct merge *m, bool all, struct merge_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->wm = all ? INT64_MAX : watermark(m);
}

size_t merge_take(struct merge *m, struct merge_walk *w, struct merge_ev *out,
		  size_t max)
{
	struct merge_head *h = m->heads;
	size_t k = 0, nh = m->nheads, qi, n, head, mask, i;
	int64_t wm = w->wm, stop, ts;
	const struct rev *v;
	struct cpu_queue *q;

	/* the queues with events are h[0..nh), by head time then index: the
	 * first is the one the earliest event is in (the first of equals),
	 * the second's head the least of the others'; a turn takes the
	 * first one's events up to the second's head (or the watermark) */
	while (k < max) {
		if (w->q) { /* a turn cut by the end of the last batch */
			q = w->q;
			qi = w->qi;
			stop = w->stop;
			w->q = NULL;
		} else {
			int64_t best, second;
			bool over;

			if (!nh)
				break;
			best = h[0].ts;
			second = nh > 1 ? h[1].ts : INT64_MAX;
			over = m->pending - k > m->max_pending;
			if (best > wm && !over)
				break;
			/* over the cap: the oldest go whatever the watermark */
			stop = over || second < wm ? second : wm;
			if (stop < best)
				stop = best;
			qi = h[0].qi;
			q = &m->q[qi];
		}
		v = q->v;
		head = q->head;
		n = q->n;
		mask = q->cap - 1;
		/* at a turn's start its first event, the best, is in */
		while (n && k < max && v[head].ts <= stop) {
			out[k].e = &v[head];
			out[k++].qi = qi;
			head = (head + 1) & mask;
			n--;
		}
		q->head = head;
		q->n = n;
		if (n && v[head].ts <= stop) { /* the batch is full */
			w->q = q;
			w->qi = qi;
			w->stop = stop;
			break;
		}
		/* the queue to its new place among the heads, or out */
		if (!n) {
			memmove(h, h + 1, --nh * sizeof(*h));
			continue;
		}
		ts = v[head].ts;
		for (i = 0; i + 1 < nh && !head_before(ts, qi, &h[i + 1]); i++)
			h[i] = h[i + 1];
		h[i] = (struct merge_head){ ts, qi };
	}
	m->nheads = nh;
	m->pending -= k;
	/* times only grow: the last taken is the latest */
	if (k && out[k - 1].e->ts > m->released)
		m->released = out[k - 1].e->ts;
	return k;
}
