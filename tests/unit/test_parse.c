/* Unit tests of the command-line value parsers (util/parse.c): sizes,
 * durations and bounded integers, valid and invalid. */
#include <stdint.h>

#include "util/parse.h"
#include "unit.h"

#define SENTINEL 0xDEADBEEFull

/* The value parsed, or checks that it failed and left *out alone. */
static void size_ok(const char *s, uint64_t want, int line)
{
	uint64_t v = SENTINEL;
	int r = parse_size(s, &v);

	if (r != 0 || v != want)
		fprintf(stderr, "line %d: parse_size(\"%s\") = %d, %" PRIu64 "\n",
			line, s, r, v);
	CHECK_EQ_I64(r, 0);
	CHECK(v == want);
}

static void size_bad(const char *s, int line)
{
	uint64_t v = SENTINEL;
	int r = parse_size(s, &v);

	if (r != -1)
		fprintf(stderr, "line %d: parse_size(\"%s\") accepted: %" PRIu64
			"\n", line, s ? s : "(null)", v);
	CHECK_EQ_I64(r, -1);
	CHECK(v == SENTINEL);
}

static void dur_ok(const char *s, uint64_t want, int line)
{
	uint64_t v = SENTINEL;
	int r = parse_duration_ns(s, &v);

	if (r != 0 || v != want)
		fprintf(stderr, "line %d: parse_duration_ns(\"%s\") = %d, %"
			PRIu64 " (want %" PRIu64 ")\n", line, s, r, v, want);
	CHECK_EQ_I64(r, 0);
	CHECK(v == want);
}

static void dur_bad(const char *s, int line)
{
	uint64_t v = SENTINEL;
	int r = parse_duration_ns(s, &v);

	if (r != -1)
		fprintf(stderr, "line %d: parse_duration_ns(\"%s\") accepted: %"
			PRIu64 "\n", line, s ? s : "(null)", v);
	CHECK_EQ_I64(r, -1);
	CHECK(v == SENTINEL);
}

#define SIZE_OK(s, w) size_ok(s, w, __LINE__)
#define SIZE_BAD(s) size_bad(s, __LINE__)
#define DUR_OK(s, w) dur_ok(s, w, __LINE__)
#define DUR_BAD(s) dur_bad(s, __LINE__)

static void test_size(void)
{
	SIZE_OK("4096", 4096);
	SIZE_OK("0", 0);
	SIZE_OK("4K", 4096);
	SIZE_OK("4k", 4096);
	SIZE_OK("4M", 4ull << 20);
	SIZE_OK("1G", 1ull << 30);
	SIZE_OK("3g", 3ull << 30);
	SIZE_OK("4KiB", 4096);
	SIZE_OK("4kb", 4096);
	SIZE_OK("4KB", 4096);
	SIZE_OK("16MiB", 16ull << 20);
	SIZE_OK("2Mi", 2ull << 20);
	SIZE_OK("18446744073709551615", UINT64_MAX);
	SIZE_OK("17179869183G", 17179869183ull << 30); /* largest in G */
	SIZE_OK("007K", 7 * 1024);
}

static void test_size_bad(void)
{
	SIZE_BAD("");
	SIZE_BAD(NULL);
	SIZE_BAD("-1");
	SIZE_BAD("-4K");
	SIZE_BAD("+4K");
	SIZE_BAD(" 4K");
	SIZE_BAD("4K ");
	SIZE_BAD("K");
	SIZE_BAD("abc");
	SIZE_BAD("4X");
	SIZE_BAD("4T");
	SIZE_BAD("4KK");
	SIZE_BAD("4KiBx");
	SIZE_BAD("4iB");
	SIZE_BAD("4.5M");
	SIZE_BAD("0x10");
	SIZE_BAD("18446744073709551616");      /* 2^64 */
	SIZE_BAD("99999999999999999999999");
	SIZE_BAD("17179869184G");              /* 2^64 bytes */
	SIZE_BAD("18014398509481984K");        /* 2^64 bytes */
	SIZE_BAD("18446744073709551615K");
}

