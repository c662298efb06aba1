/* `bpftrace-rec sync -o OUT IN`: rewrites every timestamp of a trace onto
 * one trace clock and writes the packets sorted by time (convert.h does
 * the passes, sorter.h the bounded-memory sort). A summary and the drop
 * statistics go to stderr. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "offline/clock_names.h"
#include "offline/convert.h"
#include "offline/sorter.h"
#include "offline/sync_info.h"
#include "output/file_writer.h"
#include "util/log.h"
#include "util/parse.h"

#define DEFAULT_MEMORY_LIMIT (256ull << 20)

enum { OPT_TRACE_CLOCK = 1001, OPT_MEMORY_LIMIT };

struct sync_args {
	const char *in, *out;
	uint32_t trace_clock; /* 0: from the input */
	uint64_t memory_limit;
	bool quiet;
};

static const char doc[] =
	"Put every timestamp of a Perfetto trace on one clock and sort the "
	"packets by time.\n"
	"\n"
	"Examples:\n"
	"  bpftrace-rec sync -o synced.pb trace.pb\n"
	"  bpftrace-rec sync --trace-clock MONOTONIC -o mono.pb trace.pb.gz\n"
	"  bpftrace-rec sync --memory-limit 64M -o out.pb big.pb\n"
	"  other-tool | bpftrace-rec sync -o out.pb -"
	"\vThe clock graph comes from the trace's ClockSnapshots; a packet's "
	"clock is its timestamp_clock_id, else its sequence's default, else "
	"the clock the snapshots declare (BOOTTIME if none). CLOCK is a "
	"builtin name (BOOTTIME, MONOTONIC, REALTIME, MONOTONIC_RAW, ...) or "
	"an id (1-63, or 128 and up); the default is the snapshots' "
	"primary_trace_clock, else BOOTTIME. A timestamp that cannot be "
	"converted is dropped (its packet, or its event inside an ftrace "
	"bundle) and counted under Perfetto's stat name on stderr. SIZE takes "
	"K, M or G; sorting beyond it uses temporary files in $TMPDIR (or "
	"/tmp). IN may be gzip-compressed; - reads standard input.\n\n"
	"The output ends with a trailer packet (TracePacket field 536870000, "
	"which Perfetto skips) holding the trace clock and the drop counts; "
	"`bpftrace-rec dump` shows it. trace_processor and the Perfetto UI "
	"read ftrace bundle times as BOOTTIME whatever the trace clock: use "
	"BOOTTIME (the usual default) for files meant for them.\n\n"
	"Exit status: 0 (also when timestamps were dropped), 1 for an "
	"unreadable or corrupt input or a write error, 64 for a usage error.";

