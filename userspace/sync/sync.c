/* `bpftrace-rec sync -o OUT IN...`: puts every input (Perfetto traces,
 * archives with a perfetto_manifest, perf script text) on one timeline:
 * every timestamp on one trace clock, every packet on its machine, the
 * packets sorted by time. sources.h opens the inputs, convert.h places
 * them (machines, trace time, bridges) and rewrites their packets,
 * relabel.h and perf_input.h make them one trace, sorter.h sorts in
 * bounded memory. A summary and the drop statistics go to stderr. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "sync/attributes.h"
#include "trace/clock_names.h"
#include "convert/convert.h"
#include "sync/perf/perf_input.h"
#include "sync/relabel.h"
#include "sync/sort/sorter.h"
#include "sync/sources.h"
#include "trace/sync_info.h"
#include "sync/sync_report.h"
#include "output/file_writer.h"
#include "util/log.h"
#include "util/parse.h"

#define DEFAULT_MEMORY_LIMIT (256ull << 20)
#define DEFAULT_MAX_EXTRACT (16ull << 30)

enum {
	OPT_TRACE_CLOCK = 1001,
	OPT_MEMORY_LIMIT,
	OPT_MANIFEST,
	OPT_STRICT,
	OPT_PERF_CLOCK,
	OPT_MAX_EXTRACT,
};

struct sync_args {
	char **in;
	size_t n;
	const char *out, *manifest;
	uint32_t trace_clock; /* 0: from the inputs */
	uint32_t perf_clock;
	uint64_t memory_limit;
	uint64_t max_extract;
	bool quiet, strict, stdin_used;
};

static const char doc[] =
	"Put Perfetto traces, perf script text and the traces of an archive "
	"on one timeline: every timestamp on one clock, every event on the "
	"machine it came from, the packets sorted by time.\n"
	"\n"
	"Examples:\n"
	"  bpftrace-rec sync -o synced.pb trace.pb\n"
	"  bpftrace-rec sync -o merged.pb phone.pb watch.pb\n"
	"  bpftrace-rec sync -o merged.pb traces.tar    (with a "
	"perfetto_manifest.json)\n"
	"  bpftrace-rec sync --manifest m.json -o merged.pb a.pb b.pb\n"
	"  bpftrace-rec sync -o out.pb trace.pb perf.txt    (perf script "
	"output)\n"
	"  bpftrace-rec sync --trace-clock MONOTONIC -o mono.pb trace.pb.gz\n"
	"  bpftrace-rec sync --max-extract 64G -o merged.pb traces.tgz\n"
	"  other-tool | bpftrace-rec sync -o out.pb -"
	"\vEach IN is recognised by its content: a Perfetto trace (plain or "
	"gzip), a tar or zip archive (its members are the inputs; one may be "
	"a perfetto_manifest), a perfetto_manifest, or the text `perf script` "
	"prints. - reads standard input (once). Archive members are extracted "
	"into temporary files in $TMPDIR (or /tmp), at most --max-extract "
	"bytes for all archives together: beyond it sync stops and fails, "
	"naming the archive and the member.\n\n"
	"Machines: every clock belongs to a machine. An input's machine is "
	"the manifest's name for it, else its SystemInfo machine_name "
	"(`record --machine-name`), else the first input's machine; the same "
	"name is the same machine. The output marks every packet of a machine "
	"other than the trace clock's with its machine_id and names each "
	"machine in a SystemInfo.\n\n"
	"Placement: the trace clock is the manifest's trace_time, else the "
	"clock the first input claims (a trace: its snapshots' primary clock "
	"or BOOTTIME; perf text: its clock), else BOOTTIME. An input reaches "
	"it through its ClockSnapshots, remote_clock_sync and the manifest's "
	"clocks entries; "
	"else through REALTIME, taken to read the same on every machine; else "
	"the same clock on another machine is taken as equal; else its events "
	"are dropped (clock_sync_unrelatable_clock_domains) with a warning. "
	"Events before the start of the trace clock are dropped as well.\n\n"
	"CLOCK is a builtin name (BOOTTIME, MONOTONIC, REALTIME, "
	"MONOTONIC_RAW, ...) or an id (1-63, or 128 and up). perf script "
	"timestamps are MONOTONIC unless --perf-clock says otherwise (perf "
	"record -k). A perf sample without a pid (perf script -F comm,tid,...) "
	"takes the process of its thread from the traces of its machine; "
	"else pid = tid, counted. "
	"A timestamp that cannot be converted is dropped (its "
	"packet, its event inside an ftrace bundle, its perf sample) and "
	"counted under Perfetto's stat name on stderr. SIZE takes K, M or G; "
	"sorting beyond --memory-limit uses temporary files in $TMPDIR (or /tmp).\n\n"
	"The output ends with a trailer packet (TracePacket field 536870000, "
	"which Perfetto skips) holding the trace clock and the drop counts; "
	"`bpftrace-rec dump` and `stats` show it. trace_processor and the "
	"Perfetto UI read ftrace bundle times as BOOTTIME whatever the trace "
	"clock: use BOOTTIME (the usual default) for files meant for them.\n\n"
	"Exit status: 0 (also when timestamps were dropped), 1 for an "
	"unreadable or corrupt input or a write error, 3 with --strict when "
	"an input could not be placed, 64 for a usage error or a wrong "
	"manifest.";

