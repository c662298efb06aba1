/* `bpftrace-rec dump FILE [--json]`: prints every event of a Perfetto
 * trace, one line each, as text or JSON Lines, with timestamps in the trace
 * clock (the conversion `sync` does, convert/convert.h, in file order and
 * without sorting); --raw-timestamps prints them as stored, in one pass.
 * Diagnostics go to stderr; stdout carries only the event lines. */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dump/dump.h"
#include "convert/convert.h"
#include "trace/reader.h"
#include "util/log.h"

enum { OPT_JSON = 1001, OPT_RAW_TIMESTAMPS };

struct dump_args {
	const char *path;
	bool json;
	bool raw;
	bool verbose;
};

static const struct argp_option options[] = {
	{ "json", OPT_JSON, NULL, 0,
	  "Print JSON Lines: one object per event", 0 },
	{ "raw-timestamps", OPT_RAW_TIMESTAMPS, NULL, 0,
	  "Print timestamps as stored, each in its own clock", 0 },
	{ "verbose", 'v', NULL, 0, "Print a summary on stderr", 0 },
	{ 0 },
};

static const char doc[] =
	"Print the events of a Perfetto trace, one line each.\v"
	"FILE may be gzip-compressed; - reads standard input (kept in a "
	"temporary file, as the conversion reads the trace twice).\n\n"
	"Timestamps are in the trace clock: the clock the trace's "
	"ClockSnapshots declare (BOOTTIME if none), every packet and event "
	"converted as `bpftrace-rec sync` does, in file order. An event whose "
	"time cannot be converted is not printed; stderr counts them under "
	"Perfetto's stat names.\n\n"
	"Text lines are \"TS CPU KIND key=value ...\": TS in ns or -, CPU "
	"or - for packets that are not ftrace bundles or perf samples; the "
	"lines of a packet of another machine than the trace's own (a merged "
	"trace) start with machine_id=N, its TracePacket.machine_id. Values "
	"escape "
	"spaces, '=', '\\', control and non-ASCII bytes as \\xNN. --json "
	"prints the same as {\"ts\":...,\"cpu\":...,\"kind\":...,...}.\n\n"
	"Examples:\n"
	"  bpftrace-rec dump trace.pb | awk '$3 == \"sched_switch\"'\n"
	"  bpftrace-rec dump --json trace.pb.gz | "
	"jq 'select(.kind == \"sched_waking\")'\n\n"
	"Exit status: 0 (also when the last record is torn, with a "
	"warning), 1 for an unreadable or corrupt trace, 64 for a usage "
	"error.";

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct dump_args *a = state->input;

	switch (key) {
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_RAW_TIMESTAMPS:
		a->raw = true;
		return 0;
	case 'v':
		a->verbose = true;
		return 0;
	case ARGP_KEY_ARG:
		if (a->path)
			argp_error(state, "too many arguments");
		a->path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!a->path)
			argp_error(state, "missing FILE");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* A packet the schema cannot decode ends the dump. */
static int undecodable(const struct dump_ctx *c, uint64_t offset, size_t len)
{
	char msg[512];

	fflush(stdout);
	log_error("%s", msg_at(msg, sizeof(msg), c->name, offset,
			       "cannot decode the TracePacket (%zu bytes)", len));
	return EXIT_FAIL;
}

/* Prints every packet; returns the exit status. */
static int dump_trace(struct dump_ctx *c, struct trace_reader *r)
{
	uint64_t packets = 0, offset;
	const uint8_t *pkt;
	size_t len;
	int rc;

	while ((rc = trace_reader_next(r, &pkt, &len, &offset)) ==
	       TRACE_READ_PACKET) {
		Perfetto__Protos__TracePacket *p =
			perfetto__protos__trace_packet__unpack(NULL, len, pkt);

		if (!p)
			return undecodable(c, offset, len);
		c->offset = offset;
		dump_packet(c, p);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
		packets++;
	}
	fflush(stdout);
	if (rc == TRACE_READ_ERROR) {
		log_error("%s", trace_reader_error(r));
		return EXIT_FAIL;
	}
	if (rc == TRACE_READ_TRUNCATED)
		log_warn("%s", trace_reader_error(r));
	if (log_verbosity > 0)
		log_info("%s: %" PRIu64 " packets, %" PRIu64 " lines",
			 c->name, packets, c->lines);
	return EXIT_OK;
}

