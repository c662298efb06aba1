/* The two passes the offline commands make over their inputs. The first
 * reads every trace input's clock snapshots, machines and sequences,
 * assigns the machines (machine_assign.h), chooses the trace clock and
 * places every input on it (placement.h); the second rewrites each packet
 * of a trace input onto the trace clock (rewrite.h) and hands it to the
 * caller in file order: `sync` sorts them, `dump` prints them. An offline
 * pass sees the whole file, so a packet converts with snapshots that come
 * after it too. Perf text inputs have no first pass; perf_input.h does
 * their second. */
#ifndef BTR_CONVERT_H
#define BTR_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "convert/manifest.h"
#include "convert/placement.h"
#include "convert/rewrite.h"
#include "clock/timeline.h"

/* Results of the passes besides 0. */
enum {
	CONVERT_INPUT_ERROR = -1, /* corrupt or unreadable: the input's err */
	CONVERT_NO_MEMORY = -2,
	CONVERT_MANIFEST_ERROR = -3, /* the inputs break the manifest: opts' err */
};

struct convert_opts {
	uint32_t trace_clock;       /* the clock asked for, or 0 */
	struct manifest *manifest;  /* NULL: none */
	struct placement placement; /* out: the trace time's owner and the
				     * inputs left unplaced (placement_free) */
	char err[512];              /* why CONVERT_MANIFEST_ERROR */
};

/* First pass over inputs[0..n), in processing order (their file ids
 * distinct). Rejected snapshots are counted in stats. Returns 0 or a
 * CONVERT_ error (*failed: the input it came from). After
 * CONVERT_INPUT_ERROR the graph is still built from what was read before
 * the error, so a caller may go on with the second pass up to that point
 * (dump does). */
int convert_prepare_opts(struct input **inputs, size_t n,
			 struct convert_opts *opts, struct timeline *tl,
			 struct sync_stats *stats, struct input **failed);

/* The same without a manifest; trace_clock: the clock asked for, or 0. */
int convert_prepare(struct input **inputs, size_t n, uint32_t trace_clock,
		    struct timeline *tl, struct sync_stats *stats,
		    struct input **failed);

/* Called for every packet of the second pass, dropped ones included
 * (res->dropped) and an earlier sync's trailer (res->sync_info, not
 * counted in stats); a non-zero return stops the pass and is returned. */
typedef int (*convert_fn)(void *ctx, const struct input_packet *p,
			  const struct rewritten *res);

/* convert_input's flags: CONVERT_RELABEL, each packet also gets its
 * output sequence id (in->scan.seqs, assigned) and machine id in the same
 * walk; CONVERT_COMPACT_AS_IS, compact_sched arrays already on the trace
 * clock are passed on unread (see rewrite_params). */
#define CONVERT_RELABEL 1u
#define CONVERT_COMPACT_AS_IS 2u

/* Second pass over one input, counting in stats, with the flags above.
 * Returns 0, a CONVERT_ error, or what fn returned to stop. */
int convert_input(struct input *in, struct timeline *tl,
		  struct sync_stats *stats, unsigned flags, convert_fn fn,
		  void *ctx);

#endif
