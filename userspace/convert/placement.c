/* Trace time, snapshots, manifest edges and bridges (see placement.h). */
#include "convert/placement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "convert/machine_assign.h"

void placement_free(struct placement *pl)
{
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
	pl->claimer = -1;
}

static struct btr_clock_key key_of(uint32_t clock, uint32_t file,
				   uint32_t machine, uint32_t tag)
{
	struct clock_scope s = { file, machine };
	struct btr_clock_key k = { 0 };

	clock_scope_key_tag(&s, tag, clock, 0, &k);
	return k;
}

/* The clock of slot s of an input that its timestamps use by default. */
static struct btr_clock_key slot_key(const struct input *in, uint32_t s,
				     uint32_t clock)
{
	return key_of(clock, in->file.scope.file, in->scan.fm.v[s].machine,
		      in->scan.fm.v[s].tag);
}

/* The input's own timeline: a trace's private TRACE_FILE clock, perf's
 * clock (PIN and sync_to without clock). */
static struct btr_clock_key private_key(const struct input *in, uint32_t s)
{
	return slot_key(in, s, in->file.kind == INPUT_PERF_TEXT ?
				       in->file.perf_clock : BTR_CLOCK_TRACE_FILE);
}

/* The first input's claim: its declared clock, or perf's clock. */
static long first_claim(struct input **in, size_t n, uint32_t *clock)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (in[i]->file.kind == INPUT_PERF_TEXT) {
			*clock = in[i]->file.perf_clock;
			return (long)i;
		}
		if (in[i]->scan.has_declared) {
			*clock = in[i]->scan.declared;
			return (long)i;
		}
	}
	return -1;
}

int placement_trace_time(struct input **in, size_t n,
			 const struct manifest *m, uint32_t clock,
			 struct timeline *tl, struct placement *pl, char *err,
			 size_t errlen)
{
	struct machine_table *t = &tl->machines;
	uint32_t id = BTR_CLOCK_BOOTTIME, machine = t->host, file = 0;
	const struct input *owner = n ? in[0] : NULL;
	long slot = 0;

	pl->claimer = -1;
	if (m && m->has_trace_time) {
		id = m->trace_clock;
		if (m->trace_file >= 0) {
			owner = in[m->files[m->trace_file].input];
			slot = machine_slot_named(owner, t, m->trace_machine,
						  "trace_time.machine", err,
						  errlen);
			if (slot < 0)
				return -1;
			machine = owner->scan.fm.v[slot].machine;
		}
	} else if ((pl->claimer = first_claim(in, n, &id)) >= 0) {
		owner = in[pl->claimer];
		machine = owner->scan.fm.v[0].machine;
	}
	if (clock)
		id = clock;
	if (owner)
		file = owner->file.scope.file;
	if (machine == UINT32_MAX)
		machine = 0; /* no input: nothing to place */
	/* trace time is the machine's own clock, or an input's timeline */
	timeline_set_trace_key(tl, key_of(id, file, machine, 0));
	if (t->n)
		machine_table_number(t, machine);
	return 0;
}

/* ---- manifest edges ---- */

static int edge_error(char *err, size_t errlen, size_t k, const char *why)
{
	snprintf(err, errlen, "perfetto_manifest: files[%zu].clocks: %s", k,
		 why);
	return -1;
}

/* The source clock of entry k (on input src). */
static int edge_source(const struct input *src, const struct machine_table *t,
		       const struct manifest_file *f, size_t k,
		       struct btr_clock_key *key, char *err, size_t errlen)
{
	char what[48];
	long s;

	snprintf(what, sizeof(what), "files[%zu].clocks.machine", k);
	s = machine_slot_named(src, t, f->clocks.machine, what, err, errlen);
	if (s < 0)
		return -1;
	if (f->clocks.clock) {
		*key = slot_key(src, (uint32_t)s, f->clocks.clock);
		return 0;
	}
	if (src->file.kind == INPUT_PROTO && src->scan.any_snapshot)
		return edge_error(err, errlen, k, "a clocks override without "
				  "a source clock pins a clockless file, but "
				  "this one has clock snapshots: name the "
				  "clock it relates (clocks.clock)");
	*key = private_key(src, (uint32_t)s);
	return 0;
}

static int manifest_edges(struct input **in, const struct manifest *m,
			  struct timeline *tl, char *err, size_t errlen)
{
	size_t k;

	for (k = 0; m && k < m->n_files; k++) {
		const struct manifest_file *f = &m->files[k];
		const struct manifest_clocks *c = &f->clocks;
		const struct input *ref;
		struct btr_clock_key a, b;
		char what[56];
		long s;
		int rc;

		if (!f->has_clocks)
			continue;
		if (edge_source(in[f->input], &tl->machines, f, k, &a, err,
				errlen))
			return -1;
		ref = in[m->files[c->sync_file].input];
		snprintf(what, sizeof(what), "files[%zu].clocks.sync_to.machine",
			 k);
		s = machine_slot_named(ref, &tl->machines, c->sync_machine,
				       what, err, errlen);
		if (s < 0)
			return -1;
		b = c->sync_clock ? slot_key(ref, (uint32_t)s, c->sync_clock) :
				    private_key(ref, (uint32_t)s);
		if (btr_clock_key_equal(a, b))
			return edge_error(err, errlen, k, "relates a clock to "
					  "itself (both files share that "
					  "machine's clock)");
		/* source T == reference T + offset: no value below 0 */
		rc = btr_clock_graph_add_edge(
			tl->graph, a,
			c->offset_ns < 0 ? (uint64_t)-c->offset_ns : 0, b,
			c->offset_ns > 0 ? (uint64_t)c->offset_ns : 0);
		if (rc == -ENOMEM)
			return -ENOMEM;
		if (rc)
			return edge_error(err, errlen, k, "the clock graph "
					  "rejects this edge (it contradicts an "
					  "earlier one)");
	}
	return 0;
}

