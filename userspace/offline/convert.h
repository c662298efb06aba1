/* The two passes the offline commands make over their inputs. The first
 * reads every input's clock snapshots, chooses the trace clock (the one
 * asked for, else what the first input's snapshots declare, else BOOTTIME)
 * and builds the clock graph; the second rewrites each packet onto the
 * trace clock (rewrite.h) and hands it to the caller in file order: `sync`
 * sorts them, `dump` prints them. An offline pass sees the whole file, so a
 * packet converts with snapshots that come after it too. */
#ifndef BTR_CONVERT_H
#define BTR_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offline/input.h"
#include "offline/rewrite.h"
#include "offline/timeline.h"

/* Results of the passes besides 0. */
enum {
	CONVERT_INPUT_ERROR = -1, /* corrupt or unreadable: the input's err */
	CONVERT_NO_MEMORY = -2,
};

/* First pass over inputs[0..n). trace_clock: the clock asked for, or 0.
 * Rejected snapshots are counted in stats. Returns 0 or a CONVERT_ error
 * (*failed: the input it came from). After CONVERT_INPUT_ERROR the graph
 * is still built from what was read before the error, so a caller may go
 * on with the second pass up to that point (dump does). */
int convert_prepare(struct input **inputs, size_t n, uint32_t trace_clock,
		    struct timeline *tl, struct sync_stats *stats,
		    struct input **failed);

/* Called for every packet of the second pass, dropped ones included
 * (res->dropped) and an earlier sync's trailer (res->sync_info, not
 * counted in stats); a non-zero return stops the pass and is returned. */
typedef int (*convert_fn)(void *ctx, const struct input_packet *p,
			  const struct rewritten *res);

/* Second pass over one input, counting in stats. Returns 0, a CONVERT_
 * error, or what fn returned to stop. */
int convert_input(struct input *in, struct timeline *tl,
		  struct sync_stats *stats, convert_fn fn, void *ctx);

#endif
