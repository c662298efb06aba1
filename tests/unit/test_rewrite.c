/* Unit tests of the wire-level packet rewriting of `sync`
 * (userspace/convert/rewrite.c, bundle_rewrite.c): unknown fields survive
 * byte for byte, the timestamp is converted and its clock id dropped,
 * TracePacketDefaults lose their clock and steer the next packets of their
 * sequence (until the incremental state is cleared), compact_sched arrays
 * are re-encoded as one packed field each, events that cannot be converted
 * are dropped from every parallel array, bundle clocks (MONO_RAW, GLOBAL
 * pairs, unknown), snapshots declare the trace clock, sort keys, and
 * malformed input is refused. */
#include "trace/packet_info.h"
#include "convert/bundle_rewrite.h"
#include "convert/snapshots.h"
#include "clock/timeline.h"
#include "util/wire.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

#define BOOT BTR_CLOCK_BOOTTIME
#define MONO BTR_CLOCK_MONOTONIC
#define RAW BTR_CLOCK_MONOTONIC_RAW
#define REAL BTR_CLOCK_REALTIME

static struct btr_clock_key key(uint32_t id)
{
	return (struct btr_clock_key){ id, 0, 0, 0 };
}

/* A timeline on `trace_clock` with one snapshot {BOOT: boot, MONO: mono,
 * RAW: boot + 5000}. */
static void setup(struct timeline *tl, struct sync_stats *st,
		  uint32_t trace_clock, uint64_t boot, uint64_t mono)
{
	struct btr_clock_reading r[3] = {
		{ key(BOOT), boot, 1, false },
		{ key(MONO), mono, 1, false },
		{ key(RAW), boot + 5000, 1, false },
	};

	CHECK(timeline_init(tl) == 0);
	timeline_set_trace_clock(tl, trace_clock);
	CHECK(btr_clock_graph_add_snapshot(tl->graph, r, 3) == 0);
	memset(st, 0, sizeof(*st));
	tl->stats = st;
}

/* What each test works on: a timeline (setup()) and a rewriter of an input
 * whose clocks are in scope (NULL: file 0, machine 0). */
struct fx {
	struct timeline tl;
	struct sync_stats st;
	struct rewrite rw;
};

static void fx_init(struct fx *x, uint32_t trace_clock, uint64_t boot,
		    uint64_t mono, const struct clock_scope *scope)
{
	setup(&x->tl, &x->st, trace_clock, boot, mono);
	rewrite_init(&x->rw, &(struct rewrite_params){
				     .tl = &x->tl,
				     .scope = scope ? *scope
						    : (struct clock_scope){ 0, 0 },
				     .default_clock = BOOT,
			     });
}

static void fx_free(struct fx *x)
{
	rewrite_free(&x->rw);
	timeline_free(&x->tl);
}

static bool same_bytes(const uint8_t *a, size_t na, const struct wbuf *b)
{
	return na == b->len && (na == 0 || memcmp(a, b->p, na) == 0);
}

/* Rewrites pkt; returns the result code. */
static int rewrite(struct rewrite *rw, const struct wbuf *pkt,
		   struct rewritten *res)
{
	struct packet_info info;
	const char *why = NULL;

	if (packet_info_read(pkt->p, pkt->len, &info, &why))
		return -100;
	return rewrite_packet(rw, pkt->p, pkt->len, &info, res, &why);
}

/* Unknown fields of every wire type, in odd places, come out unchanged;
 * timestamp converted in place, timestamp_clock_id gone. */
