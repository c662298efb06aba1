/* Unit tests of the bounded-memory sorter (userspace/sync/sort/sorter.c):
 * records come back sorted and stable whether they fit in memory or spill
 * into runs on disk and merge back (in several passes under a tiny limit),
 * records larger than the limit, empty input, and errors (emit failure, a
 * temporary directory that does not exist). */
#include "sync/sort/sorter.h"
#include "unit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A record: its key and a payload that says which insertion it was. */
struct item {
	int64_t key;
	uint32_t seq;
	uint32_t len;
};

struct seen {
	struct item *v;
	size_t n, cap;
	int fail_at; /* emit fails on this record (-1: never) */
};

static int collect(void *ctx, int64_t key, const uint8_t *data, size_t len)
{
	struct seen *s = ctx;
	struct item it = { key, 0, (uint32_t)len };
	size_t i;

	if (s->fail_at >= 0 && (size_t)s->fail_at == s->n)
		return -EPIPE;
	if (len >= 4)
		memcpy(&it.seq, data, 4);
	/* the payload repeats the sequence number's low byte */
	for (i = 4; i < len; i++)
		if (data[i] != (uint8_t)it.seq)
			return -EBADMSG;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n++] = it;
	return 0;
}

static int add_failures; /* checked once per test */

static void add(struct sorter *so, int64_t key, uint32_t seq, size_t len)
{
	uint8_t *buf = malloc(len < 4 ? 4 : len);

	memcpy(buf, &seq, 4);
	memset(buf + 4, (uint8_t)seq, len > 4 ? len - 4 : 0);
	if (sorter_add(so, key, buf, len < 4 ? 4 : len) != 0)
		add_failures++;
	free(buf);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Sorted by key, equal keys in insertion order, every record once. */
static bool sorted_stable(const struct seen *s, size_t expect)
{
	uint8_t *got = calloc(expect ? expect : 1, 1);
	bool ok = s->n == expect;
	size_t i;

	for (i = 0; ok && i < s->n; i++) {
		if (s->v[i].seq >= expect || got[s->v[i].seq])
			ok = false;
		else
			got[s->v[i].seq] = 1;
		if (i && (s->v[i - 1].key > s->v[i].key ||
			  (s->v[i - 1].key == s->v[i].key &&
			   s->v[i - 1].seq > s->v[i].seq)))
			ok = false;
	}
	free(got);
	return ok;
}

/* Adds n records with keys in [0, range) and lengths 4..maxlen. */
static void fill(struct sorter *so, size_t n, uint64_t range, size_t maxlen,
		 uint64_t seed)
{
	size_t i;

	rng = seed;
	for (i = 0; i < n; i++)
		add(so, (int64_t)(next_rand() % range) - (int64_t)(range / 2),
		    (uint32_t)i, 4 + next_rand() % (maxlen - 3));
}

static void test_in_memory(void)
{
	struct sorter *so = sorter_new(64u << 20, NULL);
	struct seen s = { .fail_at = -1 };

	fill(so, 5000, 100, 64, 1);
	CHECK(sorter_finish(so, collect, &s) == 0);
	CHECK(sorted_stable(&s, 5000));
	CHECK_EQ_I64(sorter_stats(so)->runs, 0);
	CHECK_EQ_I64(sorter_stats(so)->records, 5000);
	sorter_free(so);
	free(s.v);
}

/* Same input, unlimited and tiny limit: the same output. */
static void test_spill_matches_memory(void)
{
	struct sorter *big = sorter_new(64u << 20, NULL);
	struct sorter *tiny = sorter_new(SORTER_MIN_LIMIT, NULL);
	struct seen a = { .fail_at = -1 }, b = { .fail_at = -1 };
	size_t i;
	bool same;

	fill(big, 20000, 1000, 200, 7);
	fill(tiny, 20000, 1000, 200, 7);
	CHECK(sorter_finish(big, collect, &a) == 0);
	CHECK(sorter_finish(tiny, collect, &b) == 0);
	CHECK(sorted_stable(&b, 20000));
	CHECK(sorter_stats(tiny)->runs > 50);
	CHECK(sorter_stats(tiny)->merge_passes > 1);
	CHECK(sorter_stats(tiny)->spilled_bytes > 2000000);
	same = a.n == b.n;
	for (i = 0; same && i < a.n; i++)
		same = a.v[i].key == b.v[i].key && a.v[i].seq == b.v[i].seq &&
		       a.v[i].len == b.v[i].len;
	CHECK(same);
	sorter_free(big);
	sorter_free(tiny);
	free(a.v);
	free(b.v);
}

/* Keys all equal: the order is the insertion order through runs. */
static void test_stable_across_runs(void)
{
	struct sorter *so = sorter_new(SORTER_MIN_LIMIT, NULL);
	struct seen s = { .fail_at = -1 };
	size_t i;

	for (i = 0; i < 3000; i++)
		add(so, 42, (uint32_t)i, 40);
	CHECK(sorter_finish(so, collect, &s) == 0);
	CHECK(sorted_stable(&s, 3000));
	CHECK(sorter_stats(so)->runs > 3);
	sorter_free(so);
	free(s.v);
}

static void test_record_over_limit(void)
{
	struct sorter *so = sorter_new(SORTER_MIN_LIMIT, NULL);
	struct seen s = { .fail_at = -1 };

	add(so, 5, 0, 100);
	add(so, 3, 1, 200000); /* 12 times the limit */
	add(so, 4, 2, 100);
	add(so, 1, 3, 300000);
	CHECK(sorter_finish(so, collect, &s) == 0);
	CHECK(sorted_stable(&s, 4));
	CHECK_EQ_I64(s.n, 4);
	if (s.n == 4) {
		CHECK_EQ_I64(s.v[0].len, 300000);
		CHECK_EQ_I64(s.v[1].len, 200000);
	}
	sorter_free(so);
	free(s.v);
}

static void test_empty(void)
{
	struct sorter *so = sorter_new(0, NULL);
	struct seen s = { .fail_at = -1 };

	CHECK(sorter_finish(so, collect, &s) == 0);
	CHECK_EQ_I64(s.n, 0);
	sorter_free(so);
}

static void test_extreme_keys(void)
{
	struct sorter *so = sorter_new(SORTER_MIN_LIMIT, NULL);
	struct seen s = { .fail_at = -1 };
	size_t i;

	for (i = 0; i < 2000; i++)
		add(so, i % 3 == 0 ? INT64_MAX : i % 3 == 1 ? INT64_MIN : 0,
		    (uint32_t)i, 30);
	CHECK(sorter_finish(so, collect, &s) == 0);
	CHECK(sorted_stable(&s, 2000));
	CHECK(s.n == 2000 && s.v[0].key == INT64_MIN &&
	      s.v[1999].key == INT64_MAX);
	sorter_free(so);
	free(s.v);
}

static void test_emit_error(void)
{
	struct sorter *mem = sorter_new(1u << 20, NULL);
	struct sorter *disk = sorter_new(SORTER_MIN_LIMIT, NULL);
	struct seen a = { .fail_at = 10 }, b = { .fail_at = 10 };

	fill(mem, 100, 10, 20, 3);
	fill(disk, 3000, 10, 60, 3);
	CHECK_EQ_I64(sorter_finish(mem, collect, &a), -EPIPE);
	CHECK_EQ_I64(sorter_finish(disk, collect, &b), -EPIPE);
	CHECK_EQ_I64(a.n, 10);
	CHECK_EQ_I64(b.n, 10);
	CHECK_STR(sorter_error(disk), "");
	sorter_free(mem);
	sorter_free(disk);
	free(a.v);
	free(b.v);
}

static void test_bad_tmpdir(void)
{
	struct sorter *so = sorter_new(SORTER_MIN_LIMIT,
				       "/nonexistent-btr-dir");
	struct seen s = { .fail_at = -1 };
	int err = 0;
	size_t i;

	for (i = 0; i < 3000 && !err; i++) {
		uint8_t buf[40] = { 0 };

		err = sorter_add(so, (int64_t)i, buf, sizeof(buf));
	}
	CHECK_EQ_I64(err, -ENOENT);
	CHECK(strstr(sorter_error(so), "/nonexistent-btr-dir: temporary "
		      "file: No such file") != NULL);
	CHECK_EQ_I64(sorter_finish(so, collect, &s), -ENOENT);
	sorter_free(so);
	free(s.v);
}

/* RUN, then check that every sorter_add() of the test succeeded. */
#define RUN_ADDS(fn)                                                           \
	do {                                                                   \
		add_failures = 0;                                              \
		RUN(fn);                                                       \
		CHECK_EQ_I64(add_failures, 0);                                 \
	} while (0)

int main(void)
{
	RUN_ADDS(test_in_memory);
	RUN_ADDS(test_spill_matches_memory);
	RUN_ADDS(test_stable_across_runs);
	RUN_ADDS(test_record_over_limit);
	RUN_ADDS(test_empty);
	RUN_ADDS(test_extreme_keys);
	RUN_ADDS(test_emit_error);
	RUN(test_bad_tmpdir);
	return unit_finish();
}
