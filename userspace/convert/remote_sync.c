/* RemoteClockSync round trips into clock edges (see remote_sync.h). */
#include "convert/remote_sync.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "convert/snapshots.h"
#include "util/wire.h"

enum { RCS_SYNCED = 1, SC_CLIENT = 2, SC_HOST = 3 };

/* Client BOOTTIME readings this far apart are no round trip. */
#define ROUND_TRIP_MAX_NS (30ull * 1000000000ull)

void remote_sync_free(struct remote_sync *rs)
{
	free(rs->m);
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

/* The reading of `clock` in the current message, added when new. */
static struct rs_reading *reading(struct remote_sync *rs, uint32_t clock)
{
	struct rs_message *m = &rs->m[rs->n - 1];
	size_t i;

	for (i = m->first; i < m->first + m->n; i++)
		if (rs->r[i].clock == clock)
			return &rs->r[i];
	if (m->n == SNAPSHOT_MAX_CLOCKS ||
	    grow_array((void **)&rs->r, &rs->rcap, rs->nr + 1, sizeof(*rs->r),
		       16))
		return NULL;
	rs->r[rs->nr] = (struct rs_reading){ .clock = clock };
	m->n++;
	return &rs->r[rs->nr++];
}

/* The absolute, unit-1 readings of a ClockSnapshot payload into the
 * current message, on the host side or not. */
static int read_side(struct remote_sync *rs, const struct wire_field *s,
		     bool host)
{
	struct wire_reader rd, rc;
	struct wire_field f, g;

	wire_reader_init(&rd, s->data, (size_t)s->val);
	while (wire_next(&rd, &f) > 0) {
		uint64_t id = 0, ts = 0, unit = 1, inc = 0;
		struct rs_reading *r;

		if (f.num != SNAP_CLOCKS || f.type != WIRE_LEN)
			continue;
		wire_reader_init(&rc, f.data, (size_t)f.val);
		while (wire_next(&rc, &g) > 0) {
			if (g.type != WIRE_VARINT)
				continue;
			if (g.num == SNAP_CLOCK_ID)
				id = g.val;
			else if (g.num == SNAP_CLOCK_TIMESTAMP)
				ts = g.val;
			else if (g.num == SNAP_CLOCK_UNIT_MULTIPLIER_NS)
				unit = g.val ? g.val : 1;
			else if (g.num == SNAP_CLOCK_IS_INCREMENTAL)
				inc = g.val;
		}
		if (!id || id > BTR_CLOCK_BUILTIN_MAX || unit != 1 || inc)
			continue; /* builtin absolute clocks only */
		r = reading(rs, (uint32_t)id);
		if (!r)
			return -ENOMEM;
		*(host ? &r->host : &r->client) = ts;
	}
	return 0;
}

/* One SyncedClocks message. */
static int add_message(struct remote_sync *rs, uint32_t slot,
		       const struct wire_field *sc,
		       int (*client)(void *, const uint8_t *, size_t),
		       void *ctx)
{
	struct wire_reader rd;
	struct wire_field f;
	int err;

	if (grow_array((void **)&rs->m, &rs->cap, rs->n + 1, sizeof(*rs->m),
		       8))
		return -ENOMEM;
	rs->m[rs->n++] = (struct rs_message){ slot, rs->nr, 0 };
	wire_reader_init(&rd, sc->data, (size_t)sc->val);
	while (wire_next(&rd, &f) > 0) {
		if ((f.num != SC_CLIENT && f.num != SC_HOST) ||
		    f.type != WIRE_LEN)
			continue;
		err = read_side(rs, &f, f.num == SC_HOST);
		if (!err && f.num == SC_CLIENT)
			err = client(ctx, f.data, (size_t)f.val);
		if (err)
			return err;
	}
	return 0;
}

int remote_sync_add(struct remote_sync *rs, uint32_t slot, const uint8_t *p,
		    size_t n, int (*client)(void *ctx, const uint8_t *snap,
					    size_t len),
		    void *ctx, const char **why)
{
	struct wire_reader rd;
	struct wire_field f;
	int rc, err;

	wire_reader_init(&rd, p, n);
	while ((rc = wire_next(&rd, &f)) > 0) {
		if (f.num != RCS_SYNCED)
			continue;
		if (f.type != WIRE_LEN) {
			*why = "malformed remote_clock_sync";
			return -1;
		}
		err = add_message(rs, slot, &f, client, ctx);
		if (err)
			return err;
	}
	if (rc < 0)
		*why = "malformed remote_clock_sync";
	return rc < 0 ? -1 : 0;
}

static const struct rs_reading *find(const struct remote_sync *rs,
				     const struct rs_message *m,
				     uint32_t clock)
{
	size_t i;

	for (i = m->first; i < m->first + m->n; i++)
		if (rs->r[i].clock == clock)
			return &rs->r[i];
	return NULL;
}

/* False when both messages read the client's BOOTTIME 30 s or more
 * apart (two syncs, not one round trip). */
static bool round_trip(const struct remote_sync *rs,
		       const struct rs_message *a, const struct rs_message *b)
{
	const struct rs_reading *x = find(rs, a, BTR_CLOCK_BOOTTIME);
	const struct rs_reading *y = find(rs, b, BTR_CLOCK_BOOTTIME);
	uint64_t d;

	if (!x || !y || !x->client || !y->client)
		return true;
	d = x->client > y->client ? x->client - y->client :
				    y->client - x->client;
	return d < ROUND_TRIP_MAX_NS;
}

/* The offset of clock `clock` on slot's messages; false if no round trip
 * read it. *anchor: its last host reading. */
static bool clock_offset(const struct remote_sync *rs, uint32_t slot,
			 uint32_t clock, int64_t *offset, int64_t *anchor)
{
	const struct rs_message *prev = NULL;
	const struct rs_reading *a, *b;
	__int128 sum = 0;
	int64_t count = 0;
	bool anchored = false;
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const struct rs_message *m = &rs->m[i];

		if (m->slot != slot)
			continue;
		b = find(rs, m, clock);
		if (b && b->host) {
			*anchor = (int64_t)b->host;
			anchored = true;
		}
		a = prev ? find(rs, prev, clock) : NULL;
		if (a && b && a->client && a->host && b->client && b->host &&
		    round_trip(rs, prev, m)) {
			/* 128 bits: no overflow whatever the readings */
			__int128 c1 = a->client, c2 = b->client;
			__int128 h1 = a->host, h2 = b->host;

			sum += (c1 + c2) / 2 - h1;
			sum += c2 - (h1 + h2) / 2;
			count += 2;
		}
		prev = m;
	}
	if (!count || !anchored || sum / count > INT64_MAX ||
	    sum / count < INT64_MIN)
		return false;
	*offset = (int64_t)(sum / count);
	return true;
}

int remote_sync_edges(const struct remote_sync *rs,
		      int (*edge)(void *ctx, uint32_t slot, uint32_t clock,
				  int64_t host, int64_t client),
		      void *ctx)
{
	int64_t offset = 0, anchor = 0;
	size_t i, k, j;
	int err;

	/* each (slot, clock) once, in order of first appearance */
	for (i = 0; i < rs->n; i++) {
		const struct rs_message *m = &rs->m[i];

		for (k = m->first; k < m->first + m->n; k++) {
			uint32_t clock = rs->r[k].clock;
			bool seen = false;

			for (j = 0; j < i && !seen; j++)
				seen = rs->m[j].slot == m->slot &&
				       find(rs, &rs->m[j], clock);
			if (seen || !clock_offset(rs, m->slot, clock, &offset,
						  &anchor))
				continue;
			err = edge(ctx, m->slot, clock, anchor,
				   (int64_t)((uint64_t)anchor + (uint64_t)offset));
			if (err)
				return err;
		}
	}
	return 0;
}
