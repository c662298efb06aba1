/* Unit tests of the id set (record/tidset.c): add/has/del, churn, growth,
 * and ids that are not positive. Checked against a plain bitmap. */
#include <stdbool.h>
#include <stdlib.h>

#include "record/tidset.h"
#include "unit.h"

static void test_basic(void)
{
	struct tidset s = { 0 };

	CHECK(!tidset_has(&s, 1)); /* empty, never allocated */
	tidset_del(&s, 1);
	CHECK_EQ_I64(tidset_add(&s, 42), 1);
	CHECK_EQ_I64(tidset_add(&s, 42), 0);
	CHECK(tidset_has(&s, 42));
	CHECK(!tidset_has(&s, 43));
	CHECK_EQ_I64(s.map.n, 1);
	CHECK_EQ_I64(tidset_add(&s, 7), 1);
	CHECK_EQ_I64(tidset_add(&s, INT32_MAX), 1);
	CHECK(tidset_has(&s, INT32_MAX));
	CHECK_EQ_I64(s.map.n, 3);
	tidset_del(&s, 42);
	CHECK(!tidset_has(&s, 42));
	CHECK(tidset_has(&s, 7));
	CHECK_EQ_I64(s.map.n, 2);
	tidset_del(&s, 42); /* twice: no effect */
	tidset_del(&s, 1000); /* absent */
	CHECK_EQ_I64(s.map.n, 2);
	CHECK_EQ_I64(tidset_add(&s, 42), 1);
	CHECK(tidset_has(&s, 42));
	CHECK_EQ_I64(s.map.n, 3);
	tidset_free(&s);
	CHECK(s.map.slots == NULL && s.map.cap == 0 && s.map.n == 0);
	CHECK(!tidset_has(&s, 7));
	CHECK_EQ_I64(tidset_add(&s, 7), 1); /* usable again after free */
	CHECK(tidset_has(&s, 7));
	tidset_free(&s);
}

static void test_not_positive(void)
{
	struct tidset s = { 0 };

	CHECK_EQ_I64(tidset_add(&s, 0), 0);
	CHECK_EQ_I64(tidset_add(&s, -1), 0);
	CHECK_EQ_I64(tidset_add(&s, INT32_MIN), 0);
	CHECK_EQ_I64(s.map.n, 0);
	CHECK(!tidset_has(&s, 0));
	CHECK(!tidset_has(&s, -1));
	CHECK_EQ_I64(tidset_add(&s, 5), 1);
	tidset_del(&s, 5);
	/* -1 marks a deleted slot: it must not be "found" */
	CHECK(!tidset_has(&s, -1));
	CHECK(!tidset_has(&s, 0));
	tidset_del(&s, -1);
	tidset_del(&s, 0);
	CHECK_EQ_I64(s.map.n, 0);
	CHECK_EQ_I64(tidset_add(&s, -1), 0);
	CHECK_EQ_I64(s.map.n, 0);
	tidset_free(&s);
}

/* Deleting and re-adding, and churning through many distinct ids with
 * few alive at once: the table never grows past what the live ids need. */
static void test_churn_stays_small(void)
{
	struct tidset s = { 0 };
	size_t cap;
	int32_t i, round;
	bool ok = true;

	for (i = 1; i <= 20; i++)
		tidset_add(&s, i);
	cap = s.map.cap;
	for (i = 1; i <= 20; i++)
		tidset_del(&s, i);
	CHECK_EQ_I64(s.map.n, 0);
	for (i = 1; i <= 20; i++)
		ok &= tidset_add(&s, i) == 1;
	CHECK(ok);
	CHECK_EQ_I64(s.map.cap, cap);
	for (round = 0; round < 2000; round++) {
		int32_t id = 1000 + round;

		ok &= tidset_add(&s, id) == 1;
		ok &= tidset_has(&s, id);
		tidset_del(&s, id);
		ok &= !tidset_has(&s, id);
	}
	CHECK(ok);
	CHECK_EQ_I64(s.map.n, 20);
	CHECK_EQ_I64(s.map.cap, cap);
	for (i = 1; i <= 20; i++)
		ok &= tidset_has(&s, i);
	CHECK(ok);
	tidset_free(&s);
}

/* Thousands of ids, random adds and deletes, against a bitmap. */
static void test_growth_random(void)
{
	enum { MAXID = 200000 };
	struct tidset s = { 0 };
	bool *ref = calloc(MAXID, sizeof(bool));
	uint32_t x = 12345;
	size_t live = 0, i;
	bool ok = true;
	int32_t id;

	for (id = 1; id <= 10000; id++) { /* dense */
		ok &= tidset_add(&s, id) == 1;
		ref[id] = true;
		live++;
	}
	CHECK(ok);
	CHECK_EQ_I64(s.map.n, 10000);
	CHECK(s.map.cap >= 20000);
	for (id = 1; id <= 10000; id++)
		ok &= tidset_has(&s, id);
	CHECK(ok);
	CHECK(!tidset_has(&s, 10001));
	for (i = 0; i < 300000; i++) {
		int r;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		id = (int32_t)(1 + x % (MAXID - 1));
		switch (x >> 30) {
		case 0:
		case 1:
			r = tidset_add(&s, id);
			ok &= r == (ref[id] ? 0 : 1);
			if (!ref[id])
				live++;
			ref[id] = true;
			break;
		case 2:
			tidset_del(&s, id);
			if (ref[id])
				live--;
			ref[id] = false;
			break;
		default:
			ok &= tidset_has(&s, id) == ref[id];
		}
	}
	CHECK(ok);
	CHECK_EQ_I64(s.map.n, live);
	CHECK(s.map.n * 2 <= s.map.cap);
	for (id = 1; id < MAXID; id++)
		ok &= tidset_has(&s, id) == ref[id];
	CHECK(ok);
	/* large ids, colliding ones (same low bits) */
	for (i = 0; i < 5000; i++) {
		id = (int32_t)(INT32_MAX - i * 65536);
		ok &= tidset_add(&s, id) == 1;
	}
	for (i = 0; i < 5000; i++)
		ok &= tidset_has(&s, (int32_t)(INT32_MAX - i * 65536));
	CHECK(ok);
	free(ref);
	tidset_free(&s);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_not_positive);
	RUN(test_churn_stays_small);
	RUN(test_growth_random);
	return unit_finish();
}
