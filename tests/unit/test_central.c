/* Unit tests of the central buffer (buffer/central.c): packets go in
 * through central_sink(), come back through a collecting sink, and are
 * compared byte for byte with what went in; the BufferStats accounting is
 * checked against the rules (record = 16 + payload rounded up to 16, one
 * record per chunk slot). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "buffer/central.h"
#include "coll_sink.h"
#include "unit.h"

#define FRAG 4u    /* fragment header in a chunk */
#define REC(payload) (16u + (((payload) + 15u) & ~15u))

static const uint8_t DROPPED[3] = { 0xD0, 0x02, 0x41 }; /* field 42 = 65 */


static bool coll_equal(const struct coll *a, const struct coll *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->p[i].seq != b->p[i].seq || a->p[i].len != b->p[i].len ||
		    memcmp(a->p[i].buf, b->p[i].buf, a->p[i].len))
			return false;
	return true;
}

/* ---- packets: the first 4 bytes name the packet, the rest is a hash ---- */

static uint8_t pbyte(uint32_t seq, uint32_t idx, size_t j)
{
	uint32_t h = seq * 0x9E3779B1u ^ idx * 0x85EBCA6Bu ^
		     (uint32_t)j * 0xC2B2AE35u;

	h ^= h >> 15;
	h *= 0x2C1B3C6Du;
	h ^= h >> 12;
	return (uint8_t)h;
}

/* Fills buf with packet idx of seq (len >= 4 names it unambiguously). */
static void mkpkt(uint8_t *buf, uint32_t seq, uint32_t idx, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		buf[j] = pbyte(seq, idx, j);
	if (len >= 4) {
		buf[0] = (uint8_t)idx;
		buf[1] = (uint8_t)(idx >> 8);
		buf[2] = (uint8_t)(idx >> 16);
		buf[3] = (uint8_t)(seq | 0x80);
	}
}

static int put(struct central *c, uint32_t seq, uint32_t idx, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	int e;

	if (!b)
		abort();
	mkpkt(b, seq, idx, len);
	e = sink_write(central_sink(c), seq, b, len);
	free(b);
	return e;
}

/* 1: p is packet (seq, idx, len); 2: the same with previous_packet_dropped
 * appended; 0: neither. */
static int is_pkt(const struct pkt *p, uint32_t seq, uint32_t idx, size_t len)
{
	uint8_t *b;
	int r = 0;

	if (p->seq != seq || (p->len != len && p->len != len + 3))
		return 0;
	b = malloc(len ? len : 1);
	if (!b)
		abort();
	mkpkt(b, seq, idx, len);
	if (!memcmp(p->buf, b, len)) {
		if (p->len == len)
			r = 1;
		else if (!memcmp(p->buf + len, DROPPED, 3))
			r = 2;
	}
	free(b);
	return r;
}

static uint32_t xs_state;

static uint32_t rnd(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 17;
	xs_state ^= xs_state << 5;
	return xs_state;
}

/* ---- tests ---- */

static void test_new(void)
{
	struct central *c = central_new(1000, 128, FILL_RING);

	CHECK(c != NULL);
	if (c) {
		CHECK_EQ_I64(central_slots(c), 7);
		CHECK_EQ_I64(central_stats(c)->buffer_size, 7 * 128);
		CHECK_EQ_I64(central_unread_chunks(c), 0);
		central_free(c);
	}
	c = central_new(10, 128, FILL_DISCARD);
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ_I64(central_slots(c), 2);
		CHECK_EQ_I64(central_stats(c)->buffer_size, 256);
		central_free(c);
	}
	CHECK(central_new(4096, 8, FILL_RING) == NULL); /* no room for data */
	central_free(NULL);
}