static void test_unknown_fields_kept(void)
{
	struct wbuf in = { 0 }, want = { 0 };
	struct fx x;
	struct rewritten res;
	const uint8_t fixed[12] = { 0x0d, 1, 2, 3, 4, 0x11, 9, 8, 7, 6, 5, 4 };

	fx_init(&x, BOOT, 10000, 3000, NULL); /* MONO + 7000 = BOOT */
	/* in: 1000:"abc", fixed32 field 1, fixed64 field 2 (unknown at top
	 * level? field 1 and 2 are known: use 1001, 1002), ts, clock,
	 * seq, varint 2000, an unknown message 1003 */
	wbuf_field_bytes(&in, 1000, "abc", 3);
	wbuf_tag(&in, 1001, WIRE_I32);
	wbuf_put(&in, fixed + 1, 4);
	wbuf_tag(&in, 1002, WIRE_I64);
	wbuf_put(&in, fixed + 6, 6);
	wbuf_put(&in, "\x01\x02", 2);
	wbuf_field_varint(&in, 8, 4000);
	wbuf_field_varint(&in, 58, MONO);
	wbuf_field_varint(&in, 10, 7);
	wbuf_field_varint(&in, 2000, UINT64_MAX);
	wbuf_field_bytes(&in, 1003, "\x08\x01\x12\x00", 4);

	wbuf_field_bytes(&want, 1000, "abc", 3);
	wbuf_tag(&want, 1001, WIRE_I32);
	wbuf_put(&want, fixed + 1, 4);
	wbuf_tag(&want, 1002, WIRE_I64);
	wbuf_put(&want, fixed + 6, 6);
	wbuf_put(&want, "\x01\x02", 2);
	wbuf_field_varint(&want, 8, 11000);
	wbuf_field_varint(&want, 10, 7);
	wbuf_field_varint(&want, 2000, UINT64_MAX);
	wbuf_field_bytes(&want, 1003, "\x08\x01\x12\x00", 4);

	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(!res.dropped);
	CHECK(same_bytes(res.data, res.len, &want));
	CHECK_EQ_I64(res.key, 11000);
	CHECK_EQ_I64(x.st.converted, 1);

	/* A packet with nothing to change is passed as it is. */
	in.len = 0;
	wbuf_field_bytes(&in, 1000, "xyz", 3);
	wbuf_field_varint(&in, 10, 7);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.data == in.p && res.len == in.len);
	CHECK_EQ_I64(res.key, 11000); /* latest time seen */
	fx_free(&x);
	wbuf_free(&in);
	wbuf_free(&want);
}

/* The sort key of {timestamp: ts, timestamp_clock_id: clock (0: none),
 * sequence: seq, varint field flag = 1 (0: none)} after rewriting. */
static int64_t key_of(struct rewrite *rw, uint64_t ts, uint32_t clock,
		      uint32_t seq, uint32_t flag)
{
	struct wbuf in = { 0 };
	struct rewritten res;
	int64_t key;

	wbuf_field_varint(&in, 8, ts);
	if (clock)
		wbuf_field_varint(&in, 58, clock);
	if (seq)
		wbuf_field_varint(&in, 10, seq);
	if (flag)
		wbuf_field_varint(&in, flag, 1);
	key = rewrite(rw, &in, &res) == 0 ? res.key : INT64_MIN;
	wbuf_free(&in);
	return key;
}

/* TracePacketDefaults{timestamp_clock_id: clock (0: none)} on seq. */
static void defaults_packet(struct wbuf *in, uint32_t clock, uint32_t seq)
{
	size_t m;

	in->len = 0;
	m = wbuf_begin_len(in, 59);
	if (clock)
		wbuf_field_varint(in, 58, clock);
	wbuf_end_len(in, m);
	if (seq)
		wbuf_field_varint(in, 10, seq);
}

/* Defaults: the clock goes, the other default fields stay; later packets
 * of the sequence use the clock; a clear forgets it. */
