/* `bpftrace-rec report FILE`: who used the CPUs, who waited to run and
 * for how long, and who slept, per thread or process, per CPU, with the
 * wakers of the threads that waited most; text or --json. The trace is
 * read through the conversion dump and sync share (convert/convert.h:
 * gzip, merged traces, every time on the trace clock), its packets
 * decoded on the wire (decode.h), the CPUs' events merged into one time
 * order (merge.h) and fed to the model (model.h); the losses come from
 * the statistics `stats` computes (stats/table.h), gathered in the same
 * walk. With --callstacks' samples, the off-CPU stacks (offcpu.h): a
 * section of call sites, or --folded lines (folded.h) alone. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "convert/convert.h"
#include "report/decode.h"
#include "report/folded.h"
#include "report/offcpu.h"
#include "report/rows.h"
#include "util/log.h"
#include "util/parse.h"
#include "util/wire.h"

enum { OPT_JSON = 1001, OPT_BY, OPT_SORT, OPT_TOP, OPT_PID, OPT_COMM,
       OPT_FROM, OPT_TO, OPT_CPU, OPT_FOLDED };

#define MAX_PIDS 1024

struct report_args {
	const char *path;
	bool json, folded;
	const char *table_opt;   /* an option of the tables, for --folded */
	struct report_opts o;
	struct model_opts mo;
	int32_t pids[MAX_PIDS];
	uint8_t cpus[DECODE_MAX_CPU];
};

static const struct argp_option options[] = {
	{ "json", OPT_JSON, NULL, 0, "One JSON object, times in ns", 0 },
	{ "by", OPT_BY, "thread|process", 0, "Rows per thread (default) or "
	  "per process", 0 },
	{ "sort", OPT_SORT, "KEY", 0, "cpu (default), wait (total latency), "
	  "latency (longest), offcpu", 0 },
	{ "top", OPT_TOP, "N", 0, "Show N rows (default 20, 0: all)", 0 },
	{ "pid", OPT_PID, "PID,...", 0, "Only these threads or processes", 0 },
	{ "comm", OPT_COMM, "NAME", 0, "Only threads (processes) named NAME", 0 },
	{ "from", OPT_FROM, "T", 0, "Start T after the first event (10s, "
	  "250ms, ...)", 0 },
	{ "to", OPT_TO, "T", 0, "End T after the first event", 0 },
	{ "cpu", OPT_CPU, "LIST", 0, "Only these CPUs: 0,2-3", 0 },
	{ "folded", OPT_FOLDED, NULL, 0, "Only the off-CPU stacks of a trace "
	  "recorded with --callstacks, as folded lines (comm;user "
	  "frames;-;kernel frames, root first) weighed in microseconds of "
	  "off-CPU time, for flamegraph.pl, inferno or speedscope; with "
	  "--pid, --comm, --from, --to, and --cpu (the CPU a sleep began on)",
	  0 },
	{ 0 },
};

static const char doc[] =
	"Summarize the scheduling of a trace: CPU time, scheduling latency "
	"and off-CPU time per thread or process, busy and idle time per CPU, "
	"and who woke the threads that waited most.\v"
	"Definitions (trace_processor's): CPU time is the sum of a thread's "
	"sched slices; scheduling latency the length of each runnable (R, "
	"R+) state that ends when the thread is switched in, from a wakeup, "
	"a new task or a preemption; off-CPU time the length of its S and D "
	"states. Intervals still open at the end of the trace do not count. "
	"Percentiles come from a log-linear histogram (within 6.25%). When "
	"the trace lost events the report lists the losses first and every "
	"figure is a lower bound. A trace of several machines (from sync) "
	"gets one section a machine, each as its input alone. A trace "
	"recorded with --callstacks also gets its threads' off-CPU call "
	"sites: the stack sampled at each sleep weighs that sleep's off-CPU "
	"time.\n\n"
	"Examples:\n"
	"  bpftrace-rec report trace.pb\n"
	"  bpftrace-rec report --sort wait --top 10 trace.pb.gz\n"
	"  bpftrace-rec report --by process --json all.pb | "
	"jq '.machines[].processes'\n"
	"  bpftrace-rec report --folded trace.pb | flamegraph.pl > "
	"offcpu.svg\n\n"
	"Exit status: 0, 1 for an unreadable, corrupt, truncated or empty "
	"trace (with --folded: also one without call stacks), 64 for a usage "
	"error.";

