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

		if (!q) {
			hmap_remove(&m->idx, &key);
			return -1;
		}
		m->q = q;
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

int merge_push(struct merge *m, size_t qi, const struct rev *v, size_t n)
{
	struct cpu_queue *q = &m->q[qi];
	size_t i, mask, pos;

	if (!n)
		return 0;
	if (reserve(q, n))
		return -1;
	mask = q->cap - 1;
	pos = q->head + q->n;
	for (i = 0; i < n; i++) {
		struct rev *d = &q->v[(pos + i) & mask];

		*d = v[i];
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
	q->n += n;
	m->pending += n;
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

void merge_release(struct merge *m, bool all, merge_fn fn, void *ctx)
{
	int64_t wm = all ? INT64_MAX : watermark(m);

	while (m->pending) {
		int64_t best = INT64_MAX, second = INT64_MAX, stop;
		size_t i, bi = 0;
		struct cpu_queue *q;

		for (i = 0; i < m->nq; i++) {
			const struct cpu_queue *c = &m->q[i];
			int64_t t;

			if (!c->n)
				continue;
			t = c->v[c->head].ts;
			if (t < best) {
				second = best;
				best = t;
				bi = i;
			} else if (t < second) {
				second = t;
			}
		}
		if (best > wm && m->pending <= MERGE_MAX_PENDING)
			break;
		/* over the cap: the oldest go whatever the watermark */
		stop = m->pending > MERGE_MAX_PENDING ? second :
			   (second < wm ? second : wm);
		if (stop < best)
			stop = best;
		q = &m->q[bi];
		do {
			if (q->v[q->head].ts > m->released)
				m->released = q->v[q->head].ts;
			fn(ctx, q, bi, &q->v[q->head]);
			q->head = (q->head + 1) & (q->cap - 1);
			q->n--;
			m->pending--;
		} while (q->n && q->v[q->head].ts <= stop);
	}
}