/* Small packets, interleaved sequences: identical bytes, order kept. */
static void test_small_roundtrip(void)
{
	struct central *c = central_new(64 * 256, 256, FILL_RING);
	struct coll out;
	uint32_t i, n[4] = { 0 }, want[4] = { 0 };
	size_t k;
	bool ok = true;
	const struct central_stats *st;

	coll_init(&out);
	for (i = 0; i < 90; i++) {
		uint32_t seq = 1 + i % 3;

		CHECK_EQ_I64(put(c, seq, want[seq], 4 + (i * 37) % 200), 0);
		want[seq]++;
	}
	central_flush(c);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 90);
	for (k = 0; k < out.n; k++) {
		uint32_t seq = out.p[k].seq, idx;

		if (seq < 1 || seq > 3) {
			ok = false;
			break;
		}
		idx = n[seq]++;
		/* the length packet idx of seq was written with */
		ok &= is_pkt(&out.p[k], seq, idx,
			     4 + ((idx * 3 + seq - 1) * 37) % 200) == 1;
	}
	CHECK(ok);
	CHECK_EQ_I64(n[1], 30);
	CHECK_EQ_I64(n[2], 30);
	CHECK_EQ_I64(n[3], 30);
	st = central_stats(c);
	CHECK(st->chunks_written > 3);
	CHECK_EQ_I64(st->chunks_read, st->chunks_written);
	CHECK_EQ_I64(st->bytes_read, st->bytes_written);
	CHECK_EQ_I64(st->chunks_overwritten + st->chunks_discarded, 0);
	CHECK_EQ_I64(st->packets_lost, 0);
	CHECK_EQ_I64(st->readaheads_failed, 0);
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	coll_free(&out);
	central_free(c);
}

/* Packets several chunks long, between small ones, on two sequences. */
static void test_large_roundtrip(void)
{
	static const size_t lens[] = { 5000, 10, 128, 124, 125, 1000, 4,
				       3000, 252, 253, 7 };
	const size_t nl = sizeof(lens) / sizeof(lens[0]);
	struct central *c = central_new(1 << 20, 128, FILL_RING);
	struct coll out;
	size_t i, k2 = 0, k5 = 0, k;
	bool ok = true;

	coll_init(&out);
	for (i = 0; i < nl; i++) {
		CHECK_EQ_I64(put(c, 2, (uint32_t)i, lens[i]), 0);
		CHECK_EQ_I64(put(c, 5, (uint32_t)i, lens[nl - 1 - i]), 0);
	}
	central_flush(c);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 2 * nl);
	for (k = 0; k < out.n; k++) {
		if (out.p[k].seq == 2 && k2 < nl) {
			ok &= is_pkt(&out.p[k], 2, (uint32_t)k2, lens[k2]) == 1;
			k2++;
		} else if (out.p[k].seq == 5 && k5 < nl) {
			ok &= is_pkt(&out.p[k], 5, (uint32_t)k5,
				     lens[nl - 1 - k5]) == 1;
			k5++;
		} else {
			ok = false;
		}
	}
	CHECK(ok);
	CHECK_EQ_I64(k2, nl);
	CHECK_EQ_I64(k5, nl);
	/* a 5000-byte packet needs ceil(5000 / 124) chunks at least */
	CHECK(central_stats(c)->chunks_written >= 2 * (5000 + 123) / 124);
	CHECK_EQ_I64(central_stats(c)->readaheads_failed, 0);
	coll_free(&out);
	central_free(c);
}

/* Zero-length packets are packets too, even when the chunk is full. */
static void test_empty_packet(void)
{
	struct central *c = central_new(16 * 128, 128, FILL_RING);
	struct coll out;

	coll_init(&out);
	CHECK_EQ_I64(put(c, 2, 0, 124), 0); /* fills the chunk exactly */
	CHECK_EQ_I64(put(c, 2, 1, 0), 0);
	CHECK_EQ_I64(put(c, 2, 2, 10), 0);
	CHECK_EQ_I64(put(c, 2, 3, 0), 0);
	central_flush(c);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 4);
	if (out.n == 4) {
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 0, 124), 1);
		CHECK_EQ_I64(out.p[1].len, 0);
		CHECK_EQ_I64(is_pkt(&out.p[2], 2, 2, 10), 1);
		CHECK_EQ_I64(out.p[3].len, 0);
	}
	coll_free(&out);
	central_free(c);
}

/* Ring: 10 full chunks through 4 slots; exact accounting, newest survive,
 * the first survivor carries previous_packet_dropped = 65. */