static void test_duration(void)
{
	DUR_OK("10", 10000000000ull);
	DUR_OK("0", 0);
	DUR_OK("2.5s", 2500000000ull);
	DUR_OK("2.5", 2500000000ull);
	DUR_OK("500ms", 500000000ull);
	DUR_OK("1m", 60000000000ull);
	DUR_OK("1.5m", 90000000000ull);
	DUR_OK("1h", 3600000000000ull);
	DUR_OK("0.5h", 1800000000000ull);
	DUR_OK("1.000000001s", 1000000001ull);
	DUR_OK("0.000000001", 1);
	DUR_OK("1.0000000019s", 1000000001ull); /* below 1 ns: truncated */
	DUR_OK("1.0000000001m", 60000000006ull);  /* 6 ns */
	DUR_OK("0.000000000001h", 3);            /* 3.6 ns */
	DUR_OK("250us", 250000);
	DUR_OK("1.5us", 1500);
	DUR_OK("7ns", 7);
	DUR_OK("1.25ms", 1250000);
	DUR_OK("18446744073s", 18446744073000000000ull);
	DUR_OK("18446744073.709551615s", UINT64_MAX);
	DUR_OK("18446744073709551615ns", UINT64_MAX);
	DUR_OK("18446744073709551610ns", UINT64_MAX - 5);
	DUR_OK("5124095h", 5124095ull * 3600000000000ull);
	DUR_OK("5124095.5h", 18446743800000000000ull);
}

static void test_duration_bad(void)
{
	DUR_BAD("");
	DUR_BAD(NULL);
	DUR_BAD("abc");
	DUR_BAD("s");
	DUR_BAD("10x");
	DUR_BAD("10 s");
	DUR_BAD("10sec");
	DUR_BAD("10S");
	DUR_BAD("1.");
	DUR_BAD("1.s");
	DUR_BAD(".5");
	DUR_BAD("-1");
	DUR_BAD("+1");
	DUR_BAD("1.2.3");
	DUR_BAD("1e3");
	DUR_BAD("1d");
	DUR_BAD("18446744073709551616ns");  /* 2^64 */
	DUR_BAD("99999999999999999999999");
	DUR_BAD("18446744074s");
	DUR_BAD("18446744073.709551616s"); /* 2^64 ns: the fraction overflows */
	DUR_BAD("18446744073.8s");
	DUR_BAD("5124096h");
	DUR_BAD("5124095.9h");
}

static void test_u64(void)
{
	uint64_t v = SENTINEL;

	CHECK_EQ_I64(parse_u64("0", 0, 10, &v), 0);
	CHECK_EQ_I64(v, 0);
	CHECK_EQ_I64(parse_u64("10", 0, 10, &v), 0);
	CHECK_EQ_I64(v, 10);
	CHECK_EQ_I64(parse_u64("5", 5, 5, &v), 0);
	CHECK_EQ_I64(v, 5);
	CHECK_EQ_I64(parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK(v == UINT64_MAX);
	v = SENTINEL;
	CHECK_EQ_I64(parse_u64("11", 0, 10, &v), -1);
	CHECK_EQ_I64(parse_u64("4", 5, 10, &v), -1);
	CHECK_EQ_I64(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("-1", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("+1", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64(" 1", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("1 ", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("1K", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("0x10", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64("", 0, UINT64_MAX, &v), -1);
	CHECK_EQ_I64(parse_u64(NULL, 0, UINT64_MAX, &v), -1);
	CHECK(v == SENTINEL);
	CHECK_EQ_I64(parse_u64("0012", 0, 100, &v), 0);
	CHECK_EQ_I64(v, 12);
}

int main(void)
{
	RUN(test_size);
	RUN(test_size_bad);
	RUN(test_duration);
	RUN(test_duration_bad);
	RUN(test_u64);
	return unit_finish();
}