static int parse_pids(struct report_args *a, char *arg)
{
	char *save = NULL, *tok;
	uint64_t v;

	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (a->o.npids == MAX_PIDS || parse_u64(tok, 1, INT32_MAX, &v))
			return -1;
		a->pids[a->o.npids++] = (int32_t)v;
	}
	a->o.pids = a->pids;
	return a->o.npids ? 0 : -1;
}

static int parse_cpus(struct report_args *a, char *arg)
{
	char *save = NULL, *tok, *dash;
	uint64_t lo, hi, c;

	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (parse_u64(tok, 0, DECODE_MAX_CPU - 1, &lo))
			return -1;
		hi = lo;
		if (dash && parse_u64(dash + 1, lo, DECODE_MAX_CPU - 1, &hi))
			return -1;
		for (c = lo; c <= hi; c++)
			a->cpus[c] = 1;
		a->mo.cpus = a->cpus;
		a->mo.ncpus = DECODE_MAX_CPU;
	}
	return a->mo.cpus ? 0 : -1;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct report_args *a = st->input;
	uint64_t v;

	switch (key) {
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_FOLDED:
		a->folded = true;
		break;
	case OPT_BY:
		a->table_opt = "--by";
		if (strcmp(arg, "thread") && strcmp(arg, "process"))
			argp_error(st, "--by: '%s' is not thread or process", arg);
		a->o.by_process = !strcmp(arg, "process");
		break;
	case OPT_SORT:
		a->table_opt = "--sort";
		if (!strcmp(arg, "cpu"))
			a->o.sort = SORT_CPU;
		else if (!strcmp(arg, "wait"))
			a->o.sort = SORT_WAIT;
		else if (!strcmp(arg, "latency"))
			a->o.sort = SORT_LATENCY;
		else if (!strcmp(arg, "offcpu"))
			a->o.sort = SORT_OFFCPU;
		else
			argp_error(st, "--sort: '%s' is not cpu, wait, latency "
				   "or offcpu", arg);
		break;
	case OPT_TOP:
		a->table_opt = "--top";
		if (parse_u64(arg, 0, 1000000000, &v))
			argp_error(st, "--top: '%s' is not a count", arg);
		a->o.top = (size_t)v;
		break;
	case OPT_PID:
		if (parse_pids(a, arg))
			argp_error(st, "--pid: a list of up to %d pids, "
				   "comma-separated", MAX_PIDS);
		break;
	case OPT_COMM:
		a->o.comm = arg;
		break;
	case OPT_FROM:
	case OPT_TO:
		if (parse_duration_ns(arg, &v) || v > INT64_MAX)
			argp_error(st, "--%s: '%s' is not a time (10s, 250ms)",
				   key == OPT_FROM ? "from" : "to", arg);
		if (key == OPT_FROM) {
			a->mo.from = (int64_t)v;
			a->mo.has_from = true;
		} else {
			a->mo.to = (int64_t)v;
			a->mo.has_to = true;
		}
		break;
	case OPT_CPU:
		if (parse_cpus(a, arg))
			argp_error(st, "--cpu: '%s' is not a CPU list (0,2-3)", arg);
		break;
	case ARGP_KEY_ARG:
		if (a->path)
			argp_error(st, "too many arguments");
		a->path = arg;
		break;
	case ARGP_KEY_END:
		if (!a->path)
			argp_error(st, "missing FILE");
		if (a->mo.has_from && a->mo.has_to && a->mo.to <= a->mo.from)
			argp_error(st, "--to must be after --from");
		if (a->folded && (a->json || a->table_opt))
			argp_error(st, "--folded writes stacks, not the tables: "
				   "not with %s", a->json ? "--json" :
				   a->table_opt);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The walk of the second pass. */
struct walk {
	struct input *in;
	struct decoder dec;
	struct merge merge;
	struct model model;
	struct names names;
	struct stat_gather *stats;
	struct samples samples;  /* --callstacks' PerfSamples */
	struct offcpu offcpu;    /* the model's sleeps, then their stacks */
};

/* TracePacket.trace_config, and the data source of call stacks in it. */
#define P_TRACE_CONFIG 33
static const char perf_source[] = "linux.perf";

/* Whether the packet is a TraceConfig that asks for linux.perf (a trace
 * recorded with --callstacks, or by traced with perf samples): then the
 * sleeps are noted from the start, before its first sample. */
static bool asks_for_stacks(const uint8_t *data, size_t len)
{
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, data, len);
	while (wire_next(&r, &f) > 0)
		if (f.num == P_TRACE_CONFIG && f.type == WIRE_LEN)
			return memmem(f.data, (size_t)f.val, perf_source,
				      sizeof(perf_source) - 1) != NULL;
	return false;
}