static void test_ring_wrap_accounting(void)
{
	struct central *c = central_new(4 * 128, 128, FILL_RING);
	const struct central_stats *st = central_stats(c);
	struct coll out;
	uint32_t i;

	coll_init(&out);
	for (i = 0; i < 10; i++) /* 4 + 124 = one full chunk each */
		CHECK_EQ_I64(put(c, 2, i, 124), 0);
	/* the 10th is still staged */
	CHECK_EQ_I64(st->chunks_written, 9);
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 10);
	CHECK_EQ_I64(st->bytes_written, 10 * REC(128));
	CHECK_EQ_I64(st->write_wrap_count, 2);
	CHECK_EQ_I64(st->chunks_overwritten, 6);
	CHECK_EQ_I64(st->bytes_overwritten, 6 * REC(128));
	CHECK_EQ_I64(st->packets_lost, 6);
	CHECK_EQ_I64(central_seq_packets_lost(c, 2), 6);
	CHECK_EQ_I64(central_seq_packets_lost(c, 3), 0);
	CHECK_EQ_I64(central_seq_packets_lost(c, 1000), 0);
	CHECK_EQ_I64(st->chunks_discarded, 0);
	CHECK_EQ_I64(central_unread_chunks(c), 4);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 4);
	if (out.n == 4) {
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 6, 124), 2);
		CHECK_EQ_I64(out.p[0].len, 127);
		CHECK(!memcmp(out.p[0].buf + 124, "\xD0\x02\x41", 3));
		CHECK_EQ_I64(is_pkt(&out.p[1], 2, 7, 124), 1);
		CHECK_EQ_I64(is_pkt(&out.p[2], 2, 8, 124), 1);
		CHECK_EQ_I64(is_pkt(&out.p[3], 2, 9, 124), 1);
	}
	CHECK_EQ_I64(st->chunks_read, 4);
	CHECK_EQ_I64(st->bytes_read, 4 * REC(128));
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	/* Read chunks are reused with no loss accounting. */
	for (i = 10; i < 14; i++)
		CHECK_EQ_I64(put(c, 2, i, 124), 0);
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 14);
	CHECK_EQ_I64(st->chunks_overwritten, 6);
	CHECK_EQ_I64(st->bytes_overwritten, 6 * REC(128));
	CHECK_EQ_I64(st->write_wrap_count, 3);
	CHECK_EQ_I64(central_unread_chunks(c), 4);
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 4);
	if (out.n == 4) /* no gap: nothing unread was lost */
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 10, 124), 1);
	coll_free(&out);
	central_free(c);
}

/* Record sizes round the payload up to 16 bytes (flushed partial chunks). */
static void test_ring_record_rounding(void)
{
	struct central *c = central_new(2 * 64, 64, FILL_RING);
	const struct central_stats *st = central_stats(c);
	struct coll out;

	coll_init(&out);
	put(c, 3, 0, 10); /* payload 14 -> record 32 */
	central_flush(c);
	CHECK_EQ_I64(st->bytes_written, 32);
	put(c, 3, 1, 27); /* payload 31 -> 48 */
	central_flush(c);
	CHECK_EQ_I64(st->bytes_written, 32 + 48);
	CHECK_EQ_I64(st->write_wrap_count, 1);
	put(c, 3, 2, 28); /* payload 32 -> 48 */
	central_flush(c);
	CHECK_EQ_I64(st->chunks_overwritten, 1);
	CHECK_EQ_I64(st->bytes_overwritten, 32);
	put(c, 3, 3, 60); /* payload 64 -> 80 */
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 4);
	CHECK_EQ_I64(st->bytes_written, 32 + 48 + 48 + 80);
	CHECK_EQ_I64(st->chunks_overwritten, 2);
	CHECK_EQ_I64(st->bytes_overwritten, 32 + 48);
	CHECK_EQ_I64(st->write_wrap_count, 2);
	central_flush(c); /* nothing staged: no empty chunk */
	CHECK_EQ_I64(st->chunks_written, 4);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 2);
	if (out.n == 2) {
		CHECK_EQ_I64(is_pkt(&out.p[0], 3, 2, 28), 2);
		CHECK_EQ_I64(is_pkt(&out.p[1], 3, 3, 60), 1);
	}
	CHECK_EQ_I64(st->bytes_read, 48 + 80);
	CHECK_EQ_I64(st->chunks_read, 2);
	coll_free(&out);
	central_free(c);
}

/* Sets up: seq 2 loses the first two chunks of a 3-chunk packet P0; its
 * third chunk holds P0's tail then P1 (40 bytes). Seq 3 owns the rest. */
static struct central *lost_head_setup(void)
{
	struct central *c = central_new(4 * 128, 128, FILL_RING);
	uint32_t i;

	put(c, 2, 0, 300); /* 124 + 124 + 52 */
	put(c, 2, 1, 40);
	central_flush(c);
	for (i = 0; i < 3; i++)
		put(c, 3, i, 124);
	central_flush(c);
	return c;
}

static void check_lost_head_output(const struct coll *out)
{
	CHECK_EQ_I64(out->n, 4);
	if (out->n != 4)
		return;
	/* ring order: seq 2's surviving chunk is the oldest */
	CHECK_EQ_I64(is_pkt(&out->p[0], 2, 1, 40), 2);
	CHECK_EQ_I64(is_pkt(&out->p[1], 3, 0, 124), 1);
	CHECK_EQ_I64(is_pkt(&out->p[2], 3, 1, 124), 1);
	CHECK_EQ_I64(is_pkt(&out->p[3], 3, 2, 124), 1);
}

