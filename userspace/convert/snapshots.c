/* Clock snapshots of an input (see snapshots.h). */
#include "convert/snapshots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "clock/machines.h"
#include "util/wire.h"

void snap_list_free(struct snap_list *l)
{
	free(l->readings);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	return grow_array(p, cap, need, size, 16);
}

/* Starts an entry for packet `packet` whose readings follow. */
static struct snap_entry *entry_new(struct snap_list *l, uint64_t packet,
				    uint32_t machine)
{
	struct snap_entry *e;

	if (grow((void **)&l->e, &l->cap, l->n + 1, sizeof(*l->e)))
		return NULL;
	e = &l->e[l->n++];
	*e = (struct snap_entry){ .packet = packet, .first = l->nreadings,
				  .machine = machine };
	return e;
}

static struct btr_clock_reading *reading_new(struct snap_list *l)
{
	if (grow((void **)&l->readings, &l->reading_cap, l->nreadings + 1,
		 sizeof(*l->readings)))
		return NULL;
	memset(&l->readings[l->nreadings], 0, sizeof(*l->readings));
	return &l->readings[l->nreadings++];
}

/* One ClockSnapshot.Clock into *r; false if malformed. */
static bool clock_read(const struct wire_field *f, struct btr_clock_reading *r,
		       uint32_t *clock_id)
{
	struct wire_reader rd;
	struct wire_field g;
	int rc;

	*clock_id = 0;
	r->unit_ns = 1;
	wire_reader_init(&rd, f->data, (size_t)f->val);
	while ((rc = wire_next(&rd, &g)) > 0) {
		bool varint = g.type == WIRE_VARINT;

		switch (g.num) {
		case SNAP_CLOCK_ID:
			if (!varint)
				return false;
			*clock_id = (uint32_t)g.val;
			break;
		case SNAP_CLOCK_TIMESTAMP:
			if (!varint)
				return false;
			r->ts = g.val;
			break;
		case SNAP_CLOCK_IS_INCREMENTAL:
			if (!varint)
				return false;
			r->incremental = g.val != 0;
			break;
		case SNAP_CLOCK_UNIT_MULTIPLIER_NS:
			if (!varint)
				return false;
			r->unit_ns = g.val ? g.val : 1;
			break;
		default:
			break;
		}
	}
	return rc == 0;
}

int snap_list_add_snapshot(struct snap_list *l, const struct clock_scope *s,
			   uint64_t packet, uint32_t seq, const uint8_t *p,
			   size_t n, const char **why)
{
	size_t first = l->nreadings, nentries = l->n;
	struct snap_entry *e = entry_new(l, packet, s->machine);
	struct wire_reader rd;
	struct wire_field f;
	int rc;

	if (!e)
		return -ENOMEM;
	wire_reader_init(&rd, p, n);
	while ((rc = wire_next(&rd, &f)) > 0) {
		struct btr_clock_reading *r;
		uint32_t id;

		if (f.num != SNAP_CLOCKS)
			continue;
		if (f.type != WIRE_LEN)
			goto malformed;
		if (l->nreadings - first == SNAPSHOT_MAX_CLOCKS) {
			l->nreadings = first;
			l->n = nentries;
			_Static_assert(SNAPSHOT_MAX_CLOCKS == 128, "message");
			*why = "clock_snapshot with more than 128 clocks";
			return -1;
		}
		r = reading_new(l);
		if (!r) {
			l->nreadings = first;
			l->n = nentries;
			return -ENOMEM;
		}
		if (!clock_read(&f, r, &id))
			goto malformed;
		if (clock_scope_key(s, id, seq, &r->key))
			l->e[l->n - 1].bad_scope = true;
	}
	if (rc < 0)
		goto malformed;
	l->e[l->n - 1].n = l->nreadings - first;
	return 0;

malformed:
	l->nreadings = first;
	l->n = nentries;
	*why = "malformed clock_snapshot";
	return -1;
}