static void test_defaults(void)
{
	struct wbuf in = { 0 }, want = { 0 };
	struct fx x;
	struct rewritten res;
	size_t m;

	fx_init(&x, BOOT, 10000, 3000, NULL);
	m = wbuf_begin_len(&in, 59);
	wbuf_field_bytes(&in, 1000, "track", 5);
	wbuf_field_varint(&in, 58, MONO);
	wbuf_field_varint(&in, 1001, 5);
	wbuf_end_len(&in, m);
	wbuf_field_varint(&in, 10, 3);
	wbuf_field_varint(&in, 13, 1);

	m = wbuf_begin_len(&want, 59);
	wbuf_field_bytes(&want, 1000, "track", 5);
	wbuf_field_varint(&want, 1001, 5);
	wbuf_end_len(&want, m);
	wbuf_field_varint(&want, 10, 3);
	wbuf_field_varint(&want, 13, 1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(same_bytes(res.data, res.len, &want));

	/* seq 3 at 100 is MONOTONIC: 7100; seq 4 has no default: BOOT */
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 3, 0), 7100);
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 4, 0), 100);
	/* an explicit clock id wins over the default */
	CHECK_EQ_I64(key_of(&x.rw, 100, BOOT, 3, 0), 100);
	/* the deprecated cleared bool starts a generation without defaults */
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 3, 41), 100);
	/* defaults without a clock remove the clock */
	defaults_packet(&in, MONO, 5);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.len == 5 && !memcmp(res.data, "\xda\x03\x00\x50\x05", 5));
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 5, 0), 7100);
	defaults_packet(&in, 0, 5);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 5, 0), 100);
	/* defaults on sequence 0 are ignored */
	defaults_packet(&in, MONO, 0);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 0, 0), 100);
	fx_free(&x);
	wbuf_free(&in);
	wbuf_free(&want);
}

/* Sort keys of packets without time: the latest time seen, or, for one
 * carrying incremental state, the latest time of its own sequence. */
static void test_untimed_keys(void)
{
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;

	fx_init(&x, BOOT, 10000, 3000, NULL);
	/* nothing seen yet: first */
	wbuf_field_bytes(&in, 33, "cfg", 3);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(res.key, INT64_MIN);
	CHECK_EQ_I64(key_of(&x.rw, 100, 0, 3, 0), 100);
	CHECK_EQ_I64(key_of(&x.rw, 500, 0, 4, 0), 500);
	/* interned data on sequence 3: after 3's 100, before 4's 500 */
	in.len = 0;
	wbuf_field_bytes(&in, 12, "\x0a\x00", 2);
	wbuf_field_varint(&in, 10, 3);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(res.key, 100);
	/* a clear on a sequence without time yet: first */
	in.len = 0;
	wbuf_field_varint(&in, 13, 1);
	wbuf_field_varint(&in, 10, 9);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(res.key, INT64_MIN);
	/* anything else: the latest time of all */
	in.len = 0;
	wbuf_field_bytes(&in, 35, "stats", 5);
	wbuf_field_varint(&in, 10, 3);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(res.key, 500);
	fx_free(&x);
	wbuf_free(&in);
}

/* A compact_sched payload with the given absolute switch and waking times
 * (next_pid 100+i, waking pid 200+i), the parallel arrays after an unknown
 * field. */
static void put_compact(struct wbuf *b, const uint64_t *sw, size_t nsw,
			const uint64_t *wk, size_t nwk)
{
	uint64_t d[16], pid[16], zero[16] = { 0 };
	size_t i, m = wbuf_begin_len(b, 4);

	wbuf_field_bytes(b, 5, "comm", 4);
	for (i = 0; i < nsw; i++) {
		d[i] = sw[i] - (i ? sw[i - 1] : 0);
		pid[i] = 100 + i;
	}
	wbuf_field_packed(b, 1, d, nsw);
	wbuf_field_packed(b, 2, zero, nsw);
	wbuf_field_packed(b, 3, pid, nsw);
	wbuf_field_bytes(b, 900, "?", 1); /* unknown, between arrays */
	wbuf_field_packed(b, 4, zero, nsw);
	wbuf_field_packed(b, 6, zero, nsw);
	for (i = 0; i < nwk; i++) {
		d[i] = wk[i] - (i ? wk[i - 1] : 0);
		pid[i] = 200 + i;
	}
	wbuf_field_packed(b, 7, d, nwk);
	wbuf_field_packed(b, 8, pid, nwk);
	wbuf_field_packed(b, 9, zero, nwk);
	wbuf_field_packed(b, 10, zero, nwk);
	wbuf_field_packed(b, 11, zero, nwk);
	wbuf_field_packed(b, 12, zero, nwk);
	wbuf_end_len(b, m);
}

/* The values of field num inside the compact_sched of a packet; the
 * count of LEN occurrences in *nfields. */
