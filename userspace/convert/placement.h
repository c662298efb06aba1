/* How every input reaches the trace clock (docs/clock-model.md,
 * 'Placement'), once the inputs are scanned and their machines assigned:
 *
 * 1. Trace time: the manifest's trace_time; else the clock the first input
 *    (in processing order) claims: a trace the clock its snapshots declare,
 *    perf text its perf clock; else BOOTTIME of the first input's machine.
 *    A clock asked for on the command line replaces the clock, not the
 *    machine. The machine of the trace clock becomes the output's host.
 * 2. Every input's snapshots, on their machines and file tags (an isolated
 *    input's REALTIME readings also as its machine's own, to meet other
 *    machines through REALTIME), its remote_clock_sync round trips
 *    (remote_sync.h) as edges from the trace clock's machine to the
 *    client machine, then each manifest `clocks` entry as one edge:
 *    source T == reference T + offset_ns.
 * 3. Bridges, per input and machine, for each clock its timestamps use
 *    without naming one (a trace's default and bundle clock, perf's clock),
 *    in this order: an isolated input's clock equals its machine's at zero
 *    offset unless they are related already; then, unless the machine's
 *    clock already reaches the trace clock: REALTIME rendezvous (the
 *    machine's REALTIME and the trace clock machine's REALTIME read the
 *    same, when both relate to them), else the same clock id on another
 *    machine or a private TRACE_FILE clock at zero offset, else nothing:
 *    the input's events there are dropped, and the input, machine and
 *    clock are listed (clock_sync_unrelatable_clock_domains). Two different
 *    real clocks are never equated. */
#ifndef BTR_PLACEMENT_H
#define BTR_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "convert/manifest.h"
#include "clock/timeline.h"

/* An input (x machine) with no relation to the trace clock. */
struct unplaced {
	size_t input;    /* index in the inputs */
	uint32_t slot;   /* its machine slot */
	uint32_t clock;  /* the clock that could not be related */
};

struct placement {
	long claimer;    /* input whose claim is the trace clock, -1: none */
	struct unplaced *v;
	size_t n, cap;
};

void placement_free(struct placement *pl);

/* Step 1: sets tl's trace clock and numbers the machines. Returns 0 or -1
 * with a message in err (a manifest machine the file does not hold). */
int placement_trace_time(struct input **in, size_t n,
			 const struct manifest *m, uint32_t clock,
			 struct timeline *tl, struct placement *pl, char *err,
			 size_t errlen);

/* Steps 2 and 3. Returns the number of rejected snapshots, -1 with a
 * message in err (a manifest edge the inputs cannot take), or -ENOMEM.
 * Counts clock_sync_unrelatable_clock_domains in *stats, and on the
 * input's machine in the timeline's per-machine counts. */
long placement_apply(struct input **in, size_t n, const struct manifest *m,
		     struct timeline *tl, struct placement *pl,
		     struct sync_stats *stats, char *err, size_t errlen);

#endif
