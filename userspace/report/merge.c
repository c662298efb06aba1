/* Bounded-window k-way merge of per-CPU event queues (merge.h), over a
 * winner tree of the queues' heads.
 *
 * Example, 4 queues with heads at 7, 3, 3 and 9: the leaves are (7, 0),
 * (3, 1), (3, 2), (9, 3); node 2, the least of the first two, is (3, 1),
 * node 3 (3, 2), the root (3, 1): queue 1's event at 3 goes first. Its
 * next is at 5: leaf (5, 1) replays node 2 = (5, 1) (against 7) and the
 * root = (3, 2) (against node 3); the times beside the path, 7 and 3,
 * are not all at 5 or later, so queue 1 does not go on: queue 2's event
 * at 3 comes next. Had queue 1's next been at 3, it would have gone on
 * (the current queue first on equal times), though its key is greater
 * than queue 2's. */
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
	m->last_q = SIZE_MAX;
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

/* A node of the tree: the key of a queue's head, (time, index) in one
 * number, so that one comparison orders two heads; a queue without
 * events has the key of (INT64_MAX, 2^32 + index), after every event. */
#ifdef __SIZEOF_INT128__
typedef __int128 merge_key;

static inline merge_key key_of(int64_t ts, uint64_t qi)
{
	/* two's complement (GCC and clang convert modulo 2^128) */
	return (merge_key)((unsigned __int128)(uint64_t)ts << 64 | qi);
}

static inline int64_t key_ts(merge_key k)
{
	return (int64_t)(k >> 64);
}

static inline uint64_t key_low(merge_key k)
{
	return (uint64_t)k;
}

static inline bool key_less(merge_key a, merge_key b)
{
	return a < b;
}
#else
typedef struct {
	int64_t ts;
	uint64_t low;
} merge_key;

static inline merge_key key_of(int64_t ts, uint64_t qi)
{
	return (merge_key){ ts, qi };
}

static inline int64_t key_ts(merge_key k)
{
	return k.ts;
}

static inline uint64_t key_low(merge_key k)
{
	return k.low;
}

static inline bool key_less(merge_key a, merge_key b)
{
	return a.ts < b.ts || (a.ts == b.ts && a.low < b.low);
}
#endif

struct merge_node {
	merge_key key;
};

#define NO_EVENT ((uint64_t)1 << 32)

/* The key of queue qi's head. */
static inline merge_key head_key(const struct cpu_queue *q, size_t qi)
{
	return q->p != q->end ? key_of(q->p->ts, qi) :
			       key_of(INT64_MAX, NO_EVENT + qi);
}

/* How many events q holds. */
static inline size_t q_count(const struct cpu_queue *q)
{
	return q->cap ? (size_t)(q->end - q->p) + q->rest : 0;
}

/* The ring slot of q's first event. */
static inline size_t q_head(const struct cpu_queue *q)
{
	return q->cap ? (size_t)(q->p - q->v) & (q->cap - 1) : 0;
}

/* q holds n events from ring slot head on. */
static void q_set(struct cpu_queue *q, size_t head, size_t n)
{
	size_t row = q->cap - head < n ? q->cap - head : n;

	q->p = q->v + head;
	q->end = q->p + row;
	q->rest = n - row;
}

/* Sets leaf j of tree t to key x and replays its path up to the root:
 * each node on it the least of its children. Returns the root; *others
 * the earliest head time of the other leaves (the least of the nodes
 * beside the path). */
static inline merge_key replay(struct merge_node *t, size_t j, merge_key x,
			       int64_t *others)
{
	int64_t low = INT64_MAX;

	t[j].key = x;
	for (; j > 1; j >>= 1) {
		merge_key s = t[j ^ 1].key;

		/* selects, not branches: which wins is not predictable */
		low = key_ts(s) < low ? key_ts(s) : low;
		x = key_less(s, x) ? s : x;
		t[j >> 1].key = x;
	}
	*others = low;
	return x;
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
		t[leaves + j].key = j < m->nq ? head_key(&m->q[j], j) :
						key_of(INT64_MAX, NO_EVENT + j);
	for (j = leaves - 1; j >= 1; j--)
		t[j] = key_less(t[2 * j + 1].key, t[2 * j].key) ? t[2 * j + 1] :
								  t[2 * j];
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
	size_t cap = q->cap ? q->cap : 1024, have = q_count(q), head, i;
	struct rev *v;

	if (have + n <= q->cap)
		return 0;
	while (cap < have + n)
		cap *= 2;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -1;
	head = q_head(q);
	for (i = 0; i < have; i++)
		v[i] = q->v[(head + i) & (q->cap - 1)];
	free(q->v);
	q->v = v;
	q->cap = cap;
	q_set(q, 0, have);
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
			/* the earlier one by a mask, not a branch: which
			 * run comes next is not predictable */
			uintptr_t mb = -(uintptr_t)tb;
			const struct rev *src =
				(const struct rev *)(((uintptr_t)a & ~mb) |
						     ((uintptr_t)b & mb));

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
	size_t total = 0, start, have, i, r;
	int64_t t[MERGE_MAX_RUNS], low;

	for (r = 0; r < k && r < MERGE_MAX_RUNS; r++) {
		rv[r] = v[r];
		rn[r] = n[r];
		total += n[r];
	}
	if (!total)
		return 0;
	if (reserve(q, total))
		return -1;
	have = q_count(q);
	start = q_head(q) + have;
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
	q_set(q, q_head(q), have + total);
	if (!have) /* a new head */
		replay(m->tree, m->leaves + qi, head_key(q, qi), &low);
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
	w->wm = all ? INT64_MAX : watermark(m);
}