static size_t compact_array(const uint8_t *pkt, size_t len, uint32_t num,
			    uint64_t *v, int *nfields)
{
	struct wire_reader r, rb, rc;
	struct wire_field f, g, h;
	size_t n = 0, cap = 0;
	uint64_t *vals = NULL;

	*nfields = 0;
	wire_reader_init(&r, pkt, len);
	while (wire_next(&r, &f) > 0) {
		if (f.num != 1)
			continue;
		wire_reader_init(&rb, f.data, f.val);
		while (wire_next(&rb, &g) > 0) {
			if (g.num != 4)
				continue;
			wire_reader_init(&rc, g.data, g.val);
			while (wire_next(&rc, &h) > 0) {
				if (h.num != num)
					continue;
				(*nfields)++;
				wire_append_varints(&h, &vals, &n, &cap);
			}
		}
	}
	if (n)
		memcpy(v, vals, n * sizeof(*v));
	free(vals);
	return n;
}

static void bundle_packet(struct wbuf *b, const uint64_t *sw, size_t nsw,
			  const uint64_t *wk, size_t nwk, uint64_t prev_end,
			  int fclock)
{
	size_t m;

	b->len = 0;
	m = wbuf_begin_len(b, 1);
	wbuf_field_varint(b, 1, 0);
	put_compact(b, sw, nsw, wk, nwk);
	if (fclock >= 0)
		wbuf_field_varint(b, 5, (uint64_t)fclock);
	wbuf_field_varint(b, 10, prev_end);
	wbuf_end_len(b, m);
	wbuf_field_varint(b, 10, 2);
}

/* BOOTTIME events onto MONOTONIC: every time moves, arrays stay whole. */
static void test_compact_converted(void)
{
	const uint64_t sw[3] = { 10000, 10010, 10500 }, wk[2] = { 10005, 10600 };
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	uint64_t v[16];
	int nf;

	fx_init(&x, MONO, 10000, 3000, NULL);
	bundle_packet(&in, sw, 3, wk, 2, 9000, -1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(!res.dropped);
	CHECK_EQ_I64(res.key, 3000);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 3);
	CHECK_EQ_I64(nf, 1);
	CHECK(v[0] == 3000 && v[1] == 10 && v[2] == 490);
	CHECK_EQ_I64(compact_array(res.data, res.len, 7, v, &nf), 2);
	CHECK(nf == 1 && v[0] == 3005 && v[1] == 595);
	CHECK_EQ_I64(compact_array(res.data, res.len, 3, v, &nf), 3);
	CHECK(nf == 1 && v[0] == 100 && v[2] == 102);
	compact_array(res.data, res.len, 900, v, &nf);
	CHECK_EQ_I64(nf, 1); /* the unknown field is still there */
	CHECK_EQ_I64(x.st.converted, 6); /* 5 events and the end time */
	/* the same bundle on BOOTTIME comes out byte for byte */
	timeline_set_trace_clock(&x.tl, BOOT);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(same_bytes(res.data, res.len, &in));
	fx_free(&x);
	wbuf_free(&in);
}

/* Events before the MONOTONIC origin convert to negative times: they go,
 * with their entries in every parallel array; the others stay. */
