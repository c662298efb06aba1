/* Unit tests of the in-memory packet sink (output/mem_sink.c): what is
 * written is replayed, packets and sequence ids, in order, as often as
 * asked; a failing destination stops the replay with its error. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "output/mem_sink.h"
#include "coll_sink.h"
#include "unit.h"


static const uint32_t seqs[] = { 1, 2, 1, 3, 0xFFFFFFFFu, 2, 1 };
static const size_t lens[] = { 10, 0, 1, 70000, 5, 300, 2 };
#define NP (sizeof(lens) / sizeof(lens[0]))

static void fill(uint8_t *b, size_t len, size_t k)
{
	size_t j;

	for (j = 0; j < len; j++)
		b[j] = (uint8_t)(k * 53 + j * 11 + (j >> 9));
}

static void write_all(struct packet_sink *s)
{
	size_t k;

	for (k = 0; k < NP; k++) {
		uint8_t *b = malloc(lens[k] ? lens[k] : 1);

		fill(b, lens[k], k);
		CHECK_EQ_I64(sink_write(s, seqs[k], b, lens[k]), 0);
		free(b);
	}
}

static bool same_as_written(const struct coll *c, size_t n)
{
	size_t k;
	bool ok = c->n == n;

	for (k = 0; ok && k < n; k++) {
		uint8_t *b = malloc(lens[k] ? lens[k] : 1);

		fill(b, lens[k], k);
		ok = c->p[k].seq == seqs[k] && c->p[k].len == lens[k] &&
		     !memcmp(c->p[k].buf, b, lens[k]);
		free(b);
	}
	return ok;
}

static void test_replay(void)
{
	struct mem_sink m;
	struct coll a, b;

	mem_sink_init(&m);
	coll_init(&a);
	coll_init(&b);
	write_all(&m.sink);
	CHECK_EQ_I64(mem_sink_replay(&m, &a.sink), 0);
	CHECK(same_as_written(&a, NP));
	CHECK_EQ_I64(mem_sink_replay(&m, &b.sink), 0); /* again, unchanged */
	CHECK(same_as_written(&b, NP));
	mem_sink_free(&m);
	CHECK(m.buf == NULL && m.len == 0);
	coll_free(&a);
	coll_free(&b);
}

/* Writes after a replay are appended; replays into another mem_sink
 * chain. */
static void test_append_and_chain(void)
{
	struct mem_sink m, m2;
	struct coll a;
	const uint8_t extra[3] = { 9, 8, 7 };

	mem_sink_init(&m);
	mem_sink_init(&m2);
	coll_init(&a);
	write_all(&m.sink);
	CHECK_EQ_I64(mem_sink_replay(&m, &m2.sink), 0);
	CHECK_EQ_I64(mem_sink_replay(&m2, &a.sink), 0);
	CHECK(same_as_written(&a, NP));
	CHECK_EQ_I64(sink_write(&m.sink, 42, extra, 3), 0);
	coll_free(&a);
	coll_init(&a);
	CHECK_EQ_I64(mem_sink_replay(&m, &a.sink), 0);
	CHECK_EQ_I64(a.n, NP + 1);
	CHECK(same_as_written(&a, NP) == false); /* one more than written */
	if (a.n == NP + 1) {
		CHECK_EQ_I64(a.p[NP].seq, 42);
		CHECK_EQ_I64(a.p[NP].len, 3);
		CHECK(!memcmp(a.p[NP].buf, extra, 3));
		a.n--; /* the first NP are the ones written first */
		CHECK(same_as_written(&a, NP));
		a.n++;
	}
	coll_free(&a);
	mem_sink_free(&m);
	mem_sink_free(&m2);
}

static void test_empty(void)
{
	struct mem_sink m;
	struct coll a;

	mem_sink_init(&m);
	coll_init(&a);
	CHECK_EQ_I64(mem_sink_replay(&m, &a.sink), 0);
	CHECK_EQ_I64(a.n, 0);
	mem_sink_free(&m);
	mem_sink_free(&m); /* twice is harmless */
	coll_free(&a);
}

/* The destination's error stops the replay and is returned. */
static void test_error(void)
{
	struct mem_sink m;
	struct coll a;

	mem_sink_init(&m);
	coll_init(&a);
	write_all(&m.sink);
	a.fail_at = 3;
	a.err = -ENOSPC;
	CHECK_EQ_I64(mem_sink_replay(&m, &a.sink), -ENOSPC);
	CHECK(same_as_written(&a, 2)); /* nothing after the error */
	CHECK_EQ_I64(a.calls, 3);
	coll_free(&a);
	coll_init(&a);
	a.fail_at = 1;
	a.err = -EIO;
	CHECK_EQ_I64(mem_sink_replay(&m, &a.sink), -EIO);
	CHECK_EQ_I64(a.n, 0);
	coll_free(&a);
	mem_sink_free(&m);
}

int main(void)
{
	RUN(test_replay);
	RUN(test_append_and_chain);
	RUN(test_empty);
	RUN(test_error);
	return unit_finish();
}
