/* The report as text tables for a terminal (rows.h): header and losses,
 * then threads (or processes), CPUs and wakers, columns aligned, times in
 * ns, us, ms or s; a trace with call stacks ends with its off-CPU call
 * sites. */
#include <inttypes.h>
#include <stdio.h>

#include "report/offcpu.h"
#include "report/rows.h"

/* A duration as a person reads it, in buf (16 bytes). */
static const char *dur(uint64_t ns, char buf[16])
{
	if (ns < 1000)
		snprintf(buf, 16, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, 16, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, 16, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, 16, "%.3fs", (double)ns / 1e9);
	return buf;
}

/* ": N CPUs, N events, from s to s (span)" and the line's end. */
static void span(const struct report *r)
{
	char a[16];

	printf(": %zu CPUs, %" PRIu64 " events", r->ncpus, r->events);
	if (r->events)
		printf(", %.9f s to %.9f s (%s)", (double)r->first / 1e9,
		       (double)r->last / 1e9,
		       dur((uint64_t)(r->last - r->first), a));
	printf("\n");
}

static void header(const struct report *r)
{
	size_t i;

	printf("Trace %s", r->file);
	if (r->nsections)
		printf(", %zu machines", r->nsections);
	else if (r->machine_name && r->machine_name[0])
		printf(", machine %s", r->machine_name);
	span(r);
	if (!r->nlosses) {
		printf("Losses: none recorded.\n");
		return;
	}
	printf("LOSSES: the trace lost events; every figure below is a lower "
	       "bound (>=).\n");
	for (i = 0; i < r->nlosses; i++) {
		const struct loss_row *l = &r->losses[i];

		printf("  %s", l->name);
		if (l->idx >= 0)
			printf("[%" PRId64 "]", l->idx);
		if (l->machine >= 0)
			printf(" machine %" PRId64, l->machine);
		printf(" = %" PRId64 "\n", l->value);
	}
}

static void threads(const struct report *r, bool by_process)
{
	const char *lb = r->lower_bounds ? ">=" : "";
	char b[10][16];
	size_t i;

	printf("\n%s (%zu of %zu, by %s):\n",
	       by_process ? "Processes" : "Threads", r->nrows, r->total_rows,
	       r->sort_name);
	printf("%8s %8s %-16s %2s%9s %6s %7s %7s %7s %8s %8s %8s %8s %8s "
	       "%12s %9s %9s\n",
	       by_process ? "PID" : "TID", by_process ? "THREADS" : "PID",
	       "COMM", lb, "CPU", "SHARE", "SW-VOL", "SW-INV", "LAT-N", "MEAN",
	       "P50", "P90", "P99", "MAX", "MAX-AT", "OFF-S", "OFF-D");
	for (i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];
		char pid[16];

		if (by_process)
			snprintf(pid, sizeof(pid), "%" PRIu32, w->threads);
		else if (w->tgid >= 0)
			snprintf(pid, sizeof(pid), "%" PRId32, w->tgid);
		else
			snprintf(pid, sizeof(pid), "-");
		printf("%8" PRId32 " %8s %-16s %11s %5.1f%% %7" PRIu64
		       " %7" PRIu64 " %7" PRIu64 " %8s %8s %8s %8s %8s %12s "
		       "%9s %9s\n",
		       w->tid, pid, w->name[0] ? w->name : "-",
		       dur(w->cpu_ns, b[0]),
		       r->total_cpu_ns ? 100.0 * (double)w->cpu_ns /
						 (double)r->total_cpu_ns : 0.0,
		       w->vol, w->invol, w->lat_n,
		       w->lat_n ? dur(w->lat_sum / w->lat_n, b[1]) : "-",
		       w->lat_n ? dur(w->p50, b[2]) : "-",
		       w->lat_n ? dur(w->p90, b[3]) : "-",
		       w->lat_n ? dur(w->p99, b[4]) : "-",
		       w->lat_n ? dur(w->lat_max, b[5]) : "-",
		       w->lat_n ? dur((uint64_t)w->lat_max_ts, b[6]) : "-",
		       dur(w->off_s, b[7]), dur(w->off_d, b[8]));
	}
}

