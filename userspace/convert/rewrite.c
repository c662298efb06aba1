/* TracePacket rewriting onto the trace clock (see rewrite.h). */
#include "convert/rewrite.h"
#include "convert/bundle_rewrite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rewrite_init(struct rewrite *rw, const struct rewrite_params *p)
{
	memset(rw, 0, sizeof(*rw));
	rw->tl = p->tl;
	rw->scope = p->scope;
	rw->default_clock = p->default_clock;
	rw->bundle_clock = p->bundle_clock ? p->bundle_clock
					   : BTR_CLOCK_BOOTTIME;
	rw->adopted_machine = p->adopted_machine;
	rw->fm = p->fm;
	rw->seqs_out = p->seqs_out;
	rw->compact_as_is = p->compact_as_is;
	rw->latest = INT64_MIN;
	rw->last_snapshot = INT64_MIN;
}

void rewrite_free(struct rewrite *rw)
{
	seq_state_free(&rw->seqs);
	wbuf_free(&rw->out);
	free(rw->sw.v);
	free(rw->wk.v);
	free(rw->arr.v);
	free(rw->sw_ns);
	free(rw->wk_ns);
	free(rw->sw_keep);
	free(rw->wk_keep);
	memset(rw, 0, sizeof(*rw));
}

/* Where the clocks of a packet with this machine_id live, and the file
 * tag of its builtin clocks. */
static struct clock_scope packet_scope(const struct rewrite *rw,
				       uint32_t machine_id, uint32_t *tag)
{
	struct clock_scope s = rw->scope;
	const struct file_machine *m;

	*tag = 0;
	if (!rw->fm) {
		s.machine = clock_scope_machine(&rw->scope, rw->adopted_machine,
					   machine_id);
		return s;
	}
	m = &rw->fm->v[file_machines_find(rw->fm, machine_id)];
	s.machine = m->machine;
	*tag = m->tag;
	return s;
}

/* The packet's timestamp in the trace clock; false if it is dropped. */
static bool packet_time(struct rewrite *rw, const struct packet_info *info,
			const struct clock_scope *s, uint32_t tag, int64_t *ns)
{
	uint32_t clock = info->clock_id;
	struct btr_clock_key key;

	if (!clock)
		clock = seq_state_clock(&rw->seqs, info->seq_id);
	if (!clock)
		clock = rw->default_clock;
	if (clock_scope_key_tag(s, tag, clock, info->seq_id, &key)) {
		timeline_count_unknown_source(rw->tl, s->machine);
		return false;
	}
	return timeline_convert(rw->tl, key, info->ts, ns);
}

/* TracePacketDefaults without its timestamp_clock_id. */
static void defaults_rewrite(struct rewrite *rw, const struct wire_field *d)
{
	size_t mark = wbuf_begin_len(&rw->out, PKT_DEFAULTS);

	wbuf_copy_except(&rw->out, d->data, (size_t)d->val,
			 DEFAULTS_TIMESTAMP_CLOCK_ID);
	wbuf_end_len(&rw->out, mark);
}

/* A ClockSnapshot, unchanged unless it would declare another trace clock:
 * then its primary_trace_clock becomes the trace clock. */
static void snapshot_rewrite(struct rewrite *rw, const struct wire_field *s)
{
	uint32_t trace_clock = rw->tl->trace_clock.clock_id, declared;
	size_t mark;

	if (snap_declared_clock(s->data, (size_t)s->val, &declared) &&
	    declared == trace_clock) {
		wbuf_field_copy(&rw->out, s);
		return;
	}
	mark = wbuf_begin_len(&rw->out, PKT_CLOCK_SNAPSHOT);
	wbuf_copy_except(&rw->out, s->data, (size_t)s->val,
			 SNAP_PRIMARY_TRACE_CLOCK);
	wbuf_field_varint(&rw->out, SNAP_PRIMARY_TRACE_CLOCK, trace_clock);
	wbuf_end_len(&rw->out, mark);
}

/* Sort position of a snapshot without timestamp: its trace clock reading
 * (same machine, absolute, unit 1), else the latest time. */
static int64_t snapshot_key(const struct rewrite *rw,
			    const struct packet_info *info,
			    const struct clock_scope *s, uint32_t tag)
{
	uint64_t v;

	if (s->machine == rw->tl->trace_clock.machine &&
	    tag == rw->tl->trace_clock.file &&
	    snap_clock_value(info->snapshot, info->snapshot_len,
				 rw->tl->trace_clock.clock_id, &v) &&
	    v <= INT64_MAX)
		return (int64_t)v;
	return rw->latest;
}