/* The earliest head time of the queues other than leaf j's. */
static inline int64_t others_first(const struct merge_node *t, size_t j)
{
	int64_t low = INT64_MAX;

	for (; j > 1; j >>= 1)
		if (key_ts(t[j ^ 1].key) < low)
			low = key_ts(t[j ^ 1].key);
	return low;
}

/* A run of queue qi, which goes on: its events up to stop (the others'
 * first head or the watermark), at most max - k, into out from k on.
 * Returns the new k. */
__attribute__((noinline)) /* rare with fine interleaving */
static size_t take_run(struct cpu_queue *q, size_t qi, int64_t stop,
		       struct merge_ev *out, size_t k, size_t max)
{
	const struct rev *v = q->v;
	size_t head = q_head(q), n = q_count(q), mask = q->cap - 1;

	while (n && k < max && v[head].ts <= stop) {
		out[k].e = &v[head];
		out[k++].qi = qi;
		head = (head + 1) & mask;
		n--;
	}
	q_set(q, head, n);
	return k;
}

size_t merge_take(struct merge *m, struct merge_walk *w, struct merge_ev *out,
		  size_t max)
{
	struct merge_node *t = m->tree;
	struct cpu_queue *qs = m->q;
	size_t k = 0, left = m->pending, leaves = m->leaves, cur = m->last_q, b;
	size_t run = 0, capped, go;
	int64_t wm = w->wm, others = INT64_MIN;
	merge_key root, ck;

	if (!left || !max)
		return 0;
	/* over the cap while k < capped: the oldest go whatever the
	 * watermark */
	capped = left > m->max_pending ? left - m->max_pending : 0;
	/* b: the queue of the next event, the least key's (the root's) or
	 * cur's, the queue of the last event, which goes on while it has
	 * events no later than the others' first (go) */
	root = t[1].key;
	b = (uint32_t)key_low(root);
	if (cur != SIZE_MAX && qs[cur].p != qs[cur].end &&
	    key_ts(t[leaves + cur].key) <= others_first(t, leaves + cur))
		b = cur;
	/* the root's time is b's head's: the earliest */
	if (max > left)
		max = left;
	while (k < max && (key_ts(root) <= wm || k < capped)) {
		struct cpu_queue *q = &qs[b];
		const struct rev *p;
		bool live = true;

		if (run > 2 && k >= capped) {
			/* a queue that went on twice may have a long run:
			 * taken up to the others' first head */
			k = take_run(q, b, others < wm ? others : wm, out, k,
				     max);
			ck = head_key(q, b);
			live = q->p != q->end;
		} else {
			p = q->p;
			out[k].e = p++;
			out[k++].qi = b;
			if (p == q->end) { /* the ring wraps, or it is empty */
				q->p = q->rest ? q->v : p;
				q->end = q->p + q->rest;
				q->rest = 0;
				ck = head_key(q, b);
				live = q->p != q->end;
			} else {
				q->p = p;
				ck = key_of(p->ts, b);
			}
		}
		root = replay(t, leaves + b, ck, &others);
		cur = b;
		/* b goes on, or the root's queue: masks, not branches, as
		 * which comes is not predictable */
		go = -(size_t)((key_ts(ck) <= others) & live);
		b = (uint32_t)key_low(root) ^ ((b ^ (uint32_t)key_low(root)) & go);
		run = (run + 1) & go;
	}
	m->last_q = cur;
	m->pending -= k;
	/* times only grow: the last taken is the latest */
	if (k && out[k - 1].e->ts > m->released)
		m->released = out[k - 1].e->ts;
	return k;
}