static int on_packet(void *ctx, const struct input_packet *ip,
		     const struct rewritten *res)
{
	struct walk *w = ctx;
	struct decoded d;
	const char *why = "malformed";
	int rc;

	if (res->sync_info || res->dropped) {
		rc = stat_gather_packet(w->stats, ip->data, ip->len);
	} else {
		rc = decode_packet(&w->dec, res->data, res->len, &d, &why);
		if (!rc)
			rc = samples_packet(&w->samples, res->data, res->len,
					    &why);
		/* the sleeps are noted once the trace shows it has stacks
		 * (its config, or else its first sample): a trace without
		 * keeps no memory of them */
		if (!rc && !w->model.sleep_hook &&
		    (w->samples.n || asks_for_stacks(res->data, res->len)))
			offcpu_listen(&w->offcpu, &w->model);
		if (rc == -1)
			return input_fail_at(w->in, ip->offset,
					     "malformed TracePacket: %s", why);
		if (!rc && d.bundle && !d.full_switch)
			rc = stat_gather_compact_bundle(w->stats, &d.sb);
		else if (!rc)
			rc = stat_gather_packet(w->stats, ip->data, ip->len);
		if (!rc && d.bundle)
			model_take(&w->model, &w->merge, false);
	}
	if (rc == -1)
		return input_fail_at(w->in, ip->offset,
				     "cannot decode the TracePacket");
	if (rc || w->model.oom)
		return CONVERT_NO_MEMORY;
	return 0;
}

/* Losses the report itself saw, added after the trace's own. */
static void own_losses(struct report *r, const struct walk *w,
		       const struct sync_stats *st)
{
	const struct { const char *name; uint64_t v; } own[] = {
		{ "report_events_not_converted",
		  st->events_dropped + w->dec.times_dropped },
		{ "report_packets_not_converted",
		  st->packets_in - st->packets_out },
		{ "compact_sched_has_parse_errors", w->dec.parse_errors },
		{ "report_events_out_of_order", w->merge.reordered },
		{ "report_last_packet_truncated", w->in->rd.warning[0] != 0 },
		{ "report_states_cut_by_mismatched_switch", w->model.cut },
	};
	size_t i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].v)
			r->losses[r->nlosses++] = (struct loss_row){
				own[i].name, -1, -1, (int64_t)own[i].v };
	r->lower_bounds = r->nlosses > 0;
}

static const char *sort_names[] = { "cpu", "wait", "latency", "offcpu" };

/* The name of machine id, "" when it has none. */
static const char *machine_name(const struct walk *w, int64_t id)
{
	return id >= 0 && id < DECODE_NAMED_MACHINES ?
		       w->dec.machine_name[id] : "";
}

/* A trace of several machines: one section a machine with events, in
 * the order of their ids, each built as if its machine were alone. */
static int sections(struct report *r, const struct report_args *a,
		    const struct walk *w, const struct stat_table *t)
{
	const struct model *m = &w->model;
	uint32_t *ids = calloc(m->ncpu ? m->ncpu : 1, sizeof(*ids));
	size_t n = 0, i, k;
	int rc = 0;

	if (!ids)
		return -1;
	for (i = 0; i < m->ncpu; i++) { /* distinct ids, in order */
		uint32_t id = w->merge.q[i].machine;

		if (!m->cpu[i].events)
			continue;
		for (k = 0; k < n && ids[k] < id; k++)
			;
		if (k < n && ids[k] == id)
			continue;
		memmove(&ids[k + 1], &ids[k], (n - k) * sizeof(*ids));
		ids[k] = id;
		n++;
	}
	if (n > 1 && !(r->sections = calloc(n, sizeof(*r->sections))))
		rc = -1;
	for (k = 0; n > 1 && !rc && k < n; k++) {
		struct report *s = &r->sections[r->nsections++];

		rc = report_build(s, &a->o, m, &w->names, &w->merge, t, ids[k]);
		s->machine_name = machine_name(w, ids[k]);
		s->sort_name = r->sort_name;
		s->lower_bounds = r->lower_bounds;
	}
	free(ids);
	return rc;
}