static void test_compact_drops(void)
{
	const uint64_t sw[4] = { 500, 1500, 1600, 2000 }, wk[2] = { 800, 1700 };
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	uint64_t v[16];
	int nf, f;

	fx_init(&x, MONO, 1000, 100, NULL); /* MONO = BOOT - 900 */
	bundle_packet(&in, sw, 4, wk, 2, 700, -1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(!res.dropped);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 3);
	CHECK(v[0] == 600 && v[1] == 100 && v[2] == 400);
	CHECK_EQ_I64(compact_array(res.data, res.len, 3, v, &nf), 3);
	CHECK(v[0] == 101 && v[1] == 102 && v[2] == 103);
	for (f = 2; f <= 6; f++)
		if (f != 5)
			CHECK_EQ_I64(compact_array(res.data, res.len,
						   (uint32_t)f, v, &nf), 3);
	CHECK_EQ_I64(compact_array(res.data, res.len, 7, v, &nf), 1);
	CHECK_EQ_I64(v[0], 800);
	CHECK_EQ_I64(compact_array(res.data, res.len, 8, v, &nf), 1);
	CHECK_EQ_I64(v[0], 201);
	for (f = 9; f <= 12; f++)
		CHECK_EQ_I64(compact_array(res.data, res.len, (uint32_t)f, v,
					   &nf), 1);
	compact_array(res.data, res.len, 5, v, &nf);
	CHECK_EQ_I64(nf, 1); /* intern_table kept */
	CHECK_EQ_I64(x.st.events_dropped, 2);
	CHECK_EQ_I64(x.st.fields_dropped, 1); /* previous_bundle_end 700 */
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_NEGATIVE], 3);
	CHECK_EQ_I64(res.key, 600);
	/* every event dropped: an empty bundle is kept, sorted at the latest
	 * time seen */
	{
		const uint64_t early[2] = { 100, 200 };

		bundle_packet(&in, early, 2, NULL, 0, 0, -1);
		CHECK(rewrite(&x.rw, &in, &res) == 0);
		CHECK(!res.dropped);
		CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 0);
		CHECK_EQ_I64(nf, 0);
		CHECK_EQ_I64(res.key, 1100);
	}
	fx_free(&x);
	wbuf_free(&in);
}

/* On the trace clock itself (the identity path, no clock graph): the
 * bytes stay, the range and counts are the converting path's; a time past
 * INT64_MAX still goes (negative) with its entries; a timestamp array
 * written as single varints counts as well. */
static void test_compact_identity(void)
{
	const uint64_t sw[3] = { 10000, 10010, 10500 }, wk[2] = { 10005, 10600 };
	const uint64_t big[3] = { 10000, (1ull << 63) + 5, (1ull << 63) + 7 };
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	uint64_t v[16];
	size_t m, mc;
	int nf;

	fx_init(&x, BOOT, 10000, 3000, NULL);
	bundle_packet(&in, sw, 3, wk, 2, 9000, -1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(same_bytes(res.data, res.len, &in));
	CHECK_EQ_I64(res.key, 10000);
	CHECK_EQ_I64(x.st.converted, 6); /* 5 events and the end time */
	bundle_packet(&in, big, 3, NULL, 0, 0, -1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 1);
	CHECK_EQ_I64(v[0], 10000);
	CHECK_EQ_I64(compact_array(res.data, res.len, 3, v, &nf), 1);
	CHECK_EQ_I64(x.st.events_dropped, 2);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_NEGATIVE], 2);
	CHECK_EQ_I64(x.st.converted, 7);
	/* switch_timestamp as two single varints: 20000, then +5 */
	in.len = 0;
	m = wbuf_begin_len(&in, 1);
	wbuf_field_varint(&in, 1, 0);
	mc = wbuf_begin_len(&in, 4);
	wbuf_field_varint(&in, 1, 20000);
	wbuf_field_varint(&in, 1, 5);
	wbuf_end_len(&in, mc);
	wbuf_end_len(&in, m);
	wbuf_field_varint(&in, 10, 2);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(same_bytes(res.data, res.len, &in));
	CHECK_EQ_I64(res.key, 20000);
	CHECK_EQ_I64(x.st.converted, 9);
	fx_free(&x);
	wbuf_free(&in);
}

