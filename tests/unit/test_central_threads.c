/* Stress test of the central buffer shared by writer threads (as the reader
 * threads of `record --readers N` share it): each thread owns a sequence,
 * writes numbered packets of varied sizes (some spanning chunks) and
 * commits its own partial chunk now and then, while this thread reads the
 * buffer (consuming passes and snapshots) the whole time. Checked: every
 * sequence's packets come out whole and in order, each once; with a buffer
 * large enough nothing is lost and every packet is read; with a small one
 * the order holds and every gap is flagged. Run it under ASan (make
 * sanitize) and it also checks the memory handling of the copy-out reads. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buffer/central.h"
#include "unit.h"

#define WRITERS 4
#define SEQ0 10
#define CHUNK 4096u
#define DROPPED_LEN 3 /* previous_packet_dropped appended after a gap */

static int finished; /* atomic: writers done */

struct writer {
	struct central *c;
	uint32_t seq, packets;
	int err;
};

struct verify {
	struct packet_sink sink;
	uint32_t next[WRITERS];  /* the index expected next, per writer */
	uint64_t read, bad, gaps;
	bool exact;              /* no gap allowed */
	bool any_start;          /* a snapshot: each sequence starts anywhere */
	bool seen[WRITERS];
};

static size_t pkt_len(uint32_t idx)
{
	return 8 + (idx * 2654435761u) % (idx % 50 ? 600 : 9000);
}

static uint8_t pkt_byte(uint32_t seq, uint32_t idx, size_t j)
{
	return (uint8_t)(seq * 31 + idx * 7 + j);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint8_t *buf = malloc(9000 + 8);
	uint32_t i;
	size_t j;

	for (i = 0; buf && i < w->packets && !w->err; i++) {
		size_t len = pkt_len(i);

		memcpy(buf, &i, 4);
		memcpy(buf + 4, &w->seq, 4);
		for (j = 8; j < len; j++)
			buf[j] = pkt_byte(w->seq, i, j);
		w->err = sink_write(central_sink(w->c), w->seq, buf, len);
		if (i % 97 == 0)
			central_flush_seq(w->c, w->seq);
	}
	if (!buf)
		w->err = -1;
	central_flush_seq(w->c, w->seq);
	free(buf);
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int verify_write(struct packet_sink *s, uint32_t seq, const uint8_t *p,
			size_t len)
{
	struct verify *v = s->ctx;
	uint32_t idx, k = seq - SEQ0, wseq;
	size_t j, body;
	bool gap;

	if (seq < SEQ0 || k >= WRITERS || len < 8) {
		v->bad++;
		return 0;
	}
	memcpy(&idx, p, 4);
	memcpy(&wseq, p + 4, 4);
	body = pkt_len(idx);
	gap = len == body + DROPPED_LEN;
	if (v->any_start && !v->seen[k])
		v->next[k] = idx;
	v->seen[k] = true;
	if (wseq != seq || (len != body && !gap) || idx < v->next[k] ||
	    (idx > v->next[k] && (!gap || v->exact))) {
		v->bad++;
		return 0;
	}
	for (j = 8; j < body; j++)
		if (p[j] != pkt_byte(seq, idx, j)) {
			v->bad++;
			return 0;
		}
	v->gaps += idx > v->next[k];
	v->next[k] = idx + 1;
	v->read++;
	return 0;
}

static void verify_init(struct verify *v, bool exact)
{
	memset(v, 0, sizeof(*v));
	v->sink.write = verify_write;
	v->sink.ctx = v;
	v->exact = exact;
}

/* WRITERS threads of `packets` each into a buffer of `size`, read all
 * along; returns the packets the consuming reads took, in *v. */
static void run(uint64_t size, uint32_t packets, struct verify *v,
		uint64_t *lost, uint64_t *snapshots_bad)
{
	struct central *c = central_new(size, CHUNK, FILL_RING);
	struct writer w[WRITERS];
	pthread_t th[WRITERS];
	struct verify snap;
	uint32_t k;
	int passes = 0;

	CHECK(c != NULL);
	if (!c)
		return;
	*lost = *snapshots_bad = 0;
	finished = 0;
	for (k = 0; k < WRITERS; k++) {
		w[k] = (struct writer){ c, SEQ0 + k, packets, 0 };
		CHECK_EQ_I64(central_set_owned(c, SEQ0 + k, true), 0);
	}
	for (k = 0; k < WRITERS; k++)
		CHECK_EQ_I64(pthread_create(&th[k], NULL, writer_main, &w[k]), 0);
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < WRITERS) {
		if (++passes % 5 == 0) {
			verify_init(&snap, false);
			snap.any_start = true;
			CHECK_EQ_I64(central_read(c, &snap.sink, false), 0);
			*snapshots_bad += snap.bad;
		}
		CHECK_EQ_I64(central_read(c, &v->sink, true), 0);
	}
	for (k = 0; k < WRITERS; k++) {
		pthread_join(th[k], NULL);
		CHECK_EQ_I64(w[k].err, 0);
		central_set_owned(c, SEQ0 + k, false);
	}
	central_flush(c);
	CHECK_EQ_I64(central_read(c, &v->sink, true), 0);
	for (k = 0; k < WRITERS; k++)
		*lost += central_seq_packets_lost(c, SEQ0 + k);
	central_free(c);
}

static void test_no_loss(void)
{
	struct verify v;
	uint64_t lost, snap_bad;
	uint32_t k;

	verify_init(&v, true);
	run(64u << 20, 20000, &v, &lost, &snap_bad);
	CHECK_EQ_I64(v.bad, 0);
	CHECK_EQ_I64(snap_bad, 0);
	CHECK_EQ_I64(lost, 0);
	CHECK_EQ_I64(v.read, WRITERS * 20000);
	for (k = 0; k < WRITERS; k++)
		CHECK_EQ_I64(v.next[k], 20000);
}

static void test_small_buffer_keeps_order(void)
{
	struct verify v;
	uint64_t lost, snap_bad;

	verify_init(&v, false);
	run(16 * CHUNK, 20000, &v, &lost, &snap_bad);
	CHECK_EQ_I64(v.bad, 0);
	CHECK_EQ_I64(snap_bad, 0);
	CHECK(v.read > 0);
	CHECK(v.read <= WRITERS * 20000);
	/* what was lost is counted, and every gap was flagged */
	CHECK(v.read + lost <= WRITERS * 20000);
	CHECK(lost == 0 || v.gaps > 0);
}

int main(void)
{
	RUN(test_no_loss);
	RUN(test_small_buffer_keeps_order);
	return unit_finish();
}
