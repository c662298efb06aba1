/* The report as one JSON object (rows.h), the same figures as the text
 * with every time in ns: header, losses, threads or processes, cpus,
 * wakers, and offcpu_stacks (null without call stacks). */
#include <json-c/json.h>
#include <stdio.h>

#include "report/offcpu.h"
#include "report/rows.h"

static json_object *u64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *thread_row(const struct report *r, const struct row *w)
{
	json_object *o = json_object_new_object(), *lat, *off;
	size_t i;

	add(o, r->by_process ? "pid" : "tid", json_object_new_int(w->tid));
	if (r->by_process)
		add(o, "threads", json_object_new_int64(w->threads));
	else
		add(o, "pid", w->tgid >= 0 ? json_object_new_int(w->tgid) : NULL);
	add(o, "comm", json_object_new_string(w->name));
	if (r->multi_machine)
		add(o, "machine", json_object_new_int64(w->machine));
	add(o, "cpu_ns", u64(w->cpu_ns));
	add(o, "share", json_object_new_double(
		r->total_cpu_ns ? (double)w->cpu_ns / (double)r->total_cpu_ns : 0));
	add(o, "switches_voluntary", u64(w->vol));
	add(o, "switches_involuntary", u64(w->invol));
	lat = json_object_new_object();
	add(lat, "count", u64(w->lat_n));
	add(lat, "sum_ns", u64(w->lat_sum));
	add(lat, "mean_ns", u64(w->lat_n ? w->lat_sum / w->lat_n : 0));
	add(lat, "p50_ns", u64(w->p50));
	add(lat, "p90_ns", u64(w->p90));
	add(lat, "p99_ns", u64(w->p99));
	add(lat, "max_ns", u64(w->lat_max));
	add(lat, "max_at_ns", w->lat_n ? json_object_new_int64(w->lat_max_ts) :
					 NULL);
	add(o, "latency", lat);
	off = json_object_new_object();
	add(off, "S_ns", u64(w->off_s));
	add(off, "D_ns", u64(w->off_d));
	add(o, "off_cpu", off);
	off = json_object_new_array();
	for (i = 0; i < w->nblocked; i++) {
		json_object *b = json_object_new_object();

		add(b, "function", json_object_new_string(w->blocked[i].name));
		add(b, "count", u64(w->blocked[i].count));
		add(b, "off_cpu_ns", u64(w->blocked[i].ns));
		json_object_array_add(off, b);
	}
	add(o, "blocked_in", off);
	return o;
}

/* The time range of one machine, or of the whole trace, into o. */
static void span(json_object *o, const struct report *r)
{
	add(o, "start_ns", json_object_new_int64(r->first));
	add(o, "end_ns", json_object_new_int64(r->last));
	add(o, "events", u64(r->events));
	add(o, "cpus", u64(r->ncpus));
}

/* The tables of one machine, or of the whole trace, into o. */
static void tables(json_object *o, const struct report *r)
{
	json_object *a;
	size_t i, k;

	add(o, "rows_total", u64(r->total_rows));
	a = json_object_new_array();
	for (i = 0; i < r->nrows; i++)
		json_object_array_add(a, thread_row(r, &r->rows[i]));
	add(o, r->by_process ? "processes" : "threads", a);
	a = json_object_new_array();
	for (i = 0; i < r->ncpu_rows; i++) {
		const struct cpu_row *c = &r->cpus[i];
		json_object *j = json_object_new_object();

		if (r->multi_machine)
			add(j, "machine", json_object_new_int64(c->machine));
		add(j, "cpu", json_object_new_int64(c->cpu));
		add(j, "busy_ns", u64(c->s->busy));
		add(j, "idle_ns", u64(c->s->idle));
		add(j, "switches", u64(c->s->switches));
		add(j, "migrations_in", u64(c->s->migrations_in));
		json_object_array_add(a, j);
	}
	add(o, "cpu_table", a);
	a = json_object_new_array();
	for (i = 0; i < r->nwakers; i++) {
		const struct waker_row *w = &r->wakers[i];
		json_object *j = json_object_new_object(), *b;

		add(j, "tid", json_object_new_int(w->of->tid));
		add(j, "comm", json_object_new_string(w->of->name));
		b = json_object_new_array();
		for (k = 0; k < w->n; k++) {
			json_object *x = json_object_new_object();

			add(x, "tid", json_object_new_int(w->tid[k]));
			add(x, "comm", json_object_new_string(w->name[k]));
			add(x, "count", json_object_new_int64(w->count[k]));
			json_object_array_add(b, x);
		}
		add(j, "woken_by", b);
		b = json_object_new_object();
		add(b, "hard", json_object_new_int64(w->hardirq));
		add(b, "soft", json_object_new_int64(w->softirq));
		add(j, "woken_by_irq", b);
		json_object_array_add(a, j);
	}
	add(o, "wakers", a);
}

