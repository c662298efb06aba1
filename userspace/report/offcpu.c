/* The model's sleeps weighed into the samples' stacks (offcpu.h). */
#include "report/offcpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* model.h's sleep_hook: a sleep begins (d < 0) or ends, counted d ns. */
static void on_sleep(void *ctx, uint32_t i, int64_t since, int64_t d)
{
	struct offcpu *o = ctx;
	struct sleep_mark *s;

	if (o->oom)
		return;
	if (d >= 0) {
		if (i < o->nopen && o->open[i] &&
		    (s = &o->sl[o->open[i] - 1])->since == since) {
			s->ns = (uint64_t)d;
			o->open[i] = 0;
		}
		return;
	}
	if (o->nsl >= UINT32_MAX ||
	    grow_array((void **)&o->sl, &o->capsl, o->nsl + 1, sizeof(*o->sl),
		       4096) ||
	    grow_zeroed((void **)&o->open, &o->nopen, (size_t)i + 1,
			sizeof(*o->open))) {
		o->oom = true;
		return;
	}
	o->sl[o->nsl] = (struct sleep_mark){ since, 0, i };
	o->open[i] = (uint32_t)++o->nsl;
}

void offcpu_init(struct offcpu *o)
{
	memset(o, 0, sizeof(*o));
}

void offcpu_listen(struct offcpu *o, struct model *m)
{
	m->sleep_hook = on_sleep;
	m->sleep_ctx = o;
}

void offcpu_free(struct offcpu *o)
{
	free(o->sl);
	free(o->open);
	free(o->e);
	memset(o, 0, sizeof(*o));
}

/* The sleeps by thread, each thread's in time order (the model's order):
 * a counting sort into out, thread t's at out[first[t]..first[t + 1]). */
static void by_thread(const struct offcpu *o, size_t nthr, size_t *first,
		      struct sleep_mark *out)
{
	size_t i;

	memset(first, 0, (nthr + 1) * sizeof(*first));
	for (i = 0; i < o->nsl; i++)
		first[o->sl[i].thread + 1]++;
	for (i = 0; i < nthr; i++)
		first[i + 1] += first[i];
	for (i = 0; i < o->nsl; i++)
		out[first[o->sl[i].thread]++] = o->sl[i];
	memmove(first + 1, first, nthr * sizeof(*first));
	first[0] = 0;
}

/* The ns of the sleep of v[0..n) (in time order) begun last at or
 * before ts, 0 when none. */
static uint64_t sleep_at(const struct sleep_mark *v, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) { /* the first later than ts */
		mid = lo + (hi - lo) / 2;
		if (v[mid].since <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? v[lo - 1].ns : 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct offcpu_entry *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

/* Whether sample v counts: a thread of the model that ro wants, a CPU
 * mo selects; *thread its index. */
static bool sample_wanted(const struct sample *v, const struct model *m,
			  const struct names *names,
			  const struct report_opts *ro,
			  const struct model_opts *mo, uint32_t *thread)
{
	const struct thread *t = model_find(m, v->machine, v->tid);

	if (!t || !report_wants(ro, t, names_str(names, t->name)))
		return false;
	if (mo->cpus && (v->cpu >= mo->ncpus || !mo->cpus[v->cpu]))
		return false;
	*thread = (uint32_t)(t - m->thr);
	return true;
}

int offcpu_join(struct offcpu *o, const struct samples *s,
		const struct model *m, const struct names *names,
		const struct report_opts *ro, const struct model_opts *mo)
{
	size_t *first = calloc(m->nthr + 1, sizeof(*first)), i, n = 0;
	struct sleep_mark *sl = malloc((o->nsl ? o->nsl : 1) * sizeof(*sl));
	struct offcpu_entry *e = malloc((s->n ? s->n : 1) * sizeof(*e));
	int err = -ENOMEM;

	if (!first || !sl || !e || o->oom)
		goto out;
	by_thread(o, m->nthr, first, sl);
	for (i = 0; i < s->n; i++) {
		const struct sample *v = &s->v[i];
		uint32_t t;
		uint64_t ns;

		if (!sample_wanted(v, m, names, ro, mo, &t))
			continue;
		ns = sleep_at(sl + first[t], first[t + 1] - first[t], v->ts);
		if (ns)
			e[n++] = (struct offcpu_entry){ t, s->stack[v->stack],
							ns, 1 };
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	o->ne = 0;
	for (i = 0; i < n; i++) { /* equal (thread, stack): one entry */
		struct offcpu_entry *last = o->ne ? &e[o->ne - 1] : NULL;

		if (last && !cmp_entry(last, &e[i])) {
			last->ns += e[i].ns;
			last->count++;
		} else {
			e[o->ne++] = e[i];
		}
	}
	free(o->e);
	o->e = e;
	e = NULL;
	err = 0;
out:
	free(first);
	free(sl);
	free(e);
	return err;
}