static void test_ring_lost_head(void)
{
	struct central *c = lost_head_setup();
	const struct central_stats *st = central_stats(c);
	struct coll out;

	coll_init(&out);
	CHECK_EQ_I64(st->chunks_written, 6);
	CHECK_EQ_I64(st->bytes_written, 5 * REC(128) + REC(56 + 44));
	CHECK_EQ_I64(st->chunks_overwritten, 2);
	CHECK_EQ_I64(st->bytes_overwritten, 2 * REC(128));
	CHECK_EQ_I64(st->write_wrap_count, 1);
	/* P0 is counted once, by the chunk it begins in */
	CHECK_EQ_I64(central_seq_packets_lost(c, 2), 1);
	CHECK_EQ_I64(central_seq_packets_lost(c, 3), 0);
	CHECK_EQ_I64(st->packets_lost, 1);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	check_lost_head_output(&out);
	CHECK_EQ_I64(st->readaheads_failed, 1);
	CHECK_EQ_I64(st->chunks_read, 4);
	CHECK_EQ_I64(st->bytes_read, 3 * REC(128) + REC(100));
	coll_free(&out);
	central_free(c);
}

/* Snapshots of the same buffer: same packets, no change to the stats or to
 * the consuming pass that follows. */
static void test_snapshot_lost_head(void)
{
	struct central *c = lost_head_setup();
	struct central_stats before = *central_stats(c);
	struct coll s1, s2, rd;

	coll_init(&s1);
	coll_init(&s2);
	coll_init(&rd);
	CHECK_EQ_I64(central_read(c, &s1.sink, false), 0);
	check_lost_head_output(&s1);
	CHECK(!memcmp(&before, central_stats(c), sizeof(before)));
	CHECK_EQ_I64(central_stats(c)->readaheads_failed, 0);
	CHECK_EQ_I64(central_unread_chunks(c), 4);
	CHECK_EQ_I64(central_read(c, &s2.sink, false), 0);
	CHECK(coll_equal(&s1, &s2));
	CHECK(!memcmp(&before, central_stats(c), sizeof(before)));
	CHECK_EQ_I64(central_read(c, &rd.sink, true), 0);
	CHECK(coll_equal(&s1, &rd));
	CHECK_EQ_I64(central_stats(c)->readaheads_failed, 1);
	CHECK_EQ_I64(central_stats(c)->chunks_read, 4);
	coll_free(&s1);
	coll_free(&s2);
	coll_free(&rd);
	central_free(c);
}

/* Discard: the 5th commit into 4 unread slots is refused and seals. */
static void test_discard(void)
{
	struct central *c = central_new(4 * 128, 128, FILL_DISCARD);
	const struct central_stats *st = central_stats(c);
	struct coll out;
	uint32_t i;

	coll_init(&out);
	for (i = 0; i < 6; i++)
		put(c, 2, i, 124);
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 4);
	CHECK_EQ_I64(st->bytes_written, 4 * REC(128));
	CHECK_EQ_I64(st->chunks_discarded, 2);
	CHECK_EQ_I64(st->chunks_overwritten, 0);
	CHECK_EQ_I64(st->bytes_overwritten, 0);
	CHECK_EQ_I64(st->write_wrap_count, 1);
	CHECK_EQ_I64(central_seq_packets_lost(c, 2), 2);
	CHECK_EQ_I64(st->packets_lost, 2);
	CHECK_EQ_I64(central_unread_chunks(c), 4);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 4);
	for (i = 0; i < out.n && i < 4; i++) /* the oldest, no loss flag */
		CHECK_EQ_I64(is_pkt(&out.p[i], 2, i, 124), 1);
	CHECK_EQ_I64(st->chunks_read, 4);
	/* Room again, but the buffer is sealed: everything is discarded. */
	put(c, 3, 0, 10);
	put(c, 2, 6, 10);
	central_flush(c);
	CHECK_EQ_I64(st->chunks_discarded, 4);
	CHECK_EQ_I64(st->chunks_written, 4);
	CHECK_EQ_I64(central_seq_packets_lost(c, 3), 1);
	CHECK_EQ_I64(central_seq_packets_lost(c, 2), 3);
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 0);
	coll_free(&out);
	central_free(c);
}