/* The off-CPU call sites: threads, each with its heaviest stacks
 * (folded, root first, as --folded writes them) and their call sites. */
static json_object *call_sites(const struct report *r)
{
	json_object *a, *o, *s, *x;
	char site[160];
	size_t i, k;

	if (!r->has_stacks)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < r->noffcpu; i++) {
		const struct offcpu_thread *t = &r->offcpu[i];

		o = json_object_new_object();
		add(o, "tid", json_object_new_int(t->tid));
		add(o, "pid", t->tgid >= 0 ? json_object_new_int(t->tgid) : NULL);
		add(o, "comm", json_object_new_string(t->name));
		add(o, "machine", json_object_new_int64(t->machine));
		add(o, "offcpu_ns", u64(t->ns));
		add(o, "samples", u64(t->count));
		s = json_object_new_array();
		for (k = 0; k < t->nsite; k++) {
			x = json_object_new_object();
			offcpu_site_short(t->site[k].stack, site, sizeof(site));
			add(x, "offcpu_ns", u64(t->site[k].ns));
			add(x, "samples", u64(t->site[k].count));
			add(x, "site", json_object_new_string(site));
			add(x, "stack", json_object_new_string(t->site[k].stack));
			json_object_array_add(s, x);
		}
		add(o, "stacks", s);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *name_or_null(const char *name)
{
	return name && name[0] ? json_object_new_string(name) : NULL;
}

int report_print_json(const struct report *r)
{
	json_object *o = json_object_new_object(), *a;
	size_t i;

	if (!o)
		return -1;
	add(o, "file", json_object_new_string(r->file));
	add(o, "machine", name_or_null(r->machine_name));
	span(o, r);
	add(o, "lower_bounds", json_object_new_boolean(r->lower_bounds));
	a = json_object_new_array();
	for (i = 0; i < r->nlosses; i++) {
		json_object *l = json_object_new_object();

		add(l, "name", json_object_new_string(r->losses[i].name));
		add(l, "idx", r->losses[i].idx >= 0 ?
				      json_object_new_int64(r->losses[i].idx) : NULL);
		add(l, "machine", r->losses[i].machine >= 0 ?
			json_object_new_int64(r->losses[i].machine) : NULL);
		add(l, "value", json_object_new_int64(r->losses[i].value));
		json_object_array_add(a, l);
	}
	add(o, "losses", a);
	add(o, "by", json_object_new_string(r->by_process ? "process" : "thread"));
	add(o, "sort", json_object_new_string(r->sort_name));
	if (r->triggers)
		add(o, "triggers", trig_seen_json(r->triggers));
	tables(o, r);
	if (r->nsections) {
		a = json_object_new_array();
		for (i = 0; i < r->nsections; i++) {
			json_object *m = json_object_new_object();

			add(m, "machine_id", json_object_new_int64(
						     r->sections[i].machine));
			add(m, "machine", name_or_null(
						  r->sections[i].machine_name));
			span(m, &r->sections[i]);
			tables(m, &r->sections[i]);
			json_object_array_add(a, m);
		}
		add(o, "machines", a);
	}
	add(o, "offcpu_stacks", call_sites(r));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}
