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
	free(m->tree);
	hmap_free(&m->idx);
	memset(m, 0, sizeof(*m));
}

/* The time of q's first event, INT64_MAX when it has none. */
static inline int64_t head_ts(const struct cpu_queue *q)
{
	return q->n ? q->v[q->head].ts : INT64_MAX;
}

/* Sets leaf j of tree t (queue qi) to ts and replays its path up to the
 * root: each node on it the first of its children. Returns the root. */
static inline struct merge_node replay(struct merge_node *t, size_t j,
				       int64_t ts, uint32_t qi)
{
	t[j] = (struct merge_node){ ts, qi };
	for (; j > 1; j >>= 1) {
		int64_t sts = t[j ^ 1].ts;
		uint32_t sqi = t[j ^ 1].qi;
		/* all ones when the sibling goes first: earlier, or as early
		 * and on the left (j odd: j is the right child); a mask, not
		 * a branch, as which one wins is not predictable */
		uint64_t sib = -(uint64_t)((sts < ts) |
					   ((sts == ts) & (int)(j & 1)));

		ts = (int64_t)(((uint64_t)sts & sib) | ((uint64_t)ts & ~sib));
		qi = (uint32_t)((sqi & sib) | (qi & ~sib));
		t[j >> 1] = (struct merge_node){ ts, qi };
	}
	return (struct merge_node){ ts, qi };
}

/* Makes the tree of heads cover n queues (the first m->nq exist). */
static int tree_reserve(struct merge *m, size_t n)
{
	size_t leaves = m->leaves ? m->leaves : 1, j;
	struct merge_node *t;

	while (leaves < n)
		leaves *= 2;
	if (leaves == m->leaves)
		return 0;
	t = malloc(2 * leaves * sizeof(*t));
	if (!t)
		return -1;
	for (j = 0; j < leaves; j++)
		t[leaves + j] = (struct merge_node){
			j < m->nq ? head_ts(&m->q[j]) : INT64_MAX, (uint32_t)j
		};
	for (j = leaves - 1; j >= 1; j--)
		t[j] = t[2 * j + 1].ts < t[2 * j].ts ? t[2 * j + 1] : t[2 * j];
	free(m->tree);
	m->tree = t;
	m->leaves = leaves;
	return 0;
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

		if (!q) {
			hmap_remove(&m->idx, &key);
			return -1;
		}
		m->q = q;
		m->capq = cap;
	}
	if (tree_reserve(m, m->nq + 1)) {
		hmap_remove(&m->idx, &key);
		return -1;
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
	if (!q->n) /* a new head */
		replay(m->tree, m->leaves + qi, q->v[q->head].ts,
		       (uint32_t)qi);
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
	w->cur = SIZE_MAX;
	w->wm = all ? INT64_MAX : watermark(m);
}

/* The earliest head of the queues other than leaf j's. */
static inline int64_t others_first(const struct merge_node *t, size_t j)
{
	int64_t low = INT64_MAX;

	for (; j > 1; j >>= 1)
		if (t[j ^ 1].ts < low)
			low = t[j ^ 1].ts;
	return low;
}

/* A run of queue qi, which goes on: its events up to the others' first
 * head and the watermark, at most max - k, into out from k on. Returns
 * the new k. */
static size_t take_run(struct merge *m, size_t qi, int64_t wm,
		       struct merge_ev *out, size_t k, size_t max)
{
	struct cpu_queue *q = &m->q[qi];
	int64_t stop = others_first(m->tree, m->leaves + qi);
	const struct rev *v = q->v;
	size_t head = q->head, n = q->n, mask = q->cap - 1;

	if (wm < stop)
		stop = wm;
	while (n && k < max && v[head].ts <= stop) {
		out[k].e = &v[head];
		out[k++].qi = qi;
		head = (head + 1) & mask;
		n--;
	}
	q->head = head;
	q->n = n;
	return k;
}

size_t merge_take(struct merge *m, struct merge_walk *w, struct merge_ev *out,
		  size_t max)
{
	struct merge_node *t = m->tree, root;
	struct cpu_queue *qs = m->q;
	size_t k = 0, left = m->pending, leaves = m->leaves, cur = w->cur, b;
	size_t run = 0, capped;
	int64_t wm = w->wm, cts;

	if (!left || !max)
		return 0;
	/* over the cap while k < capped: the oldest go whatever the
	 * watermark */
	capped = left > m->max_pending ? left - m->max_pending : 0;
	/* root: the least (head time, index); cts: the head time of cur,
	 * the queue of the last event, which goes on when no later */
	root = t[1];
	if (cur == SIZE_MAX)
		cur = root.qi;
	cts = t[leaves + cur].ts;
	while (k < max) {
		struct cpu_queue *q;
		const struct rev *v;
		size_t head, n;
		int64_t next;

		b = cts == root.ts ? cur : root.qi;
		if (root.ts > wm && k >= capped)
			break;
		q = &qs[b];
		if (!q->n) { /* the events left are all at INT64_MAX */
			if (k == left)
				break;
			for (b = 0; !qs[b].n; b++)
				;
			q = &qs[b];
		}
		/* a queue that went on twice may have a long run: taken up
		 * to the others' first head without replays (run counts
		 * without a branch: which queue comes is not predictable) */
		run = (run + 1) & -(size_t)(b == cur);
		if (run > 2 && k >= capped) {
			k = take_run(m, b, wm, out, k, max);
		} else {
			v = q->v;
			head = q->head;
			n = q->n - 1;
			out[k].e = &v[head];
			out[k++].qi = b;
			q->head = head = (head + 1) & (q->cap - 1);
			q->n = n;
		}
		v = q->v;
		/* read even past the end (the ring has room): no branch */
		next = v[q->head].ts;
		cts = q->n ? next : INT64_MAX;
		root = replay(t, leaves + b, cts, (uint32_t)b);
		cur = b;
	}
	w->cur = cur;
	m->pending -= k;
	/* times only grow: the last taken is the latest */
	if (k && out[k - 1].e->ts > m->released)
		m->released = out[k - 1].e->ts;
	return k;
}