/* Discard keeps working while the reader keeps up (never full). */
static void test_discard_reader_keeps_up(void)
{
	struct central *c = central_new(2 * 128, 128, FILL_DISCARD);
	struct coll out;
	uint32_t i;
	bool ok = true;

	coll_init(&out);
	for (i = 0; i < 20; i++) {
		put(c, 2, i, 100);
		central_flush(c);
		coll_reset(&out);
		CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
		ok &= out.n == 1 && is_pkt(&out.p[0], 2, i, 100) == 1;
	}
	CHECK(ok);
	CHECK_EQ_I64(central_stats(c)->chunks_discarded, 0);
	CHECK_EQ_I64(central_stats(c)->chunks_written, 20);
	CHECK_EQ_I64(central_stats(c)->write_wrap_count, 10);
	coll_free(&out);
	central_free(c);
}

/* Discard with the tail of a packet refused: the head stays, but no torn
 * packet comes out. */
static void test_discard_torn_tail(void)
{
	struct central *c = central_new(2 * 128, 128, FILL_DISCARD);
	struct coll out;

	coll_init(&out);
	put(c, 2, 0, 124);
	put(c, 2, 1, 300); /* head fills slot 1, the rest is refused */
	central_flush(c);
	CHECK_EQ_I64(central_stats(c)->chunks_written, 2);
	CHECK_EQ_I64(central_stats(c)->chunks_discarded, 2);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 1);
	if (out.n >= 1)
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 0, 124), 1);
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, false), 0);
	CHECK_EQ_I64(out.n, 0);
	coll_free(&out);
	central_free(c);
}

/* Consuming passes: chunks marked read; later passes only return new
 * packets; a packet across the pass boundary is reassembled; snapshots
 * in between see the same. */
static void test_consume_passes(void)
{
	struct central *c = central_new(8 * 128, 128, FILL_RING);
	const struct central_stats *st = central_stats(c);
	struct central_stats before;
	struct coll out, s1, s2;

	coll_init(&out);
	coll_init(&s1);
	coll_init(&s2);
	put(c, 2, 0, 50);  /* A: 54 bytes staged */
	put(c, 2, 1, 300); /* B: 70 in chunk 0, 124 in chunk 1, 106 staged */
	CHECK_EQ_I64(st->chunks_written, 2);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 1);
	if (out.n >= 1)
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 0, 50), 1);
	CHECK_EQ_I64(st->chunks_read, 2);
	CHECK_EQ_I64(st->bytes_read, 2 * REC(128));
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	/* nothing committed since: snapshots and passes return nothing */
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, false), 0);
	CHECK_EQ_I64(out.n, 0);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 0);
	CHECK_EQ_I64(st->chunks_read, 2);
	/* the tail of B arrives: head consumed earlier, tail unread */
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 3);
	CHECK_EQ_I64(central_unread_chunks(c), 1);
	before = *st;
	CHECK_EQ_I64(central_read(c, &s1.sink, false), 0);
	CHECK_EQ_I64(s1.n, 1);
	if (s1.n >= 1)
		CHECK_EQ_I64(is_pkt(&s1.p[0], 2, 1, 300), 1);
	CHECK_EQ_I64(central_read(c, &s2.sink, false), 0);
	CHECK(coll_equal(&s1, &s2));
	CHECK(!memcmp(&before, st, sizeof(before)));
	CHECK_EQ_I64(central_unread_chunks(c), 1);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK(coll_equal(&s1, &out));
	CHECK_EQ_I64(st->chunks_read, 3);
	CHECK_EQ_I64(st->bytes_read, 2 * REC(128) + REC(110));
	/* a third pass: only what is new */
	put(c, 2, 2, 20);
	put(c, 4, 0, 30);
	central_flush(c);
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 2);
	if (out.n == 2) {
		CHECK_EQ_I64(is_pkt(&out.p[0], 2, 2, 20), 1);
		CHECK_EQ_I64(is_pkt(&out.p[1], 4, 0, 30), 1);
	}
	coll_reset(&out);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 0);
	coll_free(&out);
	coll_free(&s1);
	coll_free(&s2);
	central_free(c);
}

/* A packet whose head was consumed, then its tail overwritten before the
 * next pass: it is lost, and the next packet is flagged. */