/* Prints one converted packet. */
static int dump_converted(void *ctx, const struct input_packet *ip,
			  const struct rewritten *res)
{
	struct dump_ctx *c = ctx;
	Perfetto__Protos__TracePacket *p;

	if (res->dropped)
		return 0;
	p = perfetto__protos__trace_packet__unpack(NULL, res->len, res->data);
	if (!p)
		return undecodable(c, ip->offset, ip->len);
	c->offset = ip->offset;
	dump_packet(c, p);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	return 0;
}

/* What could not be shown: "FILE: N packets and M events not shown ...". */
static void report_drops(const struct dump_ctx *c, const struct sync_stats *st)
{
	int i;

	if (st->packets_in == st->packets_out && !st->events_dropped)
		return;
	log_warn("%s: %" PRIu64 " packets and %" PRIu64 " events not shown: "
		 "their time could not be converted to the trace clock",
		 c->name, st->packets_in - st->packets_out,
		 st->events_dropped);
	for (i = 0; i < SYNC_STAT_COUNT; i++)
		if (st->stat[i])
			log_warn("%s: %s: %" PRIu64, c->name,
				 sync_stat_name((enum sync_stat)i), st->stat[i]);
}

/* Both passes of the conversion; returns the exit status. */
static int dump_in_trace_clock(struct dump_ctx *c, const char *path)
{
	struct input in, *inputs[1] = { &in }, *failed = NULL;
	struct sync_stats st = { 0 };
	struct timeline tl = { 0 };
	int status = EXIT_FAIL, err;

	if (input_open(&in, path, 0)) {
		log_error("%s", in.err);
		input_close(&in);
		return EXIT_FAIL;
	}
	c->name = in.file.name;
	if (timeline_init(&tl)) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	/* An input error of the first pass shows again in the second, after
	 * the packets before it are printed. */
	err = convert_prepare(inputs, 1, 0, &tl, &st, &failed);
	if (err == CONVERT_NO_MEMORY) {
		log_error("%s: out of memory", in.file.name);
		goto out;
	}
	c->trace_clock = tl.trace_clock.clock_id;
	err = convert_input(&in, &tl, &st, 0, dump_converted, c);
	fflush(stdout);
	if (err == CONVERT_INPUT_ERROR) {
		log_error("%s", in.err);
		goto out;
	}
	if (err == CONVERT_NO_MEMORY)
		log_error("%s: out of memory", in.file.name);
	if (err)
		goto out;
	if (in.rd.warning[0])
		log_warn("%s", in.rd.warning);
	report_drops(c, &st);
	if (log_verbosity > 0)
		log_info("%s: %" PRIu64 " packets, %" PRIu64 " lines",
			 c->name, st.packets_in, c->lines);
	status = EXIT_OK;
out:
	timeline_free(&tl);
	input_close(&in);
	return status;
}

int cmd_dump(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "FILE", doc,
					  NULL, NULL, NULL };
	struct dump_args args = { 0 };
	struct dump_ctx c = { 0 };
	struct trace_reader *r;
	char err[512];
	int status;

	status = cmd_parse_args(&argp, argc, argv, "bpftrace-rec dump", &args);
	if (status)
		return status;
	if (args.verbose)
		log_verbosity = 1;

	c.print = args.json ? json_print : text_print;
	c.stacks = dump_stacks_new();
	if (!c.stacks) {
		log_error("out of memory");
		return EXIT_FAIL;
	}
	c.trace_clock = BTR_CLOCK_BOOTTIME;
	if (args.raw) {
		r = trace_reader_open(args.path, err, sizeof(err));
		if (!r) {
			log_error("%s", err);
			dump_stacks_free(c.stacks);
			return EXIT_FAIL;
		}
		c.name = trace_reader_name(r);
		status = dump_trace(&c, r);
		trace_reader_close(r);
	} else {
		status = dump_in_trace_clock(&c, args.path);
	}
	if (!log_stdout_ok())
		status = EXIT_FAIL;
	line_free(&c.line);
	sched_state_free(&c.sched);
	dump_stacks_free(c.stacks);
	return status;
}
