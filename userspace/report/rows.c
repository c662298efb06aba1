/* The report's tables from the model (rows.h). */
#include "report/rows.h"

#include <stdlib.h>
#include <string.h>

static enum report_sort sort_key;

static uint64_t key_of(const struct row *r)
{
	switch (sort_key) {
	case SORT_WAIT:
		return r->lat_sum;
	case SORT_LATENCY:
		return r->lat_max;
	case SORT_OFFCPU:
		return r->off_s + r->off_d;
	default:
		return r->cpu_ns;
	}
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t kx = key_of(x), ky = key_of(y);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct cpu_row *x = a, *y = b;

	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

bool report_wants(const struct report_opts *o, const struct thread *t,
		  const char *name)
{
	size_t i;

	if (o->comm && strcmp(o->comm, name))
		return false;
	if (!o->pids)
		return true;
	for (i = 0; i < o->npids; i++)
		if (o->pids[i] == t->tid || o->pids[i] == t->tgid)
			return true;
	return false;
}

static void add_thread(struct row *r, const struct thread *t)
{
	r->threads++;
	r->cpu_ns += t->cpu_ns;
	r->vol += t->vol;
	r->invol += t->invol;
	r->off_s += t->off_s;
	r->off_d += t->off_d;
	r->lat_sum += t->lat_sum;
	if (t->hist)
		r->lat_n += t->hist->n;
	if (t->hist && t->hist->n && t->lat_max >= r->lat_max) {
		r->lat_max = t->lat_max;
		r->lat_max_ts = t->lat_max_ts;
	}
}

static const struct thread *find_thread(const struct model *m,
					uint32_t machine, int32_t tid)
{
	return model_find(m, machine, tid);
}

/* Rows of every wanted thread, or of their processes. */
/* Adds a thread's blocked functions to its row (a process's row sums its
 * threads', keeping the functions with the most time). */
static void add_blocked(struct row *row, const struct thread *t)
{
	size_t i, k;

	for (i = 0; i < BLOCKED_SLOTS && t->bl[i].count; i++) {
		const struct blocked_row b = { t->bl[i].key, NULL,
					       t->bl[i].count, t->bl_ns[i] };
		struct blocked_row *min = NULL;

		for (k = 0; k < BLOCKED_SLOTS && row->blocked[k].count; k++) {
			if (row->blocked[k].fn == b.fn)
				break;
			if (!min || row->blocked[k].ns < min->ns)
				min = &row->blocked[k];
		}
		if (k < BLOCKED_SLOTS && row->blocked[k].count) {
			row->blocked[k].count += b.count;
			row->blocked[k].ns += b.ns;
		} else if (k < BLOCKED_SLOTS) {
			row->blocked[k] = b;
		} else if (min->ns < b.ns) {
			*min = b;
		}
	}
}

static int cmp_blocked(const void *a, const void *b)
{
	const struct blocked_row *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Sorts a row's blocked functions, names them, keeps the top ones. */
static void finish_blocked(struct row *row, const struct names *names)
{
	size_t n = 0;

	while (n < BLOCKED_SLOTS && row->blocked[n].count)
		n++;
	qsort(row->blocked, n, sizeof(row->blocked[0]), cmp_blocked);
	row->nblocked = n < ROW_BLOCKED_TOP ? n : ROW_BLOCKED_TOP;
	for (n = 0; n < row->nblocked; n++)
		row->blocked[n].name = names_str(names, row->blocked[n].fn);
}

static int gather_rows(struct report *r, const struct report_opts *o,
		       const struct model *m, const struct names *names)
{
	struct hmap procs;
	size_t i;
	int err = 0;

	r->rows = calloc(m->nthr ? m->nthr : 1, sizeof(*r->rows));
	if (o->by_process) {
		r->phist = calloc(m->nthr ? m->nthr : 1,
				  sizeof(*r->phist));
		r->nphist = m->nthr;
	}
	if (!r->rows || (o->by_process && !r->phist))
		return -1;
	hmap_init(&procs, 8, sizeof(uint32_t), hmap_random_seed());
	for (i = 0; i < m->nthr; i++) {
		const struct thread *t = &m->thr[i];
		const struct thread *leader = t;
		int32_t pid = t->tgid >= 0 ? t->tgid : t->tid;
		const char *name = names_str(names, t->name);
		struct row *row;

		if (!t->tid || (r->machine >= 0 && t->machine != r->machine))
			continue;
		if (o->by_process) {
			uint64_t key = (uint64_t)t->machine << 32 | (uint32_t)pid;
			uint32_t *slot;
			bool added;

			leader = find_thread(m, t->machine, pid);
			if (!leader)
				leader = t;
			name = names_str(names, leader->name);
			if (!report_wants(o, leader, name))
				continue;
			slot = hmap_insert(&procs, &key, &added);
			if (!slot) {
				err = -1;
				break;
			}
			if (added) {
				*slot = (uint32_t)r->nrows++;
				r->rows[*slot] = (struct row){
					.machine = t->machine, .tid = pid,
					.tgid = pid, .name = name };
			}
			row = &r->rows[*slot];
			if (t->hist && hist_merge(&r->phist[*slot], t->hist)) {
				err = -1;
				break;
			}
		} else {
			if (!report_wants(o, t, name))
				continue;
			row = &r->rows[r->nrows++];
			*row = (struct row){ .machine = t->machine,
					     .tid = t->tid, .tgid = t->tgid,
					     .name = name, .t = t };
		}
		add_thread(row, t);
		add_blocked(row, t);
	}
	hmap_free(&procs);
	for (i = 0; i < r->nrows && !err; i++) {
		struct row *row = &r->rows[i];

		finish_blocked(row, names);
		const struct hist *h = o->by_process ? &r->phist[i] :
				       row->t->hist;

		if (h && h->n) {
			row->p50 = hist_percentile(h, 50);
			row->p90 = hist_percentile(h, 90);
			row->p99 = hist_percentile(h, 99);
		}
		if (row->lat_n)
			row->lat_max_ts -= r->first;
	}
	return err;
}

static int gather_wakers(struct report *r, const struct report_opts *o,
			 const struct model *m, const struct names *names)
{
	struct row **by_wait;
	size_t i, n = 0, k;

	if (o->by_process || !o->wakers_of || !r->nrows)
		return 0;
	by_wait = malloc(r->nrows * sizeof(*by_wait));
	r->wakers = calloc(o->wakers_of, sizeof(*r->wakers));
	if (!by_wait || !r->wakers) {
		free(by_wait);
		return -1;
	}
	/* the rows that waited longest, by a selection of wakers_of */
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].lat_sum && r->rows[i].t->wk[0].count)
			by_wait[n++] = &r->rows[i];
	for (k = 0; k < o->wakers_of && k < n; k++) {
		struct waker_row *w = &r->wakers[r->nwakers++];
		struct sketch_slot s[WAKER_SLOTS];
		size_t best = k, a, b;

		for (i = k + 1; i < n; i++)
			if (by_wait[i]->lat_sum > by_wait[best]->lat_sum)
				best = i;
		w->of = by_wait[best];
		by_wait[best] = by_wait[k];
		by_wait[k] = (struct row *)w->of;
		memcpy(s, w->of->t->wk, sizeof(s));
		for (a = 0; a < WAKER_SLOTS; a++)
			for (b = a + 1; b < WAKER_SLOTS; b++)
				if (s[b].count > s[a].count) {
					struct sketch_slot x = s[a];

					s[a] = s[b];
					s[b] = x;
				}
		for (a = 0; a < WAKER_SLOTS && s[a].count; a++) {
			int32_t tid = (int32_t)s[a].key;
			const struct thread *wt;

			if (tid == WAKER_HARDIRQ || tid == WAKER_SOFTIRQ) {
				*(tid == WAKER_HARDIRQ ? &w->hardirq :
							 &w->softirq) =
					s[a].count;
				continue;
			}
			if (w->n == WAKERS_SHOWN)
				continue;
			wt = find_thread(m, w->of->machine, tid);
			w->tid[w->n] = tid;
			w->count[w->n] = s[a].count;
			w->name[w->n] = wt ? names_str(names, wt->name) :
				     tid ? "" : "swapper";
			w->n++;
		}
	}
	free(by_wait);
	return 0;
}

