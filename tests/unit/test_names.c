/* Unit tests of the report's name table (report/names.h): "" is id 0, a
 * name keeps its id however often it comes back (through the cache of
 * recent names or the table behind it), names are cut at 15 bytes and at
 * a NUL, as the kernel keeps comms. */
#include <stdio.h>
#include <string.h>

#include "report/names.h"
#include "unit.h"

/* The first name after "" is not 0 (a zeroed cache slot says "" is 0:
 * it must not answer for a name never added). */
static void test_empty_is_zero(void)
{
	struct names t;

	CHECK_EQ_I64(names_init(&t), 0);
	CHECK_EQ_I64(names_id(&t, "", 0), 0);
	CHECK_EQ_I64(names_id(&t, "worker", 6), 1);
	CHECK_EQ_I64(names_id(&t, "", 0), 0);
	CHECK(!strcmp(names_str(&t, 1), "worker"));
	CHECK(!strcmp(names_str(&t, 0), ""));
	names_free(&t);
}

/* 3000 names, each asked for 4 times in shuffled rounds: the same id
 * every time, the ids 1..3000 in order of first sight, each naming its
 * string (many share a cache slot). */
static void test_many_names(void)
{
	struct names t;
	char buf[32];
	uint32_t i, round, bad = 0;

	CHECK_EQ_I64(names_init(&t), 0);
	for (round = 0; round < 4; round++)
		for (i = 0; i < 3000; i++) {
			uint32_t k = round ? (i * 7919u + round) % 3000 : i;
			int n = snprintf(buf, sizeof(buf), "t%u-%u", k, k * 31);
			uint32_t id = names_id(&t, buf, (size_t)n);

			bad += id != k + 1 || strcmp(names_str(&t, id), buf);
		}
	CHECK_EQ_I64(bad, 0);
	CHECK_EQ_I64(t.n, 3001);
	names_free(&t);
}

/* Cut at 15 bytes and at a NUL: the same id as the cut name. */
static void test_cut(void)
{
	struct names t;
	uint32_t a;

	CHECK_EQ_I64(names_init(&t), 0);
	a = names_id(&t, "0123456789abcdef-long", 21);
	CHECK(!strcmp(names_str(&t, a), "0123456789abcde"));
	CHECK_EQ_I64(names_id(&t, "0123456789abcde", 15), a);
	CHECK_EQ_I64(names_id(&t, "ab\0cd", 5), names_id(&t, "ab", 2));
	names_free(&t);
}

int main(void)
{
	RUN(test_empty_is_zero);
	RUN(test_many_names);
	RUN(test_cut);
	return unit_finish();
}
