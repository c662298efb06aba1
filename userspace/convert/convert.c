/* The first and second passes over the inputs (see convert.h). */
#include "convert/convert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "convert/machine_assign.h"
#include "util/log.h"

/* Scans every trace input; keeps going after an input error. */
static int scan_all(struct input **inputs, size_t n, struct input **failed)
{
	int err, first_err = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (inputs[i]->file.kind != INPUT_PROTO)
			continue;
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
	return first_err;
}

/* A result of the machine and placement steps as a CONVERT_ error. */
static int step_error(long rc, struct input **inputs, struct input **failed)
{
	*failed = inputs[0];
	return rc == -ENOMEM ? CONVERT_NO_MEMORY : CONVERT_MANIFEST_ERROR;
}

int convert_prepare_opts(struct input **inputs, size_t n,
			 struct convert_opts *o, struct timeline *tl,
			 struct sync_stats *stats, struct input **failed)
{
	long rc;
	int first_err;

	o->placement.claimer = -1;
	first_err = scan_all(inputs, n, failed);
	if (first_err == CONVERT_NO_MEMORY)
		return first_err;
	if (o->manifest && manifest_bind(o->manifest, inputs, n, o->err,
					 sizeof(o->err)))
		return step_error(-1, inputs, failed);
	rc = machine_assign(inputs, n, o->manifest, &tl->machines, o->err,
			    sizeof(o->err));
	if (!rc)
		rc = timeline_count_machines(tl);
	if (!rc)
		rc = placement_trace_time(inputs, n, o->manifest,
					  o->trace_clock, tl, &o->placement,
					  o->err, sizeof(o->err));
	if (!rc)
		rc = placement_apply(inputs, n, o->manifest, tl, &o->placement,
				     stats, o->err, sizeof(o->err));
	if (rc < 0)
		return step_error(rc, inputs, failed);
	stats->stat[SYNC_STAT_INVALID_SNAPSHOTS] += (uint64_t)rc;
	return first_err;
}

int convert_prepare(struct input **inputs, size_t n, uint32_t trace_clock,
		    struct timeline *tl, struct sync_stats *stats,
		    struct input **failed)
{
	struct convert_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.trace_clock = trace_clock;
	rc = convert_prepare_opts(inputs, n, &o, tl, stats, failed);
	placement_free(&o.placement);
	return rc;
}
int convert_input(struct input *in, struct timeline *tl,
		  struct sync_stats *stats, unsigned flags, convert_fn fn,
		  void *ctx)
{
	struct rewrite rw;
	struct input_packet p;
	struct rewritten res;
	const char *why = NULL;
	int rc, err = 0;

	if (in->file.kind != INPUT_PROTO)
		return 0;
	rewrite_init(&rw, &(struct rewrite_params){
				  .tl = tl,
				  .scope = in->file.scope,
				  .default_clock = input_default_clock(in),
				  .bundle_clock = in->scan.bundle_clock,
				  .adopted_machine = in->scan.adopted_machine,
				  .fm = &in->scan.fm,
				  .seqs_out = flags & CONVERT_RELABEL ?
						      &in->scan.seqs : NULL,
				  .compact_as_is = flags & CONVERT_COMPACT_AS_IS,
			  });
	tl->stats = stats;
	if (input_rewind(in)) {
		rewrite_free(&rw);
		return CONVERT_INPUT_ERROR;
	}
	snap_list_rewind(&in->scan.snaps, tl->graph);
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
		if (p.index == in->scan.scan_fail_index) {
			/* what only the first pass reads (a snapshot) */
			snprintf(in->err, sizeof(in->err), "%s", in->scan.scan_err);
			err = CONVERT_INPUT_ERROR;
			break;
		}
		stats->packets_in++;
		snap_list_replay(&in->scan.snaps, tl->graph, p.index);
		err = rewrite_packet(&rw, p.data, p.len, &p.info, &res, &why);
		if (err == -1) {
			msg_at(in->err, sizeof(in->err), in->file.name, p.offset,
			       "malformed TracePacket: %s", why);
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