static bool is_loss(const struct stat_row *s)
{
	static const char *const also[] = {
		"ftrace_cpu_dropped_events_delta", "traced_buf_chunks_overwritten",
		"traced_buf_bytes_overwritten", "mismatched_sched_switch_tids",
	};
	size_t i;

	if (s->value <= 0)
		return false;
	if (s->severity == SEV_DATA_LOSS)
		return true;
	for (i = 0; i < sizeof(also) / sizeof(also[0]); i++)
		if (!strcmp(s->name, also[i]))
			return true;
	return false;
}

static int gather_losses(struct report *r, const struct stat_table *st)
{
	size_t i;

	r->losses = calloc(st->n + 8, sizeof(*r->losses));
	if (!r->losses)
		return -1;
	for (i = 0; i < st->n; i++)
		if (is_loss(&st->rows[i]))
			r->losses[r->nlosses++] = (struct loss_row){
				st->rows[i].name, st->rows[i].idx,
				st->rows[i].machine, st->rows[i].value };
	r->lower_bounds = r->nlosses > 0;
	return 0;
}

/* The time range and events of machine r->machine, from its CPUs. */
static void machine_range(struct report *r, const struct model *m,
			  const struct merge *mg)
{
	size_t i;

	r->events = 0;
	for (i = 0; i < m->ncpu; i++) {
		const struct cpu_stat *c = &m->cpu[i];

		if (mg->q[i].machine != r->machine || !c->events)
			continue;
		if (!r->events || c->first < r->first)
			r->first = c->first;
		if (!r->events || c->last > r->last)
			r->last = c->last;
		r->events += c->events;
	}
}

