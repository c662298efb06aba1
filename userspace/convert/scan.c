/* The first pass over an input's packets (input_scan, see input.h): its
 * clock snapshots and ftrace clock pairs, machines, sequence ids,
 * remote_clock_sync round trips and an earlier sync's trailer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "convert/bundle_rewrite.h"
#include "convert/input.h"
#include "trace/sync_info.h"

/* Notes the packet's machine (its slot keys its clocks until machines are
 * assigned), sequence id and machine name. */
static int scan_machine(struct input *in, const struct input_packet *p,
			uint32_t *slot)
{
	const struct packet_info *info = &p->info;
	const char *name;
	size_t len;
	int rc = file_machines_add(&in->scan.fm, info->machine_id);

	if (rc == -E2BIG)
		return input_fail_at(in, p->offset, "more than %d machine ids",
			       MACHINES_MAX_PER_INPUT);
	if (rc < 0 || seq_map_add(&in->scan.seqs, info->seq_id))
		return -ENOMEM;
	*slot = (uint32_t)rc;
	if (info->system_info &&
	    system_info_machine_name(info->system_info, info->system_info_len,
				     &name, &len) &&
	    file_machines_name(&in->scan.fm, *slot, name, len))
		return -ENOMEM;
	return 0;
}

/* Where a client snapshot of a remote_clock_sync goes. */
struct client_snap {
	struct input *in;
	const struct input_packet *p;
	struct clock_scope s;
	const char *why;
};

static int client_snapshot(void *ctx, const uint8_t *snap, size_t len)
{
	struct client_snap *c = ctx;
	struct input *in = c->in;
	int err = snap_list_add_snapshot(&in->scan.snaps, &c->s, c->p->index,
					 c->p->info.seq_id, snap, len, &c->why);

	if (!err) {
		in->scan.fm.v[c->s.machine].has_snapshots = true;
		in->scan.any_snapshot = true;
	}
	return err;
}

/* The round trips of a remote_clock_sync on machine slot `slot`. */
static int scan_remote_sync(struct input *in, const struct input_packet *p,
			    uint32_t slot)
{
	struct client_snap c = { in, p, in->file.scope, NULL };
	int err;

	c.s.machine = slot;
	err = remote_sync_add(&in->scan.rsync, slot, p->info.remote_clock_sync,
			      p->info.remote_clock_sync_len, client_snapshot,
			      &c, &c.why);
	if (err == -1)
		return input_fail_at(in, p->offset, "%s", c.why);
	return err;
}

/* Adds what a packet tells the clock graph. */
static int scan_packet(struct input *in, const struct input_packet *p)
{
	const struct packet_info *info = &p->info;
	struct clock_scope s = in->file.scope;
	const char *why = NULL;
	int64_t fts, bts;
	uint32_t clock, slot = 0;
	int err;

	err = scan_machine(in, p, &slot);
	if (err)
		return err;
	s.machine = slot;
	if (info->snapshot) {
		err = snap_list_add_snapshot(&in->scan.snaps, &s, p->index,
					     info->seq_id, info->snapshot,
					     info->snapshot_len, &why);
		if (err == -1)
			return input_fail_at(in, p->offset, "%s", why);
		if (err)
			return err;
		in->scan.fm.v[slot].has_snapshots = true;
		in->scan.any_snapshot = true;
		if (slot == 0 && !in->scan.has_declared &&
		    snap_declared_clock(info->snapshot, info->snapshot_len,
					    &clock)) {
			in->scan.has_declared = true;
			in->scan.declared = clock;
		}
	}
	if (info->remote_clock_sync && (err = scan_remote_sync(in, p, slot)))
		return err;
	if (info->sync_info &&
	    sync_info_read(info->sync_info, info->sync_info_len, &clock,
			   &in->scan.prior))
		in->scan.bundle_clock = clock;
	if (info->bundle &&
	    bundle_ftrace_pair(info->bundle, info->bundle_len, &fts, &bts)) {
		in->scan.fm.v[slot].has_snapshots = true;
		in->scan.any_snapshot = true;
		return snap_list_add_ftrace_pair(&in->scan.snaps, &s, p->index,
						 info->seq_id, fts, bts);
	}
	return 0;
}

int input_scan(struct input *in)
{
	struct input_packet p;
	bool decided = false;
	int rc, err = 0;

	bool trailer = false;
	uint32_t clock;

	in->scan.scan_fail_index = UINT64_MAX;
	snap_list_free(&in->scan.snaps);
	seq_map_free(&in->scan.seqs);
	remote_sync_free(&in->scan.rsync);
	file_machines_free(&in->scan.fm);
	if (file_machines_init(&in->scan.fm))
		return -ENOMEM;
	in->scan.has_declared = in->scan.any_snapshot = false;
	in->scan.adopted_machine = 0;
	in->scan.bundle_clock = BTR_CLOCK_BOOTTIME;
	memset(&in->scan.prior, 0, sizeof(in->scan.prior));
	if (input_rewind(in))
		return -1;
	while (!err && (rc = input_next(in, &p)) > 0) {
		/* A file whose first packet is on a remote machine was
		 * recorded there: that machine is the file's own. */
		if (!decided && !p.info.sync_marker) {
			decided = true;
			in->scan.adopted_machine = p.info.machine_id;
			in->scan.fm.adopted = p.info.machine_id;
			in->scan.fm.v[0].raw_id = p.info.machine_id;
		}
		trailer |= p.info.sync_info &&
			   sync_info_read(p.info.sync_info,
					  p.info.sync_info_len, &clock, NULL);
		err = scan_packet(in, &p);
	}
	/* A file without clocks is on its own timeline, bundles too. */
	if (!in->scan.any_snapshot && !trailer)
		in->scan.bundle_clock = BTR_CLOCK_TRACE_FILE;
	if (err == -1) {
		in->scan.scan_fail_index = p.index;
		snprintf(in->scan.scan_err, sizeof(in->scan.scan_err), "%s", in->err);
	}
	if (err)
		return err;
	if (rc < 0)
		return -1;
	in->scan.packets = in->rd.next_index;
	return 0;
}

uint32_t input_default_clock(const struct input *in)
{
	if (in->file.kind == INPUT_PERF_TEXT)
		return in->file.perf_clock;
	if (in->scan.has_declared)
		return in->scan.declared;
	return in->scan.any_snapshot ? BTR_CLOCK_BOOTTIME : BTR_CLOCK_TRACE_FILE;
}