static void test_consumed_head_tail_overwritten(void)
{
	struct central *c = central_new(2 * 128, 128, FILL_RING);
	struct coll out;

	coll_init(&out);
	put(c, 2, 0, 200); /* 124 committed, 76 staged */
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 0);
	put(c, 2, 1, 40);  /* staged: 80 + 44 = 124 */
	central_flush(c);  /* slot 1: tail of 0, packet 1 */
	put(c, 3, 0, 124);
	put(c, 3, 1, 124);
	central_flush(c);  /* slot 0 (read), then slot 1: overwritten */
	CHECK_EQ_I64(central_stats(c)->chunks_overwritten, 1);
	put(c, 2, 2, 10);
	central_flush(c);  /* overwrites seq 3's first chunk */
	CHECK_EQ_I64(central_stats(c)->chunks_overwritten, 2);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 2);
	if (out.n == 2) {
		CHECK_EQ_I64(is_pkt(&out.p[0], 3, 1, 124), 2);
		CHECK_EQ_I64(is_pkt(&out.p[1], 2, 2, 10), 2);
	}
	CHECK_EQ_I64(central_stats(c)->readaheads_failed, 0);
	coll_free(&out);
	central_free(c);
}

static void test_flush(void)
{
	struct central *c = central_new(8 * 256, 256, FILL_RING);
	const struct central_stats *st = central_stats(c);
	struct coll out;

	coll_init(&out);
	put(c, 1, 0, 20);
	put(c, 7, 0, 30);
	put(c, 1, 1, 21);
	CHECK_EQ_I64(st->chunks_written, 0);
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 0);
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 2);
	CHECK_EQ_I64(st->bytes_written, REC(24 + 25) + REC(34));
	CHECK_EQ_I64(central_unread_chunks(c), 2);
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(out.n, 3);
	if (out.n == 3) { /* sequences in id order, packets in write order */
		CHECK_EQ_I64(is_pkt(&out.p[0], 1, 0, 20), 1);
		CHECK_EQ_I64(is_pkt(&out.p[1], 1, 1, 21), 1);
		CHECK_EQ_I64(is_pkt(&out.p[2], 7, 0, 30), 1);
	}
	central_flush(c);
	CHECK_EQ_I64(st->chunks_written, 2);
	coll_free(&out);
	central_free(c);
}

static void test_under_pressure(void)
{
	struct central *c = central_new(4 * 128, 128, FILL_RING);
	struct coll out;

	coll_init(&out);
	CHECK(!central_under_pressure(0, 4));
	CHECK(!central_under_pressure(2, 4));
	CHECK(central_under_pressure(3, 4));
	CHECK(!central_under_pressure(2, 5));
	CHECK(central_under_pressure(3, 5));
	put(c, 2, 0, 10);
	central_flush(c);
	put(c, 2, 1, 10);
	central_flush(c);
	CHECK_EQ_I64(central_unread_chunks(c), 2);
	CHECK(!central_under_pressure(central_unread_chunks(c),
				      central_slots(c)));
	put(c, 2, 2, 10);
	central_flush(c);
	CHECK(central_under_pressure(central_unread_chunks(c),
				     central_slots(c)));
	put(c, 2, 3, 10);
	put(c, 2, 4, 200);
	central_flush(c);
	CHECK_EQ_I64(central_unread_chunks(c), 4); /* capped at the slots */
	CHECK_EQ_I64(central_read(c, &out.sink, true), 0);
	CHECK_EQ_I64(central_unread_chunks(c), 0);
	CHECK(!central_under_pressure(central_unread_chunks(c),
				      central_slots(c)));
	coll_free(&out);
	central_free(c);
}

static void test_sink_error(void)
{
	struct central *c = central_new(4 * 128, 128, FILL_RING);
	struct coll out;

	coll_init(&out);
	put(c, 2, 0, 10);
	central_flush(c);
	out.fail = -EIO;
	CHECK_EQ_I64(central_read(c, &out.sink, false), -EIO);
	CHECK_EQ_I64(central_read(c, &out.sink, true), -EIO);
	out.fail = -ENOSPC;
	put(c, 2, 1, 10);
	put(c, 3, 0, 10);
	central_flush(c);
	CHECK_EQ_I64(central_read(c, &out.sink, true), -ENOSPC);
	/* an error on a packet that carries the loss flag */
	central_free(c);
	c = lost_head_setup();
	out.fail = -EPIPE;
	CHECK_EQ_I64(central_read(c, &out.sink, false), -EPIPE);
	CHECK_EQ_I64(central_read(c, &out.sink, true), -EPIPE);
	coll_free(&out);
	central_free(c);
}

/* Random writes, flushes, passes and snapshots into a buffer that never
 * fills: every sequence comes back whole and in order. */
