/* What `sync` tells on stderr once it is done: per input (when there are
 * several) what was read and written and on which machine (for perf text,
 * where the samples printed without a pid got their process), the totals,
 * the sort's spills, every drop by cause under Perfetto's stat names (as
 * the output records them: earlier syncs' included, on their machines), and
 * each input whose clock has no relation to the trace clock. */
#ifndef BTR_SYNC_REPORT_H
#define BTR_SYNC_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "convert/input.h"
#include "convert/placement.h"
#include "sync/sort/sorter.h"
#include "clock/timeline.h"

struct sync_report {
	const char *out;             /* the output, for messages */
	bool quiet;                  /* no summary (drops still shown) */
	struct input **in;           /* processing order */
	const struct sync_stats *per_input; /* one per input */
	size_t n;
	const struct timeline *tl;
	const struct placement *pl;
	const struct sync_stats *total;
	const struct sorter_stats *sort;
};

/* "BOOTTIME" or "clock N", into buf when it has no name. */
const char *sync_clock_label(uint32_t id, char *buf, size_t n);

void sync_report(const struct sync_report *r);

/* The inputs left unplaced, as warnings (or errors when strict). */
void sync_report_unplaced(const struct sync_report *r, bool strict);

#endif