int snap_list_add_ftrace_pair(struct snap_list *l, const struct clock_scope *s,
			      uint64_t packet, uint32_t seq, int64_t ftrace_ts,
			      int64_t boot_ts)
{
	struct btr_clock_reading *r[2];
	struct btr_clock_key fkey = { 0 }, bkey;
	struct snap_entry *e;
	bool bad;

	if (l->has_ftrace_ts && l->last_ftrace_ts == ftrace_ts)
		return 0;
	bad = clock_scope_key(s, FTRACE_SEQ_CLOCK_ID, seq, &fkey) != 0;
	clock_scope_key(s, BTR_CLOCK_BOOTTIME, seq, &bkey);
	e = entry_new(l, packet, s->machine);
	if (!e)
		return -ENOMEM;
	r[0] = reading_new(l);
	r[1] = r[0] ? reading_new(l) : NULL;
	if (!r[1]) {
		l->nreadings = l->e[l->n - 1].first;
		l->n--;
		return -ENOMEM;
	}
	/* reading_new() may have moved the array: index again. */
	r[0] = &l->readings[l->nreadings - 2];
	*r[0] = (struct btr_clock_reading){ fkey, (uint64_t)ftrace_ts, 1, false };
	*r[1] = (struct btr_clock_reading){ bkey, (uint64_t)boot_ts, 1, false };
	l->e[l->n - 1].n = 2;
	l->e[l->n - 1].bad_scope = bad;
	l->has_ftrace_ts = true;
	l->last_ftrace_ts = ftrace_ts;
	return 0;
}

/* The readings of e; NULL when it has none (the array may be NULL). */
static const struct btr_clock_reading *readings_of(const struct snap_list *l,
						   const struct snap_entry *e)
{
	return e->n ? &l->readings[e->first] : NULL;
}

/* Adds entry e (its readings r[0..n)) to the graph. Returns 1 when it is
 * rejected, 0 when accepted, -ENOMEM. */
static long apply_entry(struct snap_entry *e, struct btr_clock_graph *g,
			const struct btr_clock_reading *r, size_t n)
{
	int err;

	if (e->bad_scope)
		return 1;
	if (!n) {
		e->accepted = true; /* an empty snapshot says nothing */
		return 0;
	}
	err = btr_clock_graph_add_snapshot(g, r, n);
	if (err == -ENOMEM)
		return -ENOMEM;
	e->accepted = err == 0;
	return err != 0;
}

long snap_list_apply(struct snap_list *l, struct btr_clock_graph *g)
{
	long rejected = 0, n;
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct snap_entry *e = &l->e[i];

		n = apply_entry(e, g, readings_of(l, e), e->n);
		if (n < 0)
			return -ENOMEM;
		rejected += n;
	}
	return rejected;
}

void snap_list_scope(struct snap_list *l, const struct file_machines *fm)
{
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		struct snap_entry *e = &l->e[i];
		const struct file_machine *m =
			&fm->v[e->machine < fm->n ? e->machine : 0];

		e->machine = m->machine;
		for (k = 0; k < e->n; k++) {
			struct btr_clock_key *key =
				&l->readings[e->first + k].key;

			key->machine = m->machine;
			if (!clock_scope_file_scoped(key->clock_id))
				key->file = m->tag;
		}
	}
}

static bool is_realtime(uint32_t clock_id)
{
	return clock_id == BTR_CLOCK_REALTIME ||
	       clock_id == BTR_CLOCK_REALTIME_COARSE;
}

/* The readings of e, with the machine's own twin of each isolated
 * REALTIME reading, into *buf (grown). Returns the count or -ENOMEM. */
static long with_twins(const struct snap_list *l, const struct snap_entry *e,
		       struct btr_clock_reading **buf, size_t *cap)
{
	size_t k, n = 0;

	if (grow((void **)buf, cap, 2 * e->n, sizeof(**buf)))
		return -ENOMEM;
	for (k = 0; k < e->n; k++) {
		const struct btr_clock_reading *r = &l->readings[e->first + k];

		(*buf)[n++] = *r;
		if (is_realtime(r->key.clock_id) && r->key.file) {
			(*buf)[n] = *r;
			(*buf)[n++].key.file = 0;
		}
	}
	return (long)n;
}