static const struct argp_option options[] = {
	{ "output", 'o', "OUT", 0, "Write the synced trace to OUT (- for stdout)", 0 },
	{ "trace-clock", OPT_TRACE_CLOCK, "CLOCK", 0, "Clock of the output timeline (default: the trace's primary clock)", 0 },
	{ "memory-limit", OPT_MEMORY_LIMIT, "SIZE", 0, "Memory for sorting packets (default 256M, at least 16K)", 0 },
	{ "quiet", 'q', NULL, 0, "No summary (drops are still reported)", 0 },
	{ 0 },
};

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct sync_args *a = st->input;
	uint32_t id;

	switch (key) {
	case 'o':
		a->out = arg;
		break;
	case OPT_TRACE_CLOCK:
		if (clock_parse(arg, &id))
			argp_error(st, "invalid clock '%s'", arg);
		else if (id >= BTR_CLOCK_SEQ_FIRST && id <= BTR_CLOCK_SEQ_LAST)
			argp_error(st, "clock %u is sequence-scoped: it cannot "
				   "be the trace clock", id);
		a->trace_clock = id;
		break;
	case OPT_MEMORY_LIMIT:
		if (parse_size(arg, &a->memory_limit) ||
		    a->memory_limit < SORTER_MIN_LIMIT)
			argp_error(st, "invalid memory limit '%s' (at least "
				   "16K)", arg);
		break;
	case 'q':
		a->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (a->in)
			argp_error(st, "one input file only");
		a->in = arg;
		break;
	case ARGP_KEY_END:
		if (!a->in)
			argp_error(st, "missing input file");
		if (!a->out)
			argp_error(st, "missing -o OUT");
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

static int to_sorter(void *ctx, const struct input_packet *p,
		     const struct rewritten *res)
{
	struct sorter *s = ctx;

	(void)p;
	if (res->dropped || res->sync_info)
		return 0; /* a new trailer replaces an old one */
	return sorter_add(s, res->key, res->data, res->len) ? 1 : 0;
}

static int to_writer(void *ctx, int64_t key, const uint8_t *data, size_t len)
{
	struct file_writer *w = ctx;

	(void)key;
	return sink_write(&w->sink, 0, data, len);
}

static const char *trace_clock_name(uint32_t id, char *buf, size_t n)
{
	const char *name = clock_name(id);

	if (name)
		return name;
	snprintf(buf, n, "clock %u", id);
	return buf;
}

static void report(const struct sync_args *a, const struct input *in,
		   const struct timeline *tl, const struct sync_stats *st,
		   const struct sorter_stats *ss)
{
	char buf[32];
	int i;

	if (!a->quiet) {
		log_info("sync: %s: %" PRIu64 " packets read, %" PRIu64
			 " written to %s on %s (%" PRIu64 " timestamps "
			 "converted)", in->name, st->packets_in,
			 st->packets_out, a->out,
			 trace_clock_name(tl->trace_clock.clock_id, buf,
					  sizeof(buf)),
			 st->converted);
		if (ss->runs)
			log_info("sync: sorted in %" PRIu64 " runs on disk, %"
				 PRIu64 " merge passes, %" PRIu64 " MiB "
				 "written to temporary files", ss->runs,
				 ss->merge_passes, ss->spilled_bytes >> 20);
	}
	if (st->packets_in != st->packets_out)
		log_warn("sync: %" PRIu64 " packets dropped: their timestamp "
			 "could not be converted", st->packets_in -
			 st->packets_out);
	if (st->events_dropped)
		log_warn("sync: %" PRIu64 " events dropped from ftrace "
			 "bundles: their timestamp could not be converted",
			 st->events_dropped);
	if (st->fields_dropped)
		log_warn("sync: %" PRIu64 " previous_bundle_end_timestamp "
			 "fields dropped: they could not be converted",
			 st->fields_dropped);
	if (st->bundles && tl->trace_clock.clock_id != BTR_CLOCK_BOOTTIME)
		log_warn("sync: the ftrace bundles are on %s now, but "
			 "trace_processor and the Perfetto UI read bundle times "
			 "as BOOTTIME: use --trace-clock BOOTTIME for files "
			 "meant for them", trace_clock_name(tl->trace_clock.clock_id,
							    buf, sizeof(buf)));
	for (i = 0; i < SYNC_STAT_COUNT; i++)
		if (st->stat[i])
			log_warn("sync: %s: %" PRIu64,
				 sync_stat_name((enum sync_stat)i), st->stat[i]);
}

/* The trailer: the trace clock and the drops, this sync's and earlier
 * ones' (rejected snapshots are still in the file: counted again, not
 * added up). */
static int write_trailer(struct file_writer *w, const struct timeline *tl,
			 const struct sync_stats *st, const struct input *in)
{
	struct sync_stats all = *st;
	struct wbuf b = { 0 };
	int err;

	sync_stats_add(&all, &in->prior);
	all.stat[SYNC_STAT_INVALID_SNAPSHOTS] =
		st->stat[SYNC_STAT_INVALID_SNAPSHOTS];
	sync_info_build(&b, tl->trace_clock.clock_id, &all);
	err = b.oom ? -ENOMEM : sink_write(&w->sink, 0, b.p, b.len);
	wbuf_free(&b);
	return err;
}

/* Both passes, the sort and the output. Returns the exit status. */
static int run(const struct sync_args *a)
{
	struct input in, *inputs[1] = { &in }, *failed = NULL;
	struct sync_stats st = { 0 };
	struct timeline tl = { 0 };
	struct file_writer w;
	struct sorter *s = NULL;
	bool w_open = false;
	int status = EXIT_FAIL, err;

	if (input_open(&in, a->in, 0)) {
		log_error("%s", in.err);
		input_close(&in);
		return EXIT_FAIL;
	}
	if (timeline_init(&tl) || !(s = sorter_new(a->memory_limit, NULL))) {
		log_error("%s: out of memory", in.name);
		goto out;
	}
	err = convert_prepare(inputs, 1, a->trace_clock, &tl, &st, &failed);
	if (!err && in.warning[0])
		log_warn("%s", in.warning);
	if (!err)
		err = convert_input(&in, &tl, &st, to_sorter, s);
	if (err == CONVERT_INPUT_ERROR) {
		log_error("%s", in.err);
		goto out;
	}
	if (err == CONVERT_NO_MEMORY) {
		log_error("%s: out of memory", in.name);
		goto out;
	}
	if (err) {
		log_error("sorting: %s", sorter_error(s));
		goto out;
	}
	err = file_writer_open(&w, a->out);
	w_open = true;
	if (err) {
		log_error("%s: %s", a->out, strerror(-err));
		goto out;
	}
	err = sorter_finish(s, to_writer, &w);
	if (!err)
		err = write_trailer(&w, &tl, &st, &in);
	if (err) {
		if (w.err)
			log_error("%s: write error: %s", a->out,
				  strerror(-w.err));
		else
			log_error("sorting: %s", sorter_error(s));
		goto out;
	}
	w_open = false;
	err = file_writer_close(&w);
	if (err) {
		log_error("%s: write error: %s", a->out, strerror(-err));
		goto out;
	}
	report(a, &in, &tl, &st, sorter_stats(s));
	status = EXIT_OK;
out:
	if (w_open)
		file_writer_discard(&w);
	sorter_free(s);
	timeline_free(&tl);
	input_close(&in);
	return status;
}

int cmd_sync(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "IN", doc, NULL,
					  NULL, NULL };
	char name[] = "bpftrace-rec sync", *argv0 = argv[0];
	struct sync_args a = { .memory_limit = DEFAULT_MEMORY_LIMIT };
	int status;

	/* argp names the program after argv[0] in its messages. */
	argv[0] = name;
	argp_err_exit_status = EXIT_USAGE;
	status = argp_parse(&argp, argc, argv, 0, NULL, &a);
	argv[0] = argv0;
	if (status)
		return EXIT_USAGE;
	if (same_file(a.in, a.out)) {
		log_error("sync: -o %s is the input file; write elsewhere",
			  a.out);
		return EXIT_USAGE;
	}
	return run(&a);
}
