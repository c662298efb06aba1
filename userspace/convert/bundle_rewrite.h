/* FtraceEventBundle rewriting onto the trace clock, the part of a packet's
 * rewrite (rewrite.h) that needs to walk every event, and the
 * (ftrace_timestamp, boot_timestamp) pair of a bundle that the first pass
 * takes as a clock snapshot. */
#ifndef BTR_BUNDLE_REWRITE_H
#define BTR_BUNDLE_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/rewrite.h"

/* The FtraceEventBundle payload p[0..n) of a packet on
 * sequence seq whose clocks live in *scope with file tag `tag`, rewritten
 * and appended to rw->out
 * (the caller writes the field's tag and length). *first and
 * *last get the earliest and latest converted event times (*any false if
 * no event has one). Same returns as rewrite_packet(). */
int bundle_rewrite(struct rewrite *rw, const uint8_t *p, size_t n,
		   uint32_t seq, const struct clock_scope *scope, uint32_t tag,
		   bool *any, int64_t *first, int64_t *last, const char **why);

/* True when a bundle payload's events use the GLOBAL or LOCAL ftrace clock
 * and it carries the (ftrace_timestamp, boot_timestamp) pair that relates
 * that clock to BOOTTIME (the first pass adds it as a snapshot). */
bool bundle_ftrace_pair(const uint8_t *p, size_t n, int64_t *ftrace_ts,
			int64_t *boot_ts);

#endif