static void cpus(const struct report *r)
{
	char a[16], b[16];
	size_t i;

	printf("\nCPUs:\n%s%4s %11s %11s %9s %10s\n",
	       r->multi_machine ? "MACHINE " : "", "CPU", "BUSY", "IDLE",
	       "SWITCHES", "MIGR-IN");
	for (i = 0; i < r->ncpu_rows; i++) {
		const struct cpu_row *c = &r->cpus[i];

		if (r->multi_machine)
			printf("%7" PRIu32 " ", c->machine);
		printf("%4" PRIu32 " %11s %11s %9" PRIu64 " %10" PRIu64 "\n",
		       c->cpu, dur(c->s->busy, a), dur(c->s->idle, b),
		       c->s->switches, c->s->migrations_in);
	}
}

static void wakers(const struct report *r)
{
	size_t i, k;

	if (!r->nwakers)
		return;
	printf("\nWakers of the threads that waited longest:\n");
	for (i = 0; i < r->nwakers; i++) {
		const struct waker_row *w = &r->wakers[i];

		printf("%8" PRId32 " %-16s woken by", w->of->tid,
		       w->of->name[0] ? w->of->name : "-");
		for (k = 0; k < w->n; k++)
			printf("%s %s/%" PRId32 " x%" PRIu32, k ? "," : "",
			       w->name[k][0] ? w->name[k] : "-", w->tid[k],
			       w->count[k]);
		if (w->hardirq || w->softirq)
			printf("%s interrupts:", w->n ? ";" : "");
		if (w->hardirq)
			printf(" hard irq x%" PRIu32 "%s", w->hardirq,
			       w->softirq ? "," : "");
		if (w->softirq)
			printf(" softirq x%" PRIu32, w->softirq);
		printf("\n");
	}
}

/* Where the rows' sleeps blocked, for the rows that have it (traces
 * recorded with --blocked-reason). */
static void blocked(const struct report *r)
{
	char a[32];
	size_t i, k, n = 0;

	for (i = 0; i < r->nrows; i++)
		n += r->rows[i].nblocked > 0;
	if (!n)
		return;
	printf("\nBlocked in (kernel function, off-CPU time, sleeps):\n");
	for (i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];

		if (!w->nblocked)
			continue;
		printf("%8" PRId32 " %-16s", w->tid, w->name[0] ? w->name : "-");
		for (k = 0; k < w->nblocked; k++)
			printf("%s %s %s x%" PRIu64, k ? "," : "",
			       w->blocked[k].name[0] ? w->blocked[k].name : "?",
			       dur(w->blocked[k].ns, a), w->blocked[k].count);
		printf("\n");
	}
}

/* The threads of most sampled off-CPU time and their heaviest stacks,
 * each by its call site (offcpu_site_short). */
static void call_sites(const struct report *r)
{
	char a[16], site[160];
	size_t i, k;

	if (!r->has_stacks)
		return;
	printf("\nOff-CPU call sites (sampled sleeps; kernel frames below the "
	       "scheduler | user frames, leaf first):\n");
	if (!r->noffcpu)
		printf("  (no sampled sleep of these threads ended in the "
		       "trace)\n");
	for (i = 0; i < r->noffcpu; i++) {
		const struct offcpu_thread *t = &r->offcpu[i];

		printf("%8" PRId32 " %-16s %10s x%" PRIu64 "\n", t->tid,
		       t->name[0] ? t->name : "-", dur(t->ns, a), t->count);
		for (k = 0; k < t->nsite; k++) {
			offcpu_site_short(t->site[k].stack, site, sizeof(site));
			printf("%27s x%-6" PRIu64 " %s\n", dur(t->site[k].ns, a),
			       t->site[k].count, site);
		}
	}
}

/* The tables of one machine, or of the whole trace. */
static void tables(const struct report *r)
{
	threads(r, r->by_process);
	blocked(r);
	cpus(r);
	wakers(r);
}

int report_print_text(const struct report *r)
{
	size_t i;

	header(r);
	if (r->triggers)
		trig_seen_print(r->triggers);
	if (!r->nsections)
		tables(r);
	for (i = 0; i < r->nsections; i++) {
		const struct report *s = &r->sections[i];

		printf("\n== Machine %" PRId64, s->machine);
		if (s->machine_name && s->machine_name[0])
			printf(" (%s)", s->machine_name);
		span(s);
		tables(s);
	}
	call_sites(r);
	return 0;
}