static int print(struct walk *w, const struct report_args *a,
		 const struct sync_stats *st)
{
	struct stat_table t;
	struct report r = { 0 };
	struct offcpu_thread top[OFFCPU_THREADS];
	int rc;

	if (stat_gather_rows(w->stats, &t))
		return log_error("%s: out of memory", w->in->file.name), EXIT_FAIL;
	rc = report_build(&r, &a->o, &w->model, &w->names, &w->merge, &t, -1);
	if (!rc) {
		r.file = w->in->file.name;
		r.machine_name = machine_name(w, 0);
		r.sort_name = sort_names[a->o.sort];
		own_losses(&r, w, st);
		r.has_stacks = w->samples.n > 0;
		r.offcpu = top;
		r.noffcpu = offcpu_top(&w->offcpu, &w->model, &w->names, top);
		r.triggers = &w->dec.triggers;
		rc = sections(&r, a, w, &t);
	}
	if (!rc)
		rc = a->json ? report_print_json(&r) : report_print_text(&r);
	if (rc)
		log_error("%s: out of memory", w->in->file.name);
	report_free(&r);
	stat_table_free(&t);
	return rc ? EXIT_FAIL : EXIT_OK;
}

static int folded(const struct walk *w)
{
	if (!folded_print(&w->offcpu, &w->model, &w->names))
		return EXIT_OK;
	log_error("%s: out of memory", w->in->file.name);
	return EXIT_FAIL;
}

static int run(struct report_args *a)
{
	struct input in, *inputs[1] = { &in }, *failed = NULL;
	struct sync_stats st = { 0 };
	struct timeline tl = { 0 };
	struct walk w = { .in = &in };
	int status = EXIT_FAIL, err;

	if (input_open(&in, a->path, 0)) {
		log_error("%s", in.err);
		input_close(&in);
		return EXIT_FAIL;
	}
	merge_init(&w.merge);
	model_init(&w.model, &a->mo);
	offcpu_init(&w.offcpu);
	if (a->folded)
		offcpu_listen(&w.offcpu, &w.model);
	w.stats = stat_gather_new();
	if (timeline_init(&tl) || names_init(&w.names) || !w.stats ||
	    samples_init(&w.samples)) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	decoder_init(&w.dec, &w.names, &w.merge, &w.model);
	err = convert_prepare(inputs, 1, 0, &tl, &st, &failed);
	if (err == CONVERT_NO_MEMORY) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	err = convert_input(&in, &tl, &st, CONVERT_COMPACT_AS_IS, on_packet,
			    &w);
	if (err == CONVERT_INPUT_ERROR || err == -1) {
		log_error("%s", in.err);
		goto out;
	}
	if (err) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	model_take(&w.model, &w.merge, true);
	model_finish(&w.model);
	if (w.model.oom || offcpu_join(&w.offcpu, &w.samples, &w.model,
				       &w.names, &a->o, &a->mo)) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	if (!w.model.events) {
		log_error("%s: no scheduler events in the trace%s%s",
			  in.file.name, in.rd.warning[0] ? ": " : "",
			  in.rd.warning);
		goto out;
	}
	if (a->folded && !w.samples.n) {
		log_error("%s: no call stacks in the trace (record it with "
			  "--callstacks)", in.file.name);
		goto out;
	}
	status = a->folded ? folded(&w) : print(&w, a, &st);
	if (in.rd.warning[0]) {
		log_error("%s (the report covers the trace before it)",
			  in.rd.warning);
		status = EXIT_FAIL;
	}
	if (log_verbosity > 0)
		log_info("%s: %" PRIu64 " events", in.file.name,
			 w.model.events);
out:
	decoder_free(&w.dec);
	offcpu_free(&w.offcpu);
	samples_free(&w.samples);
	stat_gather_free(w.stats);
	model_free(&w.model);
	merge_free(&w.merge);
	names_free(&w.names);
	timeline_free(&tl);
	input_close(&in);
	return status;
}

int cmd_report(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "FILE", doc,
					  NULL, NULL, NULL };
	struct report_args *a;
	int status;

	a = calloc(1, sizeof(*a));
	if (!a) {
		log_error("out of memory");
		return EXIT_FAIL;
	}
	a->o.top = 20;
	a->o.wakers_of = 5;
	status = cmd_parse_args(&argp, argc, argv, "bpftrace-rec report", a);
	if (status) {
		free(a);
		return status;
	}
	status = run(a);
	if (!log_stdout_ok())
		status = EXIT_FAIL;
	free(a);
	return status;
}