static const struct argp_option options[] = {
	{ "output", 'o', "OUT", 0, "Write the synced trace to OUT (- for stdout)", 0 },
	{ "trace-clock", OPT_TRACE_CLOCK, "CLOCK", 0, "Clock of the output timeline (default: the first input's)", 0 },
	{ "manifest", OPT_MANIFEST, "FILE", 0, "A perfetto_manifest JSON relating the inputs", 0 },
	{ "perf-clock", OPT_PERF_CLOCK, "CLOCK", 0, "Clock of perf script timestamps (default MONOTONIC)", 0 },
	{ "strict", OPT_STRICT, NULL, 0, "Exit 3 when an input could not be placed on the timeline", 0 },
	{ "memory-limit", OPT_MEMORY_LIMIT, "SIZE", 0, "Memory for sorting packets (default 256M, at least 16K)", 0 },
	{ "max-extract", OPT_MAX_EXTRACT, "SIZE", 0, "Bytes all archive members may take in $TMPDIR together (default 16G)", 0 },
	{ "quiet", 'q', NULL, 0, "No summary (drops are still reported)", 0 },
	{ 0 },
};

/* A builtin or global clock for an option. */
static uint32_t clock_arg(struct argp_state *st, const char *arg,
			  const char *what)
{
	uint32_t id = 0;

	if (clock_parse(arg, &id))
		argp_error(st, "invalid clock '%s'", arg);
	else if (id >= BTR_CLOCK_SEQ_FIRST && id <= BTR_CLOCK_SEQ_LAST)
		argp_error(st, "clock %u is sequence-scoped: it cannot be %s",
			   id, what);
	return id;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct sync_args *a = st->input;

	switch (key) {
	case 'o':
		a->out = arg;
		break;
	case OPT_TRACE_CLOCK:
		a->trace_clock = clock_arg(st, arg, "the trace clock");
		break;
	case OPT_PERF_CLOCK:
		a->perf_clock = clock_arg(st, arg, "perf's clock");
		break;
	case OPT_MANIFEST:
		if (a->manifest)
			argp_error(st, "one --manifest only");
		a->manifest = arg;
		break;
	case OPT_STRICT:
		a->strict = true;
		break;
	case OPT_MEMORY_LIMIT:
		if (parse_size(arg, &a->memory_limit) ||
		    a->memory_limit < SORTER_MIN_LIMIT)
			argp_error(st, "invalid memory limit '%s' (at least "
				   "16K)", arg);
		break;
	case OPT_MAX_EXTRACT:
		if (parse_size(arg, &a->max_extract))
			argp_error(st, "invalid extraction limit '%s'", arg);
		break;
	case 'q':
		a->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (!strcmp(arg, "-") && a->stdin_used)
			argp_error(st, "standard input (-) given twice");
		a->stdin_used |= !strcmp(arg, "-");
		a->in[a->n++] = arg;
		break;
	case ARGP_KEY_END:
		if (!a->n)
			argp_error(st, "missing input file");
		if (!a->out)
			argp_error(st, "missing -o OUT");
		if (a->manifest && !strcmp(a->manifest, "-") && a->stdin_used)
			argp_error(st, "standard input (-) given twice");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* True when out already exists and is the same file as in. */
static bool same_file(const char *in, const char *out)
{
	struct stat a, b;

	if (!strcmp(in, "-") || !strcmp(out, "-"))
		return false;
	return stat(in, &a) == 0 && stat(out, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* An input that is the output, or given twice: usage errors. */
static int check_input(const struct sync_args *a, size_t i)
{
	size_t k;

	if (same_file(a->in[i], a->out)) {
		log_error("sync: -o %s is the input file; write elsewhere",
			  a->out);
		return EXIT_USAGE;
	}
	for (k = 0; k < i; k++) {
		if (!strcmp(a->in[k], a->in[i]) ||
		    same_file(a->in[k], a->in[i])) {
			log_error("sync: %s given twice: name one input file "
				  "only once", a->in[i]);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* Where the second pass puts a packet. */
struct pass {
	struct sorter *s;
	struct relabel rl;
	const struct input *in;
	struct sync_stats *st;
};

static int to_sorter(void *ctx, const struct input_packet *p,
		     const struct rewritten *res)
{
	struct pass *x = ctx;
	const uint8_t *data = res->data;
	size_t len = res->len;
	int rc;

	/* An earlier sync's trailer: replaced by the new one, which counts
	 * its drops too (by machine from here, their totals from
	 * x->in->scan.prior). */
	if (res->sync_info)
		sync_info_read_machines(p->info.sync_info,
					p->info.sync_info_len, &x->in->scan.fm,
					x->rl.tl);
	if (res->dropped || res->sync_info)
		return 0;
	rc = relabel_packet(&x->rl, x->in, &p->info, &data, &len);
	if (rc < 0)
		return CONVERT_NO_MEMORY;
	if (!rc) {
		x->st->packets_out--;
		x->st->packets_omitted++;
		return 0;
	}
	return sorter_add(x->s, res->key, data, len) ? 1 : 0;
}

static int keyed_to_sorter(void *ctx, int64_t key, const uint8_t *p,
			   size_t n)
{
	struct pass *x = ctx;

	return sorter_add(x->s, key, p, n) ? 1 : 0;
}

static int sysinfo_to_sorter(void *ctx, const uint8_t *p, size_t n)
{
	return keyed_to_sorter(ctx, INT64_MIN, p, n);
}

/* The manifest's attributes, ahead of every timed packet. */
static int attributes_to_sorter(const struct manifest *m, struct sorter *s)
{
	struct wbuf b = { 0 };
	int err;

	attributes_build(&b, m->attrs, m->n_attrs);
	err = b.oom || sorter_add(s, INT64_MIN, b.p, b.len) ? 1 : 0;
	wbuf_free(&b);
	return err;
}

static int to_writer(void *ctx, int64_t key, const uint8_t *data, size_t len)
{
	struct file_writer *w = ctx;

	(void)key;
	return sink_write(&w->sink, 0, data, len);
}

/* What the output records: the drops of this sync and of earlier ones
 * (rejected snapshots are still in the file: counted again, not added
 * up). tl counts both by machine (to_sorter adds the earlier ones'). */
static struct sync_stats output_stats(const struct sync_stats *st,
				      struct input **in, size_t n)
{
	struct sync_stats all = *st;
	size_t i;

	for (i = 0; i < n; i++)
		sync_stats_add(&all, &in[i]->scan.prior);
	all.stat[SYNC_STAT_INVALID_SNAPSHOTS] =
		st->stat[SYNC_STAT_INVALID_SNAPSHOTS];
	return all;
}

/* The trailer: the trace clock and the drops by machine. */
static int write_trailer(struct file_writer *w, const struct timeline *tl,
			 const struct sync_stats *all)
{
	struct wbuf b = { 0 };
	int err;

	sync_info_build(&b, tl, all);
	err = b.oom ? -ENOMEM : sink_write(&w->sink, 0, b.p, b.len);
	wbuf_free(&b);
	return err;
}

/* Output sequence ids: each trace keeps its ids where free; each perf
 * input gets a fresh one (in seqs[i]). Returns 0 or -ENOMEM. */
static int number_sequences(struct input **in, size_t n, uint32_t *seqs)
{
	struct seq_map used = { 0 };
	uint32_t max = 0;
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		if (in[i]->file.kind == INPUT_PROTO)
			err = seq_map_assign(&in[i]->scan.seqs, &used, &max);
	for (i = 0; i < n && !err; i++)
		if (in[i]->file.kind == INPUT_PERF_TEXT)
			err = seq_map_fresh(&used, &max, &seqs[i]);
	seq_map_free(&used);
	return err;
}

/* True when a trace input has data on machine idx: perf samples there
 * get their thread names from it, not from perf. */
static bool traced_machine(struct input **in, size_t n, uint32_t idx)
{
	size_t i, s;

	for (i = 0; i < n; i++)
		for (s = 0; in[i]->file.kind == INPUT_PROTO && s < in[i]->scan.fm.n; s++)
			if (in[i]->scan.fm.v[s].machine == idx)
				return true;
	return false;
}

/* The second pass of input i. */
static int convert_one(struct pass *x, struct input **in, size_t n, size_t i,
		       struct timeline *tl, uint32_t perf_seq)
{
	struct perf_input_opts po;
	uint32_t m;

	x->in = in[i];
	if (in[i]->file.kind == INPUT_PROTO)
		return convert_input(in[i], tl, x->st, CONVERT_RELABEL, to_sorter,
				     x);
	m = in[i]->scan.fm.v[0].machine;
	po = (struct perf_input_opts){
		.seq_id = perf_seq,
		.machine_id = tl->machines.v[m].out_id,
		.names = !traced_machine(in, n, m),
		.inputs = in,
		.ninputs = n,
	};
	return perf_input_convert(in[i], tl, x->st, &po, keyed_to_sorter, x);
}

/* Reports a CONVERT_ error of input in. */
static void convert_error(int err, const struct input *in, struct sorter *s)
{
	if (err == CONVERT_INPUT_ERROR)
		log_error("%s", in->err);
	else if (err == CONVERT_NO_MEMORY)
		log_error("%s: out of memory", in->file.name);
	else
		log_error("sorting: %s", sorter_error(s));
}

/* Both passes of every input into the sorter. Returns the exit status. */
static int passes(struct sources *src, struct timeline *tl,
		  struct convert_opts *co, struct sync_stats *per,
		  struct sorter *s)
{
	uint32_t *seqs = calloc(src->n, sizeof(*seqs));
	struct sync_stats st = { 0 };
	struct pass x = { .s = s, .rl = { .tl = tl } };
	struct input *failed = src->in[0];
	int err = seqs ? 0 : CONVERT_NO_MEMORY;
	size_t i;

	if (!err)
		err = convert_prepare_opts(src->in, src->n, co, tl, &st,
					   &failed);
	if (err == CONVERT_MANIFEST_ERROR) {
		log_error("%s", co->err);
		free(seqs);
		return EXIT_USAGE;
	}
	if (!err && number_sequences(src->in, src->n, seqs))
		err = CONVERT_NO_MEMORY;
	/* snapshots and bridges are counted once, in the first input */
	per[0] = st;
	for (i = 0; i < src->n && !err; i++) {
		x.st = &per[i];
		failed = src->in[i];
		err = convert_one(&x, src->in, src->n, i, tl, seqs[i]);
		if (!err && src->in[i]->rd.warning[0])
			log_warn("%s", src->in[i]->rd.warning);
	}
	if (!err)
		err = relabel_sysinfo_missing(&x.rl, sysinfo_to_sorter, &x);
	if (!err && co->manifest && co->manifest->n_attrs)
		err = attributes_to_sorter(co->manifest, s);
	relabel_free(&x.rl);
	free(seqs);
	if (err) {
		convert_error(err, failed, s);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* The sorted packets and the trailer into a.out. */
static int write_out(const struct sync_args *a, struct sorter *s,
		     const struct timeline *tl, const struct sync_stats *all)
{
	struct file_writer w;
	int err = file_writer_open(&w, a->out);
	bool created;

	if (err) {
		file_writer_discard(&w);
		log_error("%s: %s", a->out, strerror(-err));
		return EXIT_FAIL;
	}
	err = sorter_finish(s, to_writer, &w);
	if (!err)
		err = write_trailer(&w, tl, all);
	if (err) {
		if (w.err)
			log_error("%s: write error: %s", a->out,
				  strerror(-w.err));
		else
			log_error("sorting: %s", sorter_error(s));
		file_writer_discard(&w);
		return EXIT_FAIL;
	}
	created = w.created;
	err = file_writer_close(&w);
	if (err) {
		log_error("%s: write error: %s", a->out, strerror(-err));
		if (created)
			unlink(a->out); /* a cut merge would pass for a whole one */
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int sources_status(int rc)
{
	return rc == SOURCES_MANIFEST_ERROR ? EXIT_USAGE : EXIT_FAIL;
}

/* Everything after the command line. Returns the exit status. */
static int run(const struct sync_args *a)
{
	struct convert_opts co = { .trace_clock = a->trace_clock };
	struct sync_stats *per = NULL, total = { 0 };
	struct timeline tl = { 0 };
	struct sorter *s = NULL;
	struct sources src;
	struct sync_report r;
	int status, rc;
	size_t i;

	rc = sources_open(&src, a->in, a->n, a->manifest, a->perf_clock,
			  a->max_extract);
	if (rc) {
		log_error("%s", src.err);
		return sources_status(rc);
	}
	status = EXIT_FAIL;
	if (!src.n) {
		log_error("sync: no trace or perf input, only a manifest");
		status = EXIT_USAGE;
		goto out;
	}
	co.manifest = src.has_manifest ? &src.manifest : NULL;
	per = calloc(src.n, sizeof(*per));
	if (!per || timeline_init(&tl) ||
	    !(s = sorter_new(a->memory_limit, NULL))) {
		log_error("sync: out of memory");
		goto out;
	}
	status = passes(&src, &tl, &co, per, s);
	if (status)
		goto out;
	for (i = 0; i < src.n; i++)
		sync_stats_add(&total, &per[i]);
	total = output_stats(&total, src.in, src.n);
	status = write_out(a, s, &tl, &total);
	if (status)
		goto out;
	r = (struct sync_report){ a->out, a->quiet, src.in, per, src.n, &tl,
				  &co.placement, &total, sorter_stats(s) };
	sync_report(&r);
	sync_report_unplaced(&r, a->strict);
	if (a->strict && co.placement.n)
		status = EXIT_LOSS;
out:
	placement_free(&co.placement);
	sorter_free(s);
	timeline_free(&tl);
	free(per);
	sources_close(&src);
	return status;
}

int cmd_sync(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "IN...", doc,
					  NULL, NULL, NULL };
	struct sync_args a = { .memory_limit = DEFAULT_MEMORY_LIMIT,
			       .max_extract = DEFAULT_MAX_EXTRACT,
			       .perf_clock = BTR_CLOCK_MONOTONIC };
	int status;
	size_t i;

	a.in = calloc((size_t)argc + 1, sizeof(*a.in));
	if (!a.in) {
		log_error("out of memory");
		return EXIT_FAIL;
	}
	status = cmd_parse_args(&argp, argc, argv, "bpftrace-rec sync", &a);
	for (i = 0; !status && i < a.n; i++)
		status = check_input(&a, i);
	if (!status)
		status = run(&a);
	free(a.in);
	return status;
}