/* Regular events: converted one by one, dropped one by one. */
static void test_regular_events(void)
{
	struct wbuf in = { 0 }, ev = { 0 };
	struct fx x;
	struct rewritten res;
	struct wire_reader r, rb, re;
	struct wire_field f, g, h;
	uint64_t times[3] = { 500, 2000, 0 }, got[4];
	size_t n = 0, m, i;

	fx_init(&x, MONO, 1000, 100, NULL);
	m = wbuf_begin_len(&in, 1);
	wbuf_field_varint(&in, 1, 1);
	for (i = 0; i < 3; i++) {
		size_t e = wbuf_begin_len(&in, 2);

		if (i < 2)
			wbuf_field_varint(&in, 1, times[i]);
		wbuf_field_varint(&in, 2, 42);
		wbuf_field_bytes(&in, 999, "zz", 2);
		wbuf_end_len(&in, e);
	}
	wbuf_end_len(&in, m);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	wire_reader_init(&r, res.data, res.len);
	while (wire_next(&r, &f) > 0) {
		wire_reader_init(&rb, f.data, f.val);
		while (wire_next(&rb, &g) > 0) {
			if (g.num != 2)
				continue;
			got[n] = UINT64_MAX;
			wire_reader_init(&re, g.data, g.val);
			while (wire_next(&re, &h) > 0)
				if (h.num == 1)
					got[n] = h.val;
			n++;
		}
	}
	/* 500 -> -400 dropped; 2000 -> 1100; the event without time kept */
	CHECK_EQ_I64(n, 2);
	CHECK(got[0] == 1100 && got[1] == UINT64_MAX);
	CHECK_EQ_I64(x.st.events_dropped, 1);
	CHECK_EQ_I64(res.key, 1100);
	fx_free(&x);
	wbuf_free(&in);
	wbuf_free(&ev);
}

/* ftrace_clock MONO_RAW: events are MONOTONIC_RAW; the clock field goes. */
static void test_bundle_mono_raw(void)
{
	const uint64_t sw[1] = { 15000 };
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	struct packet_info info;
	const char *why;
	uint64_t v[4];
	int nf;

	fx_init(&x, BOOT, 10000, 3000, NULL); /* RAW = BOOT + 5000 */
	bundle_packet(&in, sw, 1, NULL, 0, 0, 4);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 1);
	CHECK_EQ_I64(v[0], 10000);
	CHECK(packet_info_read(res.data, res.len, &info, &why) == 0);
	CHECK(!memmem(info.bundle, info.bundle_len, "\x28\x04", 2));
	/* an unknown ftrace clock: every event goes, as unknown source */
	bundle_packet(&in, sw, 1, NULL, 0, 0, 1);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 0);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_UNKNOWN_SOURCE], 1);
	fx_free(&x);
	wbuf_free(&in);
}

/* ftrace_clock GLOBAL: the bundle's pair becomes a snapshot of the
 * sequence's clock 64; events convert through it. */
static void test_bundle_global_clock(void)
{
	const uint64_t sw[2] = { 50, 70 };
	struct snap_list l = { 0 };
	struct clock_scope scope = { 0, 0 };
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	struct packet_info info;
	const char *why;
	int64_t fts = 0, bts = 0;
	uint64_t v[4];
	size_t m;
	int nf;

	fx_init(&x, BOOT, 10000, 3000, &scope);
	in.len = 0;
	m = wbuf_begin_len(&in, 1);
	wbuf_field_varint(&in, 1, 0);
	put_compact(&in, sw, 2, NULL, 0);
	wbuf_field_varint(&in, 5, 2);
	wbuf_field_varint(&in, 6, 100);
	wbuf_field_varint(&in, 7, 20100);
	wbuf_end_len(&in, m);
	wbuf_field_varint(&in, 10, 9);
	CHECK(packet_info_read(in.p, in.len, &info, &why) == 0);
	CHECK(bundle_ftrace_pair(info.bundle, info.bundle_len, &fts, &bts));
	CHECK(fts == 100 && bts == 20100);
	CHECK(snap_list_add_ftrace_pair(&l, &scope, 0, 9, fts, bts) == 0);
	CHECK(snap_list_add_ftrace_pair(&l, &scope, 1, 9, fts, bts) == 0);
	CHECK_EQ_I64(l.n, 1); /* a repeated pair is one snapshot */
	CHECK_EQ_I64(snap_list_apply(&l, x.tl.graph), 0);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 2);
	CHECK(v[0] == 20050 && v[1] == 20);
	CHECK(packet_info_read(res.data, res.len, &info, &why) == 0);
	CHECK(!bundle_ftrace_pair(info.bundle, info.bundle_len, &fts, &bts));
	/* the same clock on another sequence is another clock */
	in.p[in.len - 1] = 8;
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK_EQ_I64(compact_array(res.data, res.len, 1, v, &nf), 0);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_UNKNOWN_SOURCE], 2);
	snap_list_free(&l);
	fx_free(&x);
	wbuf_free(&in);
}

