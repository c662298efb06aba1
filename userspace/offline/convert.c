/* The first and second passes over the inputs (see convert.h). */
#include "offline/convert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

int convert_prepare(struct input **inputs, size_t n, uint32_t trace_clock,
		    struct timeline *tl, struct sync_stats *stats,
		    struct input **failed)
{
	size_t i;
	long rejected;
	int err, first_err = 0;

	for (i = 0; i < n; i++) {
		err = input_scan(inputs[i]);
		if (err == -ENOMEM) {
			*failed = inputs[i];
			return CONVERT_NO_MEMORY;
		}
		if (err && !first_err) {
			*failed = inputs[i];
			first_err = CONVERT_INPUT_ERROR;
		}
	}
	if (!trace_clock)
		trace_clock = n ? input_default_clock(inputs[0]) :
				  BTR_CLOCK_BOOTTIME;
	timeline_set_trace_clock(tl, trace_clock);
	for (i = 0; i < n; i++) {
		rejected = snap_list_apply(&inputs[i]->snaps, tl->graph);
		if (rejected < 0) {
			*failed = inputs[i];
			return CONVERT_NO_MEMORY;
		}
		stats->stat[SYNC_STAT_INVALID_SNAPSHOTS] += (uint64_t)rejected;
	}
	return first_err;
}

int convert_input(struct input *in, struct timeline *tl,
		  struct sync_stats *stats, convert_fn fn, void *ctx)
{
	struct rewrite rw;
	struct input_packet p;
	struct rewritten res;
	const char *why = NULL;
	int rc, err = 0;

	rewrite_init(&rw, tl, in->scope, input_default_clock(in));
	rw.adopted_machine = in->adopted_machine;
	rw.bundle_clock = in->bundle_clock;
	tl->stats = stats;
	if (input_rewind(in)) {
		rewrite_free(&rw);
		return CONVERT_INPUT_ERROR;
	}
	snap_list_rewind(&in->snaps, tl->graph);
	while ((rc = input_next(in, &p)) > 0) {
		if (p.info.sync_info) {
			/* An earlier sync's trailer: not a packet of the trace */
			res = (struct rewritten){ .sync_info = true,
						  .data = p.data,
						  .len = p.len };
			err = fn(ctx, &p, &res);
			if (err)
				break;
			continue;
		}
		if (p.index == in->scan_fail_index) {
			/* what only the first pass reads (a snapshot) */
			snprintf(in->err, sizeof(in->err), "%s", in->scan_err);
			err = CONVERT_INPUT_ERROR;
			break;
		}
		stats->packets_in++;
		snap_list_replay(&in->snaps, tl->graph, p.index);
		err = rewrite_packet(&rw, p.data, p.len, &p.info, &res, &why);
		if (err == -1) {
			snprintf(in->err, sizeof(in->err),
				 "%s: offset %" PRIu64 ": malformed "
				 "TracePacket: %s", in->name, p.offset, why);
			err = CONVERT_INPUT_ERROR;
			break;
		}
		if (err) {
			err = CONVERT_NO_MEMORY;
			break;
		}
		if (!res.dropped)
			stats->packets_out++;
		err = fn(ctx, &p, &res);
		if (err)
			break;
	}
	rewrite_free(&rw);
	if (!err && rc < 0)
		err = CONVERT_INPUT_ERROR;
	return err;
}
