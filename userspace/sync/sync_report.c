/* The summary and warnings of `sync` (see sync_report.h). */
#include "sync/sync_report.h"

#include <inttypes.h>
#include <stdio.h>

#include "trace/clock_names.h"
#include "util/log.h"

const char *sync_clock_label(uint32_t id, char *buf, size_t n)
{
	const char *name = clock_name(id);

	if (name)
		return name;
	snprintf(buf, n, "clock %u", id);
	return buf;
}

/* " (machine NAME)" for an input on several machines or a named one. */
static const char *where(const struct sync_report *r, const struct input *in,
			 uint32_t slot, char *buf, size_t n)
{
	const struct machine_table *t = &r->tl->machines;
	char label[64];

	if (t->n < 2 || slot >= in->scan.fm.n) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, n, " (%s)", machine_table_label(t, in->scan.fm.v[slot].machine,
						 label, sizeof(label)));
	return buf;
}

/* Where the samples printed without a pid got their process from. */
static void pid_line(const struct input *in, const struct sync_stats *st)
{
	if (st->pid_traced || st->pid_from_tid)
		log_info("sync: %s: %" PRIu64 " perf samples without a pid: %"
			 PRIu64 " took the process of their thread from the "
			 "traces of its machine, %" PRIu64 " pid = tid (a "
			 "thread the traces do not know)", in->file.name,
			 st->pid_traced + st->pid_from_tid, st->pid_traced,
			 st->pid_from_tid);
}

static void input_line(const struct sync_report *r, size_t i)
{
	const struct input *in = r->in[i];
	const struct sync_stats *st = &r->per_input[i];
	char w[160];

	if (in->file.kind == INPUT_PERF_TEXT) {
		log_info("sync: %s%s: %" PRIu64 " perf samples read, %" PRIu64
			 " written", in->file.name, where(r, in, 0, w, sizeof(w)),
			 st->samples_in, st->samples_out);
		pid_line(in, st);
	} else {
		log_info("sync: %s%s: %" PRIu64 " packets read, %" PRIu64
			 " written", in->file.name, where(r, in, 0, w, sizeof(w)),
			 st->packets_in, st->packets_out);
	}
}

static void summary(const struct sync_report *r)
{
	const struct sync_stats *st = r->total;
	const struct machine_table *t = &r->tl->machines;
	char buf[32], m[64];
	size_t i;

	if (r->n == 1 && r->in[0]->file.kind == INPUT_PROTO) {
		log_info("sync: %s: %" PRIu64 " packets read, %" PRIu64
			 " written to %s on %s (%" PRIu64 " timestamps "
			 "converted)", r->in[0]->file.name, st->packets_in,
			 st->packets_out, r->out,
			 sync_clock_label(r->tl->trace_clock.clock_id, buf,
					  sizeof(buf)),
			 st->converted);
		return;
	}
	for (i = 0; i < r->n; i++)
		input_line(r, i);
	log_info("sync: %zu inputs, %zu machines: %" PRIu64 " packets and %"
		 PRIu64 " perf samples written to %s on %s of %s (%" PRIu64
		 " timestamps converted)", r->n, t->n,
		 st->packets_out, st->samples_out, r->out,
		 sync_clock_label(r->tl->trace_clock.clock_id, buf,
				  sizeof(buf)),
		 machine_table_label(t, r->tl->trace_clock.machine, m, sizeof(m)),
		 st->converted);
}

/* A drop count of the output, with its machine when there are several. */
static void stat_line(void *ctx, enum sync_stat s, size_t idx,
		      uint32_t out_id, uint64_t n)
{
	const struct sync_report *r = ctx;
	char m[64];

	(void)out_id;
	if (!n)
		return;
	if (r->tl->machines.n < 2)
		log_warn("sync: %s: %" PRIu64, sync_stat_name(s), n);
	else
		log_warn("sync: %s: %" PRIu64 " on %s", sync_stat_name(s), n,
			 idx == SIZE_MAX ? "the host" :
			 machine_table_label(&r->tl->machines, (uint32_t)idx, m,
				       sizeof(m)));
}

void sync_report(const struct sync_report *r)
{
	const struct sync_stats *st = r->total;
	uint64_t dropped = st->packets_in - st->packets_out - st->packets_omitted;
	char buf[32];
	int i;

	if (!r->quiet) {
		summary(r);
		if (st->packets_omitted)
			log_info("sync: %" PRIu64 " packets left out: clock "
				 "snapshots of other machines and inputs, "
				 "repeated SystemInfo, remote_clock_sync (the "
				 "times are on the trace clock now)",
				 st->packets_omitted);
		if (r->sort->runs)
			log_info("sync: sorted in %" PRIu64 " runs on disk, %"
				 PRIu64 " merge passes, %" PRIu64 " MiB "
				 "written to temporary files", r->sort->runs,
				 r->sort->merge_passes,
				 r->sort->spilled_bytes >> 20);
	}
	if (dropped)
		log_warn("sync: %" PRIu64 " packets dropped: their timestamp "
			 "could not be converted", dropped);
	if (st->events_dropped)
		log_warn("sync: %" PRIu64 " events dropped from ftrace "
			 "bundles: their timestamp could not be converted",
			 st->events_dropped);
	if (st->fields_dropped)
		log_warn("sync: %" PRIu64 " previous_bundle_end_timestamp "
			 "fields dropped: they could not be converted",
			 st->fields_dropped);
	if (st->samples_in != st->samples_out)
		log_warn("sync: %" PRIu64 " perf samples dropped: their "
			 "timestamp could not be converted",
			 st->samples_in - st->samples_out);
	if (st->bundles && r->tl->trace_clock.clock_id != BTR_CLOCK_BOOTTIME)
		log_warn("sync: the ftrace bundles are on %s now, but "
			 "trace_processor and the Perfetto UI read bundle times "
			 "as BOOTTIME: use --trace-clock BOOTTIME for files "
			 "meant for them",
			 sync_clock_label(r->tl->trace_clock.clock_id, buf,
					  sizeof(buf)));
	for (i = 0; i < SYNC_STAT_COUNT; i++)
		timeline_each_machine_stat(r->tl, st, (enum sync_stat)i,
					   stat_line, (void *)r);
}

void sync_report_unplaced(const struct sync_report *r, bool strict)
{
	const struct machine_table *t = &r->tl->machines;
	const struct btr_clock_key g = r->tl->trace_clock;
	char a[32], b[32], m[64], w[160];
	size_t i;

	for (i = 0; i < r->pl->n; i++) {
		const struct unplaced *u = &r->pl->v[i];
		const struct input *in = r->in[u->input];

		(strict ? log_error : log_warn)(
			"sync: %s%s: its %s has no relation to the trace clock "
			"(%s of %s): no clock snapshot path, no REALTIME on "
			"both machines, not the same clock; its events there "
			"are dropped (clock_sync_unrelatable_clock_domains)",
			in->file.name, where(r, in, u->slot, w, sizeof(w)),
			sync_clock_label(u->clock, a, sizeof(a)),
			sync_clock_label(g.clock_id, b, sizeof(b)),
			machine_table_label(t, g.machine, m, sizeof(m)));
	}
	if (r->pl->n && !strict)
		log_warn("sync: relate those clocks with a manifest "
			 "(--manifest, `clocks`), or use --strict to fail");
}