/* A snapshot declares the trace clock of the output. */
static void test_snapshot_primary(void)
{
	struct wbuf in = { 0 }, snap = { 0 };
	struct fx x;
	struct rewritten res;
	struct packet_info info;
	const char *why;
	uint32_t declared = 0;
	size_t m;

	fx_init(&x, BOOT, 10000, 3000, NULL);
	m = wbuf_begin_len(&in, 6);
	wbuf_put(&in, "\x0a\x04\x08\x06\x10\x05", 6); /* BOOT: 5 */
	wbuf_put(&in, "\x0a\x04\x08\x03\x10\x07", 6); /* MONO: 7 */
	wbuf_end_len(&in, m);
	wbuf_field_varint(&in, 58, 6);
	/* BOOTTIME declared implicitly: kept, only the clock id goes */
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.len == 14 && !memcmp(res.data, in.p, 14));
	CHECK_EQ_I64(res.key, 5);
	/* onto MONOTONIC: primary_trace_clock says so */
	timeline_set_trace_clock(&x.tl, MONO);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(packet_info_read(res.data, res.len, &info, &why) == 0);
	CHECK(snap_declared_clock(info.snapshot, info.snapshot_len,
				      &declared));
	CHECK_EQ_I64(declared, MONO);
	CHECK_EQ_I64(res.key, 7);
	CHECK(memmem(info.snapshot, info.snapshot_len,
		      "\x0a\x04\x08\x06\x10\x05\x0a\x04\x08\x03\x10\x07", 12));
	fx_free(&x);
	wbuf_free(&in);
	wbuf_free(&snap);
}

/* Packet times that cannot be converted drop the packet, counted. */
static void test_packet_drops(void)
{
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;

	fx_init(&x, MONO, 1000, 100, NULL);
	wbuf_field_varint(&in, 8, 10);
	wbuf_field_varint(&in, 58, 200); /* never in a snapshot */
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.dropped);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_UNKNOWN_SOURCE], 1);
	in.len = 0;
	wbuf_field_varint(&in, 8, 10); /* BOOT 10 -> MONO -890 */
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.dropped);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_NEGATIVE], 1);
	in.len = 0;
	wbuf_field_varint(&in, 8, 10);
	wbuf_field_varint(&in, 58, 70); /* sequence-scoped on sequence 0 */
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.dropped);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_UNKNOWN_SOURCE], 2);
	in.len = 0;
	wbuf_field_varint(&in, 8, UINT64_MAX); /* -1 as int64 */
	wbuf_field_varint(&in, 58, MONO);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.dropped);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_NEGATIVE], 2);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_PACKET_LOSS], 4);
	/* onto a trace clock no snapshot has */
	timeline_set_trace_clock(&x.tl, REAL);
	in.len = 0;
	wbuf_field_varint(&in, 8, 5000);
	CHECK(rewrite(&x.rw, &in, &res) == 0);
	CHECK(res.dropped);
	CHECK_EQ_I64(x.st.stat[SYNC_STAT_UNKNOWN_TARGET], 1);
	fx_free(&x);
	wbuf_free(&in);
}

/* Malformed where we rewrite: refused with a reason. */
static void test_malformed(void)
{
	struct wbuf in = { 0 };
	struct fx x;
	struct rewritten res;
	struct packet_info info;
	const char *why = NULL;
	size_t m;

	fx_init(&x, BOOT, 1000, 100, NULL);
	wbuf_field_bytes(&in, 8, "x", 1); /* timestamp as bytes */
	CHECK(packet_info_read(in.p, in.len, &info, &why) == -1);
	CHECK(why && strstr(why, "varint"));
	in.len = 0;
	m = wbuf_begin_len(&in, 1);
	wbuf_field_bytes(&in, 4, "\x0a\x02\x80\x80", 4); /* broken varints */
	wbuf_end_len(&in, m);
	why = NULL;
	CHECK(packet_info_read(in.p, in.len, &info, &why) == 0);
	CHECK_EQ_I64(rewrite_packet(&x.rw, in.p, in.len, &info, &res, &why), -1);
	CHECK(why && strstr(why, "compact_sched"));
	in.len = 0;
	m = wbuf_begin_len(&in, 1);
	wbuf_field_varint(&in, 2, 5); /* an event that is a varint */
	wbuf_end_len(&in, m);
	why = NULL;
	CHECK(packet_info_read(in.p, in.len, &info, &why) == 0);
	CHECK_EQ_I64(rewrite_packet(&x.rw, in.p, in.len, &info, &res, &why), -1);
	CHECK(why != NULL);
	in.len = 0;
	wbuf_put(&in, "\x08", 1); /* cut short */
	CHECK(packet_info_read(in.p, in.len, &info, &why) == -1);
	fx_free(&x);
	wbuf_free(&in);
}