/* The output's sequence id and machine id of a packet (relabelling), and
 * whether either differs from what the packet has. */
static bool out_ids(const struct rewrite *rw, const struct packet_info *info,
		    uint32_t *seq, uint32_t *machine)
{
	const struct file_machine *s;

	*seq = info->seq_id;
	*machine = info->machine_id;
	if (!rw->seqs_out || !rw->fm)
		return false;
	*seq = seq_map_get(rw->seqs_out, info->seq_id);
	s = &rw->fm->v[file_machines_find(rw->fm, info->machine_id)];
	*machine = rw->tl->machines.v[s->machine].out_id;
	return *seq != info->seq_id || *machine != info->machine_id;
}

int rewrite_packet(struct rewrite *rw, const uint8_t *pkt, size_t len,
		   const struct packet_info *info, struct rewritten *res,
		   const char **why)
{
	uint32_t tag;
	struct clock_scope scope = packet_scope(rw, info->machine_id, &tag);
	int64_t ts = 0, first = 0, last = 0;
	bool ts_written = false, any = false, relabel;
	uint32_t out_seq, out_machine;
	struct wire_reader r;
	struct wire_field f;
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (seq_state_update(&rw->seqs, info))
		return -ENOMEM;
	if (info->has_ts && !packet_time(rw, info, &scope, tag, &ts)) {
		timeline_count(rw->tl, rw->tl->stats, scope.machine,
			       SYNC_STAT_PACKET_LOSS, 1);
		res->dropped = true;
		return 0;
	}
	relabel = out_ids(rw, info, &out_seq, &out_machine);
	if (!info->needs_rewrite && !relabel) {
		res->data = pkt;
		res->len = len;
	} else {
		rw->out.len = 0;
		wire_reader_init(&r, pkt, len);
		while (!err && wire_next(&r, &f) > 0) {
			size_t mark;

			switch (f.num) {
			case PKT_TIMESTAMP:
				if (!ts_written)
					wbuf_field_varint(&rw->out, f.num,
							  (uint64_t)ts);
				ts_written = true;
				break;
			case PKT_TIMESTAMP_CLOCK_ID:
				break;
			case PKT_SEQ_ID:
			case PKT_MACHINE_ID:
				if (!relabel)
					wbuf_field_copy(&rw->out, &f);
				break;
			case PKT_DEFAULTS:
				defaults_rewrite(rw, &f);
				break;
			case PKT_CLOCK_SNAPSHOT:
				snapshot_rewrite(rw, &f);
				break;
			case PKT_FTRACE_EVENTS:
				if (rw->tl->stats)
					rw->tl->stats->bundles++;
				mark = wbuf_begin_len(&rw->out, f.num);
				err = bundle_rewrite(rw, f.data, (size_t)f.val,
						     info->seq_id, &scope, tag,
						     &any, &first, &last, why);
				wbuf_end_len(&rw->out, mark);
				break;
			default:
				wbuf_field_copy(&rw->out, &f);
				break;
			}
		}
		if (err)
			return err;
		if (relabel && info->has_seq_id)
			wbuf_field_varint(&rw->out, PKT_SEQ_ID, out_seq);
		if (relabel && out_machine)
			wbuf_field_varint(&rw->out, PKT_MACHINE_ID, out_machine);
		if (rw->out.oom)
			return -ENOMEM;
		res->data = rw->out.p ? rw->out.p : pkt;
		res->len = rw->out.len;
	}
	if (any)
		res->key = first;
	else if (info->has_ts)
		res->key = ts;
	else if (info->snapshot)
		res->key = snapshot_key(rw, info, &scope, tag);
	else if (info->seq_id &&
		 (info->interned || info->cleared || info->has_defaults))
		res->key = seq_state_latest(&rw->seqs, info->seq_id);
	else
		res->key = rw->latest;
	if (info->snapshot) {
		if (res->key < rw->last_snapshot)
			res->key = rw->last_snapshot;
		rw->last_snapshot = res->key;
	}
	if (info->has_ts && ts > rw->latest)
		rw->latest = ts;
	if (any && last > rw->latest)
		rw->latest = last;
	if ((info->has_ts || any) &&
	    seq_state_note_time(&rw->seqs, info->seq_id,
				any && last > ts ? last : ts))
		return -ENOMEM;
	return 0;
}