int report_build(struct report *r, const struct report_opts *o,
		 const struct model *m, const struct names *names,
		 const struct merge *mg, const struct stat_table *st,
		 int64_t machine)
{
	size_t i;

	r->machine = machine;
	r->first = m->first;
	r->last = m->last;
	r->events = m->events;
	if (machine >= 0)
		machine_range(r, m, mg);
	r->by_process = o->by_process;
	sort_key = o->sort;
	if (gather_losses(r, st) || gather_rows(r, o, m, names))
		return -1;
	r->total_rows = r->nrows;
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_row);
	if (o->top && r->nrows > o->top)
		r->nrows = o->top;
	if (gather_wakers(r, o, m, names))
		return -1;
	r->cpus = calloc(m->ncpu ? m->ncpu : 1, sizeof(*r->cpus));
	if (!r->cpus)
		return -1;
	for (i = 0; i < m->ncpu; i++) {
		if (!m->cpu[i].selected ||
		    (machine >= 0 && mg->q[i].machine != machine))
			continue;
		r->cpus[r->ncpu_rows++] = (struct cpu_row){
			mg->q[i].machine, mg->q[i].cpu, &m->cpu[i] };
		r->multi_machine |= machine < 0 && mg->q[i].machine != 0;
		r->total_cpu_ns += m->cpu[i].busy + m->cpu[i].idle;
	}
	qsort(r->cpus, r->ncpu_rows, sizeof(*r->cpus), cmp_cpu);
	r->ncpus = r->ncpu_rows;
	return 0;
}

void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nsections; i++)
		report_free(&r->sections[i]);
	free(r->sections);
	for (i = 0; r->phist && i < r->nphist; i++)
		hist_release(&r->phist[i]);
	free(r->rows);
	free(r->phist);
	free(r->cpus);
	free(r->wakers);
	free(r->losses);
	memset(r, 0, sizeof(*r));
}
