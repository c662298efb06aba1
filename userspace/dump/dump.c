/* `bpftrace-rec dump FILE [--json]`: prints every event of a Perfetto
 * trace, one line each, as text or JSON Lines. Diagnostics go to stderr;
 * stdout carries only the event lines. */
#include <argp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dump/dump.h"
#include "trace/reader.h"
#include "util/log.h"

enum { OPT_JSON = 1001 };

struct dump_args {
	const char *path;
	bool json;
	bool verbose;
};

static const struct argp_option options[] = {
	{ "json", OPT_JSON, NULL, 0,
	  "Print JSON Lines: one object per event", 0 },
	{ "verbose", 'v', NULL, 0, "Print a summary on stderr", 0 },
	{ 0 },
};

static const char doc[] =
	"Print the events of a Perfetto trace, one line each.\v"
	"FILE may be gzip-compressed; - reads standard input.\n\n"
	"Text lines are \"TS CPU KIND key=value ...\": TS in ns or -, CPU "
	"or - for packets that are not ftrace bundles. Values escape "
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

struct line *dump_begin(struct dump_ctx *c, const char *kind, bool has_ts,
			uint64_t ts, bool has_cpu, uint64_t cpu)
{
	line_begin(&c->line, kind, has_ts, ts, has_cpu, cpu);
	return &c->line;
}

void dump_end(struct dump_ctx *c)
{
	c->print(&c->line);
	c->lines++;
}

void dump_warn(struct dump_ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	log_warn("%s: offset %" PRIu64 ": %s", c->name, c->offset, msg);
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

		if (!p) {
			fflush(stdout);
			log_error("%s: offset %" PRIu64 ": cannot decode the "
				  "TracePacket (%zu bytes)", c->name, offset,
				  len);
			return EXIT_FAIL;
		}
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

int cmd_dump(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "FILE", doc,
					  NULL, NULL, NULL };
	char name[] = "bpftrace-rec dump";
	struct dump_args args = { 0 };
	struct dump_ctx c = { 0 };
	struct trace_reader *r;
	char err[512], **av;
	int status;

	/* argp names the program after argv[0] in its messages. */
	av = calloc((size_t)argc + 1, sizeof(*av));
	if (!av) {
		log_error("out of memory");
		return EXIT_FAIL;
	}
	memcpy(av, argv, sizeof(*av) * (size_t)argc);
	av[0] = name;
	argp_err_exit_status = EXIT_USAGE;
	status = argp_parse(&argp, argc, av, 0, NULL, &args);
	free(av);
	if (status)
		return EXIT_USAGE;
	if (args.verbose)
		log_verbosity = 1;

	r = trace_reader_open(args.path, err, sizeof(err));
	if (!r) {
		log_error("%s", err);
		return EXIT_FAIL;
	}
	c.name = trace_reader_name(r);
	c.print = args.json ? json_print : text_print;
	status = dump_trace(&c, r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error("standard output: write error");
		status = EXIT_FAIL;
	}
	line_free(&c.line);
	sched_state_free(&c.sched);
	trace_reader_close(r);
	return status;
}