static void test_random_lossless(void)
{
	uint32_t seed;

	for (seed = 1; seed <= 5; seed++) {
		struct central *c = central_new(8u << 20, 64 + seed * 40,
						seed & 1 ? FILL_RING
							 : FILL_DISCARD);
		const struct central_stats *st = central_stats(c);
		struct coll out, s1, s2, tmp;
		uint32_t written[5] = { 0 }, got[5] = { 0 };
		size_t *lens[5], i, k;
		bool ok = true, snap_ok = true;

		xs_state = seed * 2654435761u;
		for (i = 0; i < 5; i++)
			lens[i] = calloc(3000, sizeof(size_t));
		coll_init(&out);
		coll_init(&s1);
		coll_init(&s2);
		coll_init(&tmp);
		for (i = 0; i < 3000; i++) {
			uint32_t op = rnd() % 100;

			if (op < 85) {
				uint32_t seq = 1 + rnd() % 4;
				size_t len = 4 + (rnd() % 8 ? rnd() % 150
							    : rnd() % 2000);

				lens[seq][written[seq]] = len;
				put(c, seq, written[seq]++, len);
			} else if (op < 90) {
				central_flush(c);
			} else if (op < 97) {
				central_read(c, &out.sink, true);
			} else {
				struct central_stats b = *st;

				coll_reset(&s1);
				coll_reset(&s2);
				coll_reset(&tmp);
				central_read(c, &s1.sink, false);
				central_read(c, &s2.sink, false);
				snap_ok &= !memcmp(&b, st, sizeof(b));
				central_read(c, &tmp.sink, true);
				snap_ok &= coll_equal(&s1, &s2) &&
					   coll_equal(&s1, &tmp);
				for (k = 0; k < tmp.n; k++)
					coll_write(&out.sink, tmp.p[k].seq,
						   tmp.p[k].buf, tmp.p[k].len);
			}
		}
		central_flush(c);
		central_read(c, &out.sink, true);
		for (k = 0; k < out.n && ok; k++) {
			uint32_t seq = out.p[k].seq;

			ok = seq >= 1 && seq <= 4 && got[seq] < written[seq] &&
			     is_pkt(&out.p[k], seq, got[seq],
				    lens[seq][got[seq]]) == 1;
			got[seq]++;
		}
		CHECK(ok);
		CHECK(snap_ok);
		for (i = 1; i <= 4; i++)
			CHECK_EQ_I64(got[i], written[i]);
		CHECK_EQ_I64(st->chunks_read, st->chunks_written);
		CHECK_EQ_I64(st->bytes_read, st->bytes_written);
		CHECK_EQ_I64(st->chunks_overwritten, 0);
		CHECK_EQ_I64(st->chunks_discarded, 0);
		CHECK_EQ_I64(st->packets_lost, 0);
		CHECK_EQ_I64(st->readaheads_failed, 0);
		for (i = 0; i < 5; i++)
			free(lens[i]);
		coll_free(&out);
		coll_free(&s1);
		coll_free(&s2);
		coll_free(&tmp);
		central_free(c);
	}
}

/* Checks the output of a lossy ring run against what was written: every
 * packet is one written, whole, in order; it carries the loss flag exactly
 * when packets before it are missing. Returns the packets per sequence. */
static bool check_lossy(const struct coll *out, size_t *const *lens,
			const uint32_t *written, uint32_t *got)
{
	long next[5] = { 0, 0, 0, 0, 0 };
	size_t k;

	for (k = 0; k < 5; k++)
		got[k] = 0;
	for (k = 0; k < out->n; k++) {
		uint32_t seq = out->p[k].seq;
		long idx;
		int r = 0;

		if (seq < 1 || seq > 4 || out->p[k].len < 4)
			return false;
		idx = out->p[k].buf[0] | out->p[k].buf[1] << 8 |
		      out->p[k].buf[2] << 16;
		if (idx < next[seq] || idx >= (long)written[seq])
			return false;
		r = is_pkt(&out->p[k], seq, (uint32_t)idx, lens[seq][idx]);
		if (r != (idx == next[seq] ? 1 : 2))
			return false;
		next[seq] = idx + 1;
		got[seq]++;
	}
	return true;
}

/* Random writes into a small ring: newest packets survive whole, losses
 * are flagged, and the accounting adds up. */