/* The wire helpers themselves: varint limits, nested lengths. */
static void test_wire(void)
{
	struct wbuf b = { 0 };
	struct wire_reader r;
	struct wire_field f;
	uint64_t v = 0;
	size_t m, i;
	char big[300];

	uint8_t eleven[11];

	memset(eleven, 0xff, 10);
	eleven[10] = 1; /* longer than 10 bytes */
	CHECK_EQ_I64(wire_get_varint(eleven, eleven + 11, &v), 0);
	CHECK_EQ_I64(wire_get_varint(eleven, eleven + 5, &v), 0); /* cut */
	wbuf_varint(&b, UINT64_MAX);
	CHECK_EQ_I64(b.len, 10);
	CHECK_EQ_I64(wire_get_varint(b.p, b.p + b.len, &v), 10);
	CHECK(v == UINT64_MAX);
	b.p[9] = 2; /* over 64 bits */
	CHECK_EQ_I64(wire_get_varint(b.p, b.p + b.len, &v), 0);
	b.len = 0;
	memset(big, 'q', sizeof(big));
	m = wbuf_begin_len(&b, 3);
	wbuf_put(&b, big, sizeof(big)); /* length needs two bytes */
	wbuf_end_len(&b, m);
	CHECK_EQ_I64(b.len, 1 + 2 + sizeof(big));
	wire_reader_init(&r, b.p, b.len);
	CHECK(wire_next(&r, &f) == 1 && f.num == 3 && f.val == sizeof(big));
	CHECK(wire_next(&r, &f) == 0);
	for (i = 0; i < 3; i++) {
		static const char *const bad[3] = { "\x1b", "\x00", "\x12\x05" };

		wire_reader_init(&r, bad[i], i == 2 ? 2 : 1);
		CHECK(wire_next(&r, &f) == -1 && r.err);
	}
	wbuf_free(&b);
}

/* wire_read_varint3 against wire_get_varint: every value of up to 3
 * bytes and around the limits, followed by any bytes; a longer varint is
 * 0 (left to wire_get_varint). */
static void test_varint3(void)
{
	static const uint64_t edge[] = { 0, 1, 127, 128, 129, 16383, 16384,
					 16385, 2097150, 2097151, 2097152,
					 268435455, UINT64_MAX };
	uint8_t p[16];
	uint64_t v, w, i, bad = 0;
	size_t n, k;

	for (i = 0; i < 2097152 + 13; i++) {
		uint64_t x = i < 2097152 ? i : edge[i - 2097152];

		memset(p, (int)(i * 37), sizeof(p)); /* what follows */
		n = wire_put_varint(p, x);
		k = wire_read_varint3(p, &v);
		if (n <= 3)
			bad += k != n || v != x ||
			       wire_get_varint(p, p + n, &w) != n || w != v;
		else
			bad += k != 0;
	}
	CHECK_EQ_I64(bad, 0);
}

int main(void)
{
	RUN(test_varint3);
	RUN(test_unknown_fields_kept);
	RUN(test_defaults);
	RUN(test_untimed_keys);
	RUN(test_compact_converted);
	RUN(test_compact_drops);
	RUN(test_compact_identity);
	RUN(test_regular_events);
	RUN(test_bundle_mono_raw);
	RUN(test_bundle_global_clock);
	RUN(test_snapshot_primary);
	RUN(test_packet_drops);
	RUN(test_malformed);
	RUN(test_wire);
	return unit_finish();
}
