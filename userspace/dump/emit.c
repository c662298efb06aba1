/* The lines of `dump` as its decoders make them (dump.h): dump_begin() and
 * dump_end() around each line, dump_warn() for a problem in the packet at
 * hand. Apart from the command (dump.c), so that the decoders call only
 * down. */
#include <stdarg.h>
#include <stdio.h>

#include "dump/dump.h"
#include "util/log.h"

struct line *dump_begin(struct dump_ctx *c, const char *kind, bool has_ts,
			uint64_t ts, bool has_cpu, uint64_t cpu)
{
	line_begin(&c->line, kind, has_ts, ts, has_cpu, cpu);
	if (c->machine)
		line_uint(&c->line, "machine_id", c->machine);
	return &c->line;
}

void dump_end(struct dump_ctx *c)
{
	c->print(&c->line);
	c->lines++;
}

void dump_warn(struct dump_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	msg_vat(msg, sizeof(msg), c->name, c->offset, fmt, ap);
	va_end(ap);
	fflush(stdout);
	log_warn("%s", msg);
}