long snap_list_apply_twins(struct snap_list *l, struct btr_clock_graph *g,
			   bool (*twin)(void *ctx, uint32_t machine),
			   void *ctx)
{
	struct btr_clock_reading *buf = NULL;
	size_t i, cap = 0;
	long rejected = 0, n;

	for (i = 0; i < l->n; i++) {
		struct snap_entry *e = &l->e[i];

		if (e->bad_scope || !e->n || !twin(ctx, e->machine)) {
			n = apply_entry(e, g, readings_of(l, e), e->n);
		} else {
			n = with_twins(l, e, &buf, &cap);
			if (n >= 0)
				n = apply_entry(e, g, buf, (size_t)n);
		}
		if (n < 0) {
			free(buf);
			return -ENOMEM;
		}
		rejected += n;
	}
	free(buf);
	return rejected;
}

static void reset_entry(const struct snap_list *l, const struct snap_entry *e,
			struct btr_clock_graph *g)
{
	size_t k;

	if (!e->accepted)
		return;
	for (k = 0; k < e->n; k++) {
		const struct btr_clock_reading *r = &l->readings[e->first + k];

		if (r->incremental)
			btr_clock_graph_reset_incremental(g, r->key, r->ts);
	}
}

void snap_list_rewind(struct snap_list *l, struct btr_clock_graph *g)
{
	size_t i;

	for (i = l->n; i-- > 0;)
		reset_entry(l, &l->e[i], g);
	l->cursor = 0;
}

void snap_list_replay(struct snap_list *l, struct btr_clock_graph *g,
		      uint64_t packet)
{
	while (l->cursor < l->n && l->e[l->cursor].packet <= packet)
		reset_entry(l, &l->e[l->cursor++], g);
}

/* Calls fn for each Clock of a snapshot payload with its id, timestamp,
 * unit and flag; stops when fn returns true. */
static bool each_clock(const uint8_t *p, size_t n,
		       bool (*fn)(void *ctx, uint32_t id,
				  const struct btr_clock_reading *r),
		       void *ctx)
{
	struct wire_reader rd;
	struct wire_field f;

	wire_reader_init(&rd, p, n);
	while (wire_next(&rd, &f) > 0) {
		struct btr_clock_reading r = { 0 };
		uint32_t id;

		if (f.num == SNAP_CLOCKS && f.type == WIRE_LEN &&
		    clock_read(&f, &r, &id) && fn(ctx, id, &r))
			return true;
	}
	return false;
}

struct declared {
	bool boot, trace_file;
};

static bool note_declared(void *ctx, uint32_t id,
			  const struct btr_clock_reading *r)
{
	struct declared *d = ctx;

	(void)r;
	d->boot |= id == BTR_CLOCK_BOOTTIME;
	d->trace_file |= id == BTR_CLOCK_TRACE_FILE;
	return false;
}

bool snap_declared_clock(const uint8_t *p, size_t n, uint32_t *clock)
{
	struct declared d = { 0 };
	struct wire_reader rd;
	struct wire_field f;
	bool has_primary = false;

	wire_reader_init(&rd, p, n);
	while (wire_next(&rd, &f) > 0) {
		if (f.num == SNAP_PRIMARY_TRACE_CLOCK &&
		    f.type == WIRE_VARINT && f.val) {
			has_primary = true;
			*clock = (uint32_t)f.val;
		}
	}
	if (has_primary)
		return true;
	each_clock(p, n, note_declared, &d);
	if (d.boot && !d.trace_file) {
		*clock = BTR_CLOCK_BOOTTIME;
		return true;
	}
	return false;
}

struct find_clock {
	uint32_t id;
	uint64_t value;
};

static bool match_clock(void *ctx, uint32_t id,
			const struct btr_clock_reading *r)
{
	struct find_clock *fc = ctx;

	if (id != fc->id || r->incremental || r->unit_ns != 1)
		return false;
	fc->value = r->ts;
	return true;
}

bool snap_clock_value(const uint8_t *p, size_t n, uint32_t clock_id,
			  uint64_t *value)
{
	struct find_clock fc = { clock_id, 0 };

	if (!each_clock(p, n, match_clock, &fc))
		return false;
	*value = fc.value;
	return true;
}