/* ---- bridges ---- */

static bool has_path(struct timeline *tl, struct btr_clock_key a,
		     struct btr_clock_key b)
{
	return btr_clock_graph_has_path(tl->graph, a, b);
}

static int zero_edge(struct timeline *tl, struct btr_clock_key a,
		     struct btr_clock_key b)
{
	int rc = btr_clock_graph_add_zero_offset_edge(tl->graph, a, b);

	return rc == -ENOMEM ? -ENOMEM : 0;
}

/* Relates clock `clock` of slot s of in to the trace clock. Returns 1
 * when placed, 0 when not, -ENOMEM. */
static int bridge(struct timeline *tl, const struct input *in, uint32_t s,
		  uint32_t clock)
{
	struct btr_clock_key g = tl->trace_clock, key = slot_key(in, s, clock);
	struct btr_clock_key c = key, rt, rt_g;
	int err;

	if (clock != BTR_CLOCK_TRACE_FILE)
		c.file = 0; /* the machine's own clock */
	if (!btr_clock_key_equal(key, c) && !has_path(tl, key, c) &&
	    (err = zero_edge(tl, key, c)))
		return err;
	if (btr_clock_key_equal(c, g) || has_path(tl, c, g))
		return 1;
	rt = key_of(BTR_CLOCK_REALTIME, 0, c.machine, 0);
	rt_g = key_of(BTR_CLOCK_REALTIME, 0, g.machine, 0);
	if (c.machine != g.machine && has_path(tl, c, rt) &&
	    has_path(tl, rt_g, g)) {
		if (!has_path(tl, rt, rt_g) && (err = zero_edge(tl, rt, rt_g)))
			return err;
		if (has_path(tl, c, g))
			return 1;
	}
	if (c.clock_id == BTR_CLOCK_TRACE_FILE ||
	    g.clock_id == BTR_CLOCK_TRACE_FILE || c.clock_id == g.clock_id) {
		if ((err = zero_edge(tl, c, g)))
			return err;
		return 1;
	}
	return 0;
}

static int note_unplaced(struct placement *pl, size_t i, uint32_t s,
			 uint32_t clock)
{
	if (grow_array((void **)&pl->v, &pl->cap, pl->n + 1, sizeof(*pl->v),
		       8))
		return -ENOMEM;
	pl->v[pl->n++] = (struct unplaced){ i, s, clock };
	return 0;
}

/* Bridges every machine of input i; unplaced ones are noted once. */
static int bridge_input(struct timeline *tl, struct input **in, size_t i,
			struct placement *pl, struct sync_stats *stats)
{
	const struct input *x = in[i];
	uint32_t clocks[2] = { input_default_clock(x), x->scan.bundle_clock };
	size_t nclocks = x->file.kind == INPUT_PERF_TEXT ? 1 : 2, k;
	uint32_t s;
	int rc;

	for (s = 0; s < x->scan.fm.n; s++) {
		bool counted = false;

		for (k = 0; k < nclocks; k++) {
			if (k && clocks[k] == clocks[0])
				continue;
			rc = bridge(tl, x, s, clocks[k]);
			if (rc < 0)
				return rc;
			if (rc)
				continue;
			/* once per input and machine, as Perfetto */
			if (!counted)
				timeline_count(tl, stats, x->scan.fm.v[s].machine,
					       SYNC_STAT_UNRELATABLE, 1);
			counted = true;
			if (note_unplaced(pl, i, s, clocks[k]))
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- remote_clock_sync ---- */

struct rs_ctx {
	struct timeline *tl;
	const struct input *in;
	long rejected;
};

/* The trace clock machine's `clock` at host == slot's at client. */
static int remote_edge(void *ctx, uint32_t slot, uint32_t clock, int64_t host,
		       int64_t client)
{
	struct rs_ctx *x = ctx;
	struct btr_clock_key h = key_of(clock, 0, x->tl->trace_clock.machine, 0);
	struct btr_clock_key c = slot_key(x->in, slot, clock);
	int rc;

	if (btr_clock_key_equal(h, c))
		return 0;
	rc = btr_clock_graph_add_edge(x->tl->graph, h, (uint64_t)host, c,
				      (uint64_t)client);
	x->rejected += rc == -EINVAL;
	return rc == -ENOMEM ? -ENOMEM : 0;
}

/* REALTIME twins for isolated inputs off the trace clock's machine. */
static bool twin(void *ctx, uint32_t machine)
{
	const struct timeline *tl = ctx;

	return machine != tl->trace_clock.machine;
}

long placement_apply(struct input **in, size_t n, const struct manifest *m,
		     struct timeline *tl, struct placement *pl,
		     struct sync_stats *stats, char *err, size_t errlen)
{
	long rejected = 0, r;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct rs_ctx x = { tl, in[i], 0 };

		snap_list_scope(&in[i]->scan.snaps, &in[i]->scan.fm);
		r = snap_list_apply_twins(&in[i]->scan.snaps, tl->graph, twin, tl);
		if (r < 0 || remote_sync_edges(&in[i]->scan.rsync, remote_edge, &x))
			return -ENOMEM;
		rejected += r + x.rejected;
	}
	rc = manifest_edges(in, m, tl, err, errlen);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = bridge_input(tl, in, i, pl, stats)))
			return rc;
	return rejected;
}