static void test_random_ring(void)
{
	uint32_t seed;

	for (seed = 1; seed <= 8; seed++) {
		bool reads = seed > 4; /* without passes, losses are exact */
		struct central *c = central_new(16 * 128, 128, FILL_RING);
		const struct central_stats *st = central_stats(c);
		struct coll out;
		uint32_t written[5] = { 0 }, got[5];
		size_t *lens[5], i;
		uint64_t lost = 0, n = 0;

		xs_state = seed * 0x51ED270Bu;
		for (i = 0; i < 5; i++)
			lens[i] = calloc(2000, sizeof(size_t));
		coll_init(&out);
		for (i = 0; i < 2000; i++) {
			uint32_t op = rnd() % 100;

			if (op < 90) {
				uint32_t seq = 1 + rnd() % 4;
				size_t len = 4 + (rnd() % 10 ? rnd() % 100
							     : rnd() % 600);

				lens[seq][written[seq]] = len;
				put(c, seq, written[seq]++, len);
			} else if (op < 95 || !reads) {
				central_flush(c);
			} else {
				central_read(c, &out.sink, true);
			}
		}
		central_flush(c);
		central_read(c, &out.sink, true);
		CHECK(check_lossy(&out, lens, written, got));
		CHECK(st->chunks_overwritten > 0);
		CHECK_EQ_I64(st->chunks_written,
			     st->chunks_read + st->chunks_overwritten);
		CHECK_EQ_I64(st->bytes_written,
			     st->bytes_read + st->bytes_overwritten);
		CHECK_EQ_I64(st->write_wrap_count, st->chunks_written / 16);
		CHECK_EQ_I64(st->chunks_discarded, 0);
		CHECK_EQ_I64(central_unread_chunks(c), 0);
		for (i = 1; i <= 4; i++) {
			lost += central_seq_packets_lost(c, (uint32_t)i);
			n += got[i];
			if (!reads)
				CHECK_EQ_I64(got[i] + central_seq_packets_lost(
							      c, (uint32_t)i),
					     written[i]);
		}
		CHECK_EQ_I64(lost, st->packets_lost);
		CHECK(n > 0);
		for (i = 0; i < 5; i++)
			free(lens[i]);
		coll_free(&out);
		central_free(c);
	}
}

/* Random writes into a small discard buffer with no reader: each sequence
 * keeps a prefix of its packets, none flagged, and the buffer seals. */
static void test_random_discard(void)
{
	uint32_t seed;

	for (seed = 1; seed <= 4; seed++) {
		struct central *c = central_new(16 * 128, 128, FILL_DISCARD);
		const struct central_stats *st = central_stats(c);
		struct coll out;
		uint32_t written[5] = { 0 }, got[5];
		size_t *lens[5], i;
		uint64_t discarded;

		xs_state = seed * 0x2545F491u;
		for (i = 0; i < 5; i++)
			lens[i] = calloc(501, sizeof(size_t));
		coll_init(&out);
		for (i = 0; i < 500; i++) {
			uint32_t seq = 1 + rnd() % 4;
			size_t len = 4 + rnd() % 300;

			lens[seq][written[seq]] = len;
			put(c, seq, written[seq]++, len);
			if (rnd() % 20 == 0)
				central_flush(c);
		}
		central_flush(c);
		CHECK_EQ_I64(st->chunks_written, 16);
		discarded = st->chunks_discarded;
		CHECK(discarded > 0);
		put(c, 1, written[1], 200); /* not stored: sealed */
		lens[1][written[1]++] = 200;
		central_flush(c);
		CHECK(st->chunks_discarded > discarded);
		central_read(c, &out.sink, true);
		/* prefixes: never a skipped packet, so never a flag */
		CHECK(check_lossy(&out, lens, written, got));
		CHECK_EQ_I64(st->chunks_written, 16);
		CHECK_EQ_I64(st->chunks_read, 16);
		CHECK_EQ_I64(st->chunks_overwritten, 0);
		for (i = 0; i < 5; i++)
			free(lens[i]);
		coll_free(&out);
		central_free(c);
	}
}

int main(void)
{
	RUN(test_new);
	RUN(test_small_roundtrip);
	RUN(test_large_roundtrip);
	RUN(test_empty_packet);
	RUN(test_ring_wrap_accounting);
	RUN(test_ring_record_rounding);
	RUN(test_ring_lost_head);
	RUN(test_snapshot_lost_head);
	RUN(test_discard);
	RUN(test_discard_reader_keeps_up);
	RUN(test_discard_torn_tail);
	RUN(test_consume_passes);
	RUN(test_consumed_head_tail_overwritten);
	RUN(test_flush);
	RUN(test_under_pressure);
	RUN(test_sink_error);
	RUN(test_random_lossless);
	RUN(test_random_ring);
	RUN(test_random_discard);
	return unit_finish();
}
