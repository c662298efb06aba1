/* Unit tests of the `perf script` text parser (sync/perf/perf_text.c): the
 * fixtures recorded with the real perf (tests/fixtures/perf, counts from its
 * README), exact timestamps, header and frame variants, and malformed or
 * hostile input, which must be counted and skipped, never crash or hang.
 * Runs from the repository root. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sync/perf/perf_text.h"
#include "unit.h"

#define FIXTURES "tests/fixtures/perf/"
#define MAX_RUN 64

/* ---- running the parser over a string ---- */

struct run {
	char *out[MAX_RUN]; /* each sample rendered by render() */
	uint64_t line[MAX_RUN];
	size_t n;
	int rc;
	uint64_t stats[PERF_TEXT_STAT_COUNT];
	const char *err;
	uint64_t err_line;
};

/* "comm|pid|tid|cpu|ts|period|event|addr sym (dso);..." */
static char *render(const struct perf_sample *s)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	fprintf(m, "%s|%d|%d|%d|%" PRId64 "|%" PRIu64 "|%s|", s->comm, s->pid,
		s->tid, s->cpu, s->ts_ns, s->period, s->event);
	for (i = 0; i < s->nframes; i++)
		fprintf(m, "%s%" PRIx64 " %s (%s)", i ? ";" : "",
			s->frames[i].address, s->frames[i].symbol,
			s->frames[i].dso);
	fclose(m);
	return buf;
}

static FILE *file_of(const char *text, size_t len)
{
	FILE *f = tmpfile();

	if (f && len)
		fwrite(text, 1, len, f);
	if (f)
		rewind(f);
	return f;
}

static void run_file(FILE *f, struct run *r)
{
	struct perf_text *p = perf_text_open_file(f);
	struct perf_sample s;
	int i;

	memset(r, 0, sizeof(*r));
	while ((r->rc = perf_text_next(p, &s)) > 0) {
		if (r->n < MAX_RUN) {
			r->line[r->n] = s.line;
			r->out[r->n] = render(&s);
		}
		r->n++;
	}
	for (i = 0; i < PERF_TEXT_STAT_COUNT; i++)
		r->stats[i] = perf_text_stat(p, i);
	r->err = perf_text_last_error(p, &r->err_line);
	perf_text_close(p);
}

static void run_len(const char *text, size_t len, struct run *r)
{
	FILE *f = file_of(text, len);

	run_file(f, r);
	fclose(f);
}

static void run(const char *text, struct run *r)
{
	run_len(text, strlen(text), r);
}

static void run_free(struct run *r)
{
	size_t i;

	for (i = 0; i < r->n && i < MAX_RUN; i++)
		free(r->out[i]);
}

/* Only the listed stats may be non-zero (besides SAMPLES). */
static uint64_t other_stats(const struct run *r, int a, int b)
{
	uint64_t sum = 0;
	int i;

	for (i = 1; i < PERF_TEXT_STAT_COUNT; i++)
		if (i != a && i != b)
			sum += r->stats[i];
	return sum;
}

/* ---- fixtures (counts: tests/fixtures/perf/README.md) ---- */

struct fixture {
	const char *name;
	uint64_t samples, frames, lines;
	int32_t cpu0;      /* cpu of the first sample */
	bool has_pid;
	const char *first; /* rendering of the first sample */
};

static const struct fixture fixtures[] = {
	{ "callchain.txt", 403, 1334, 2140, 0, false,
	  "busy|-1|24866|0|2354561658000|1001001|cpu-clock:pppH|"
	  "124f operator+ (/tmp/perffix/busy);13ca spin (/tmp/perffix/busy);"
	  "1494 main (/tmp/perffix/busy);2724a __libc_start_call_main "
	  "(/usr/lib/x86_64-linux-gnu/libc.so.6)" },
	{ "callchain_fields.txt", 403, 1334, 2140, -1, false,
	  "busy|-1|24866|-1|2354561658000|0||"
	  "124f operator+ (/tmp/perffix/busy);13ca spin (/tmp/perffix/busy);"
	  "1494 main (/tmp/perffix/busy);2724a __libc_start_call_main "
	  "(/usr/lib/x86_64-linux-gnu/libc.so.6)" },
	{ "callchain_ns.txt", 403, 1334, 2140, 0, true,
	  "busy|24866|24866|0|2354561658672|0|cpu-clock:pppH|"
	  "124f operator+ (/tmp/perffix/busy);13ca spin (/tmp/perffix/busy);"
	  "1494 main (/tmp/perffix/busy);2724a __libc_start_call_main "
	  "(/usr/lib/x86_64-linux-gnu/libc.so.6)" },
	{ "flat.txt", 406, 406, 406, 0, false,
	  "busy|-1|24871|0|2355646901000|1001001|cpu-clock:pppH|"
	  "55cb941ff24f operator+ (/tmp/perffix/busy)" },
	{ "flat_fields.txt", 406, 406, 406, -1, false,
	  "busy|-1|24871|-1|2355646901000|0||"
	  "55cb941ff24f operator+ (/tmp/perffix/busy)" },
};

static void check_fixture(const struct fixture *fx)
{
	char path[256];
	struct perf_text *p;
	struct perf_sample s;
	uint64_t n = 0, frames = 0, jobs = 0, kernel = 0, unknown = 0;
	int64_t last_ts = 0;
	bool ordered = true;
	int rc, i;

	snprintf(path, sizeof(path), FIXTURES "%s", fx->name);
	p = perf_text_open(path);
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "%s: %s (run from the repository root)\n", path,
			strerror(errno));
		return;
	}
	while ((rc = perf_text_next(p, &s)) > 0) {
		if (n == 0) {
			char *r = render(&s);

			CHECK_STR(r, fx->first);
			free(r);
			CHECK_EQ_I64(s.cpu, fx->cpu0);
		}
		n++;
		frames += s.nframes;
		jobs += !strcmp(s.comm, "job:7 1.500000:");
		kernel += !strcmp(s.frames[0].dso, "[kernel.kallsyms]");
		unknown += !strcmp(s.frames[0].symbol, "[unknown]");
		ordered &= s.ts_ns >= last_ts;
		last_ts = s.ts_ns;
		CHECK(fx->has_pid ? s.pid == 24866 : s.pid == -1);
	}
	CHECK_EQ_I64(rc, 0);
	CHECK_EQ_I64(n, fx->samples);
	CHECK_EQ_I64(frames, fx->frames);
	CHECK_EQ_I64(perf_text_lines(p), fx->lines);
	CHECK_EQ_I64(perf_text_stat(p, PERF_TEXT_STAT_SAMPLES), fx->samples);
	for (i = 1; i < PERF_TEXT_STAT_COUNT; i++)
		CHECK_EQ_I64(perf_text_stat(p, i), 0);
	CHECK(jobs > 0);    /* "job:7 1.500000:" threads are parsed */
	CHECK(kernel > 0);  /* read() from /dev/zero */
	CHECK(unknown > 0); /* code in an anonymous mapping */
	CHECK(ordered);
	perf_text_close(p);
}

static void test_fixtures(void)
{
	size_t i;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		check_fixture(&fixtures[i]);
}

/* The same recording printed three ways gives the same samples. */
static void test_fixture_views_agree(void)
{
	struct perf_text *a = perf_text_open(FIXTURES "callchain.txt");
	struct perf_text *b = perf_text_open(FIXTURES "callchain_ns.txt");
	struct perf_sample sa, sb;
	bool same = true;
	size_t n = 0, i;

	CHECK(a && b);
	if (!a || !b)
		goto out;
	while (perf_text_next(a, &sa) > 0 && perf_text_next(b, &sb) > 0) {
		same &= sa.tid == sb.tid && !strcmp(sa.comm, sb.comm) &&
			sa.ts_ns / 1000 == sb.ts_ns / 1000 &&
			sa.nframes == sb.nframes;
		for (i = 0; same && i < sa.nframes; i++)
			same &= sa.frames[i].address == sb.frames[i].address &&
				!strcmp(sa.frames[i].symbol,
					sb.frames[i].symbol);
		n++;
	}
	CHECK(same);
	CHECK_EQ_I64(n, 403);
out:
	perf_text_close(a);
	perf_text_close(b);
}

/* ---- timestamps ---- */

static int64_t ts(const char *s)
{
	int64_t ns = -42;

	if (perf_text_parse_time(s, strlen(s), &ns))
		return -1;
	return ns;
}

static void test_time_exact(void)
{
	uint64_t sec, us;
	bool exact = true;
	char buf[64];

	CHECK_EQ_I64(ts("1.000001"), 1000001000);
	CHECK_EQ_I64(ts("2207.475658"), 2207475658000);
	CHECK_EQ_I64(ts("2341.395985161"), 2341395985161);
	CHECK_EQ_I64(ts("0.5"), 500000000);
	CHECK_EQ_I64(ts("12.34"), 12340000000);
	CHECK_EQ_I64(ts("0.000000001"), 1);
	CHECK_EQ_I64(ts("0.0"), 0);
	CHECK_EQ_I64(ts(".5"), 500000000);
	CHECK_EQ_I64(ts(".123456"), 123456000);
	CHECK_EQ_I64(ts(".000000001"), 1);
	CHECK_EQ_I64(ts("007.100"), 7100000000);
	CHECK_EQ_I64(ts("9223372036.854775807"), INT64_MAX);
	/* every microsecond of a few seconds, where a double loses 1 ns */
	for (sec = 1; sec < 4000000; sec += 999983)
		for (us = 0; us < 1000000; us += 7) {
			snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64,
				 sec, us);
			exact &= ts(buf) == (int64_t)(sec * 1000000000 +
						      us * 1000);
		}
	CHECK(exact);
}

static void test_time_malformed(void)
{
	static const char *const bad[] = {
		"", ".", "1", "1.", ".1234567890", "1.1234567890", "1.5.", "-1.5",
		"+1.5", "1 .5", "1. 5", "1a.5", "1.5a", "0x1.5",
		"9223372036.854775808", "9223372037.0",
		"99999999999999999999999.0", "1,5",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(ts(bad[i]), -1);
		if (ts(bad[i]) != -1)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
	}
}

/* ---- headers ---- */

static void expect_one(const char *text, const char *want)
{
	struct run r;

	run(text, &r);
	CHECK_EQ_I64(r.n, 1);
	CHECK_EQ_I64(r.rc, 0);
	if (r.n == 1)
		CHECK_STR(r.out[0], want);
	else
		fprintf(stderr, "  input: %s", text);
	CHECK_EQ_I64(other_stats(&r, -1, -1), 0);
	run_free(&r);
}

static void test_header_variants(void)
{
	/* tid only, no cpu, period + event */
	expect_one("busy 16319  2207.475658:    1001001 cpu-clock:pppH: \n"
		   "\t            11a2 leaf_work+0x19 (/tmp/busy)\n\n",
		   "busy|-1|16319|-1|2207475658000|1001001|cpu-clock:pppH|"
		   "11a2 leaf_work (/tmp/busy)");
	/* pid/tid and [cpu] */
	expect_one("busy 10/11 [003] 5.5: 1 x (y)\n",
		   "busy|10|11|3|5500000000|0||1 x (y)");
	/* a timestamp with no whole seconds */
	expect_one("busy 10/11 [003] .123456: 1 x (y)\n",
		   "busy|10|11|3|123456000|0||1 x (y)");
	/* comm with spaces, inner spacing kept */
	expect_one("busy  worker 2 16321 [001] 1.000001:\n\t1 f (d)\n",
		   "busy  worker 2|-1|16321|1|1000001000|0||1 f (d)");
	/* comm with digits and colons that look like a timestamp */
	expect_one("job:7 1.500000: 24869 [000]  2354.566052: 1 cpu-clock: \n"
		   "\t1 f (d)\n",
		   "job:7 1.500000:|-1|24869|0|2354566052000|1|cpu-clock|"
		   "1 f (d)");
	expect_one("a:1 2 3 4/5 6.000000001:\n\t1 f (d)\n",
		   "a:1 2 3|4|5|-1|6000000001|0||1 f (d)");
	/* comm of digits, comm with a bracket, empty comm */
	expect_one("1234 99 1.0:\n\t1 f (d)\n",
		   "1234|-1|99|-1|1000000000|0||1 f (d)");
	expect_one("[x] 99 1.0:\n\t1 f (d)\n",
		   "[x]|-1|99|-1|1000000000|0||1 f (d)");
	expect_one("   99 [2] 1.0:\n\t1 f (d)\n", "|-1|99|2|1000000000|0||1 f (d)");
	/* right-aligned comm, tabs (simpleperf puts one after comm) */
	expect_one("     busy\t42\t[001]\t3.25:\t7 cycles:\n\t1 f (d)\n",
		   "busy|-1|42|1|3250000000|7|cycles|1 f (d)");
	/* --ns */
	expect_one("busy 24866/24868 [000]  2354.563051268: cpu-clock:pppH: \n"
		   "\t1 f (d)\n",
		   "busy|24866|24868|0|2354563051268|0|cpu-clock:pppH|1 f (d)");
	/* tracepoint event with fields, frames below */
	expect_one("sh 5 [000] 9.100000: sched:sched_switch: prev_comm=sh "
		   "prev_pid=5 ==> next_comm=swapper/0 next_pid=0\n"
		   "\tffffffff81000000 __schedule+0x1 ([kernel.kallsyms])\n\n",
		   "sh|-1|5|0|9100000000|0|sched:sched_switch|"
		   "ffffffff81000000 __schedule ([kernel.kallsyms])");
}

/* Without -g the frame is on the header line and samples are not
 * separated by blank lines. */
static void test_flat_samples(void)
{
	struct run r;

	run("            busy 24871 [000]  2355.646901:    1001001 "
	    "cpu-clock:pppH:      55cb941ff24f operator++0x2b (/tmp/busy)\n"
	    "   busy worker 2 24873 [001]  2355.647000:      55cb941ff1e2 "
	    "leaf_work (/tmp/busy)\n"
	    "busy 24871 2355.648000: 1243 operator+ (/tmp/busy)\n"
	    "busy 24871 2355.649000: 1001001 1243 f (/tmp/busy)\n",
	    &r);
	CHECK_EQ_I64(r.n, 4);
	if (r.n == 4) {
		CHECK_STR(r.out[0], "busy|-1|24871|0|2355646901000|1001001|"
				    "cpu-clock:pppH|55cb941ff24f operator+ "
				    "(/tmp/busy)");
		CHECK_STR(r.out[1], "busy worker 2|-1|24873|1|2355647000000|0||"
				    "55cb941ff1e2 leaf_work (/tmp/busy)");
		/* a decimal-looking ip is not taken for a period */
		CHECK_STR(r.out[2], "busy|-1|24871|-1|2355648000000|0||"
				    "1243 operator+ (/tmp/busy)");
		CHECK_STR(r.out[3], "busy|-1|24871|-1|2355649000000|1001001||"
				    "1243 f (/tmp/busy)");
	}
	CHECK_EQ_I64(other_stats(&r, -1, -1), 0);
	run_free(&r);
}

/* ---- frames ---- */

static void expect_frame(const char *line, const char *want)
{
	char text[512], exp[512];

	snprintf(text, sizeof(text), "c 1 1.0:\n%s\n\n", line);
	snprintf(exp, sizeof(exp), "c|-1|1|-1|1000000000|0||%s", want);
	expect_one(text, exp);
}

static void test_frame_variants(void)
{
	expect_frame("\t    7f1fa55f9005 [unknown] (/tmp/perf-23656.map)",
		     "7f1fa55f9005 [unknown] (/tmp/perf-23656.map)");
	expect_frame("\t7f00 [unknown] ([unknown])", "7f00 [unknown] ([unknown])");
	expect_frame("\t1 operator+ (/b)", "1 operator+ (/b)");
	expect_frame("\t1 operator++0x2b (/b)", "1 operator+ (/b)");
	expect_frame("\t1 operator+=+0x1F (/b)", "1 operator+= (/b)");
	expect_frame("\t1 std::vector<int, std::allocator<int> >::push_back("
		     "int const&)+0x1f (/usr/lib/libx.so)",
		     "1 std::vector<int, std::allocator<int> >::push_back(int "
		     "const&) (/usr/lib/libx.so)");
	expect_frame("\t1 f(a (b)) const (/x)", "1 f(a (b)) const (/x)");
	expect_frame("\t1 a+b (/x)", "1 a+b (/x)");
	expect_frame("\t1 a+0x (/x)", "1 a+0x (/x)");
	expect_frame("\t1 a+0xzz (/x)", "1 a+0xzz (/x)");
	expect_frame("\t1 a+0x1 b (/x)", "1 a+0x1 b (/x)");
	expect_frame("\t1 f (/tmp/busy (deleted))", "1 f (/tmp/busy (deleted))");
	expect_frame("\t0xffffffff81000130 entry ([kernel.kallsyms])",
		     "ffffffff81000130 entry ([kernel.kallsyms])");
	expect_frame("\tffffffff816762d0 ([kernel.kallsyms])",
		     "ffffffff816762d0  ([kernel.kallsyms])");
	expect_frame("   1    spaced   name   (/x)   ", "1 spaced   name (/x)");
	expect_frame("\t1 f ()", "1 f ()");
	expect_frame("\t1 caf\xc3\xa9 (/x)", "1 caf\xc3\xa9 (/x)");
}

/* ---- robustness of the line structure ---- */

static void test_line_endings_and_blanks(void)
{
	struct run r;

	run("\n\n\r\n"
	    "a 1 1.0: \r\n\t1 f+0x1 (/x)\r\n\r\n"
	    "\r\n\n  \t \n"
	    "b 2 2.0:\r\n\t2 g (/y)\r\n\t3 h (/z)\r\n\n\n\n"
	    "c 3 3.0:\n\t4 i (/w)", /* no final newline nor blank line */
	    &r);
	CHECK_EQ_I64(r.n, 3);
	if (r.n == 3) {
		CHECK_STR(r.out[0], "a|-1|1|-1|1000000000|0||1 f (/x)");
		CHECK_STR(r.out[1], "b|-1|2|-1|2000000000|0||2 g (/y);3 h (/z)");
		CHECK_STR(r.out[2], "c|-1|3|-1|3000000000|0||4 i (/w)");
		CHECK_EQ_I64(r.line[0], 4);
		CHECK_EQ_I64(r.line[1], 10);
		CHECK_EQ_I64(r.line[2], 16);
	}
	CHECK_EQ_I64(other_stats(&r, -1, -1), 0);
	run_free(&r);
}

static void test_comments_and_no_frames(void)
{
	struct run r;

	run("# ========\n# captured on    : Sat Nov 22 00:37:27 2025\n#\n"
	    "a 1 1.0: 1 cpu-clock:\n\n"    /* no frames */
	    "b 2 2.0:\n"                   /* no frames, ended by a header */
	    "c 3 3.0:\n\t1 f (/x)\n\n"
	    "d 4 4.0:\n",                  /* no frames, ended by EOF */
	    &r);
	CHECK_EQ_I64(r.n, 1);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_NO_FRAMES], 3);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_COMMENT_LINES], 3);
	CHECK_EQ_I64(other_stats(&r, PERF_TEXT_STAT_NO_FRAMES,
				 PERF_TEXT_STAT_COMMENT_LINES), 0);
	CHECK_STR(r.err, "sample without frames");
	CHECK_EQ_I64(r.err_line, 10);
	run_free(&r);
}

static void test_malformed_headers(void)
{
	struct run r;

	run("garbage line\n\t1 f (/x)\n\t2 g (/x)\n\n"   /* bad header */
	    "a 1 1.0:\n\t1 f (/x)\n\n"
	    "a 1 nots:\n\t1 f (/x)\n\n"                  /* no timestamp */
	    "a 1.0:\n\t1 f (/x)\n\n"                     /* no tid */
	    "a x/1 1.0:\n\t1 f (/x)\n\n"                 /* bad pid */
	    "a 1/2/3 1.0:\n\t1 f (/x)\n\n"               /* two slashes */
	    "a 1 [x] 1.0:\n\t1 f (/x)\n\n"               /* bad cpu */
	    "[0] 1.0:\n\t1 f (/x)\n\n"                   /* lone cpu */
	    "a 99999999999 1.0:\n\t1 f (/x)\n\n"         /* tid overflow */
	    "a -1 1.0:\n\t1 f (/x)\n\n"                  /* negative tid */
	    "a 1 1.1234567890:\n\t1 f (/x)\n\n"          /* 10 decimals */
	    "a 1 1:\n\t1 f (/x)\n\n"                     /* no fraction */
	    "b 2 2.0:\n\t2 g (/y)\n",
	    &r);
	CHECK_EQ_I64(r.n, 2);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_SAMPLE], 11);
	CHECK_EQ_I64(other_stats(&r, PERF_TEXT_STAT_MALFORMED_SAMPLE, -1), 0);
	if (r.n == 2) {
		CHECK_STR(r.out[0], "a|-1|1|-1|1000000000|0||1 f (/x)");
		CHECK_STR(r.out[1], "b|-1|2|-1|2000000000|0||2 g (/y)");
	}
	CHECK_STR(r.err, "not a sample header");
	CHECK_EQ_I64(r.err_line, 35);
	run_free(&r);
}

static void test_malformed_frames(void)
{
	struct run r;

	run("a 1 1.0:\n\t1 f (/x)\n\tnot a frame\n\t2 g (/x)\n\n" /* dropped */
	    "b 2 2.0:\n\t1 f (/x)\n\n"
	    "c 3 3.0:\n\t1 f (/x\n\n"            /* no ')' */
	    "d 4 4.0:\n\tzz f (/x)\n\n"          /* address not hex */
	    "e 5 5.0:\n\t12345678901234567 f (/x)\n\n" /* address too long */
	    "f 6 6.0:\n\t1 f )/x(\n\n"           /* no matching '(' */
	    "g 7 7.0:\n\t1 f (/x)\n\t# comment\n\n" /* comment in a sample */
	    "\t1 orphan (/x)\n\t2 orphan (/x)\n\n" /* frames without header */
	    "h 8 8.0:\n\t1 f (/x)\n\t2 trunc (/us", /* truncated at EOF */
	    &r);
	CHECK_EQ_I64(r.n, 1);
	if (r.n == 1)
		CHECK_STR(r.out[0], "b|-1|2|-1|2000000000|0||1 f (/x)");
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_FRAME], 7);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_SAMPLE], 1);
	CHECK_EQ_I64(other_stats(&r, PERF_TEXT_STAT_MALFORMED_FRAME,
				 PERF_TEXT_STAT_MALFORMED_SAMPLE), 0);
	CHECK_STR(r.err, "not a frame line");
	CHECK_EQ_I64(r.err_line, 30);
	run_free(&r);
}

/* Lines with NUL bytes or invalid UTF-8, in and out of samples. */
static void test_not_text(void)
{
	static const char text[] =
		"a 1 1.0:\n\t1 f\0x (/x)\n\n"   /* NUL in a frame */
		"b\0 2 2.0:\n\t1 f (/x)\n\n"    /* NUL in a header */
		"c 3 3.0:\n\t1 \xff (/x)\n\n"   /* invalid byte */
		"d\xc3 4 4.0:\n\t1 f (/x)\n\n"  /* cut sequence */
		"e 5 5.0:\n\t1 \xe0\x80\x80 (/x)\n\n" /* overlong */
		"f 6 6.0:\n\t1 \xed\xa0\x80 (/x)\n\n" /* surrogate */
		"g 7 7.0:\n\t1 \xf4\x90\x80\x80 (/x)\n\n" /* > U+10FFFF */
		"h 8 8.0:\n\t1 \xf0\x9f\x98\x80 (/x)\n\n"; /* valid emoji */
	struct run r;

	run_len(text, sizeof(text) - 1, &r);
	CHECK_EQ_I64(r.n, 1);
	if (r.n == 1)
		CHECK_STR(r.out[0],
			  "h|-1|8|-1|8000000000|0||1 \xf0\x9f\x98\x80 (/x)");
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_LINE_NOT_TEXT], 7);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_FRAME], 5);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_SAMPLE], 2);
	run_free(&r);
}

/* Appends n bytes of c to buf at *len. */
static void fill(char *buf, size_t *len, char c, size_t n)
{
	memset(buf + *len, c, n);
	*len += n;
}

static void put(char *buf, size_t *len, const char *s)
{
	memcpy(buf + *len, s, strlen(s));
	*len += strlen(s);
}

static void test_long_lines(void)
{
	size_t cap = 11u << 20, len = 0, sym = PERF_TEXT_MAX_LINE - 8;
	char *buf = malloc(cap);
	struct run r;

	/* a 10 MB line between two samples */
	put(buf, &len, "a 1 1.0:\n\t1 f (/x)\n\n");
	fill(buf, &len, 'x', 10u << 20);
	put(buf, &len, "\n\t1 f (/x)\n\nb 2 2.0:\n\t1 f (/x)\n");
	run_len(buf, len, &r);
	CHECK_EQ_I64(r.n, 2);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_LINE_TOO_LONG], 1);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_SAMPLE], 1);
	CHECK_STR(r.err, "line too long");
	run_free(&r);

	/* a frame line of exactly the limit is kept, one byte more is not */
	len = 0;
	put(buf, &len, "a 1 1.0:\n\t1 ");
	fill(buf, &len, 's', sym);
	put(buf, &len, " (/x)\n\nb 2 2.0:\n\t1 ");
	fill(buf, &len, 's', sym + 1);
	put(buf, &len, " (/x)\n\t2 g (/x)\n\nc 3 3.0:\n\t1 f (/x)\n");
	run_len(buf, len, &r);
	CHECK_EQ_I64(r.n, 2);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_LINE_TOO_LONG], 1);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_MALFORMED_FRAME], 1);
	CHECK(r.n == 2 && strlen(r.out[0]) == 31 + sym);
	run_free(&r);
	free(buf);
}

static void test_too_large(void)
{
	size_t nfr = PERF_TEXT_MAX_FRAMES, i, len = 0, big = 1000000;
	char *buf = malloc(2 * nfr * 10 + 20 * (big + 16) + 64);
	struct run r;

	put(buf, &len, "a 1 1.0:\n");
	for (i = 0; i < nfr; i++)
		put(buf, &len, "\t1 f (/x)\n");
	put(buf, &len, "\nb 2 2.0:\n");
	for (i = 0; i <= nfr; i++) /* one frame too many */
		put(buf, &len, "\t1 f (/x)\n");
	put(buf, &len, "\nc 3 3.0:\n");
	for (i = 0; i < 17; i++) { /* 17 MB of symbols */
		put(buf, &len, "\t1 ");
		fill(buf, &len, 'y', big);
		put(buf, &len, " (/x)\n");
	}
	put(buf, &len, "\nd 4 4.0:\n\t1 f (/x)\n");
	run_len(buf, len, &r);
	CHECK_EQ_I64(r.n, 2);
	CHECK_EQ_I64(r.stats[PERF_TEXT_STAT_TOO_LARGE], 2);
	CHECK_EQ_I64(other_stats(&r, PERF_TEXT_STAT_TOO_LARGE, -1), 0);
	CHECK(r.n == 2 && !strncmp(r.out[1], "d|", 2));
	run_free(&r);
	free(buf);
}

/* Random damage to a real file: no crash, no hang, consistent samples. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_fuzz(void)
{
	static const char alphabet[] = "\0\n\r\t :./()[]+0x9af\xc3\xff";
	char *base = NULL, *buf;
	size_t n = 0, iter, k;
	FILE *f = fopen(FIXTURES "callchain.txt", "r");
	bool sane = true;

	CHECK(f != NULL);
	if (!f)
		return;
	base = malloc(16384);
	n = fread(base, 1, 16384, f);
	fclose(f);
	buf = malloc(n);
	for (iter = 0; iter < 3000; iter++) {
		struct perf_text *p;
		struct perf_sample s;
		size_t len = n - rnd() % 64, edits = 1 + rnd() % 16;
		FILE *m;

		memcpy(buf, base, n);
		for (k = 0; k < edits; k++)
			buf[rnd() % len] = alphabet[rnd() % (sizeof(alphabet) - 1)];
		m = file_of(buf, len);
		p = perf_text_open_file(m);
		while (perf_text_next(p, &s) > 0) {
			sane &= s.nframes >= 1 && s.tid >= 0 && s.ts_ns >= 0 &&
				s.comm && s.event && s.frames[0].symbol &&
				s.frames[s.nframes - 1].dso;
		}
		perf_text_close(p);
		fclose(m);
	}
	CHECK(sane);
	free(buf);
	free(base);
}

/* ---- detection and opening ---- */

static bool detect(const char *s)
{
	return perf_text_detect((const uint8_t *)s, strlen(s));
}

static void test_detect(void)
{
	static const char *const names[] = {
		"callchain.txt", "callchain_fields.txt", "callchain_ns.txt",
		"flat.txt", "flat_fields.txt",
	};
	uint8_t head[4096];
	size_t i, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), FIXTURES "%s", names[i]);
		f = fopen(path, "r");
		CHECK(f != NULL);
		if (!f)
			continue;
		n = fread(head, 1, sizeof(head), f);
		fclose(f);
		CHECK(perf_text_detect(head, n));
		CHECK(perf_text_detect(head, 64)); /* first line cut */
	}
	CHECK(detect("\r\n\n# perf script --header\n#\nbusy 1 [000] 1.5: \r\n"));
	CHECK(detect("  busy worker 2 5/6 1.000000001: 1 f (/x)"));
	CHECK(detect("busy 1 1.5:\xc3")); /* cut inside a character */
	CHECK(detect("busy 1/1 [000] .500000: 1 f (/x)\n")); /* 0.5 s */
	CHECK(!detect(""));
	CHECK(!detect("\n\n# only comments\n"));
	CHECK(!detect("# tracer: nop\n#\n          <idle>-0     [000] d..2  "
		      "1234.567890: sched_switch: prev_comm=swapper/0\n"));
	CHECK(!detect("  <idle>-0     [000]  1234.567890: sched_switch:\n"));
	CHECK(!detect("{\"traceEvents\": [{\"ts\": 1.5}]}\n"));
	CHECK(!detect("\t1 f (/x)\nbusy 1 1.5:\n"));
	CHECK(!detect("busy 1 1.5\n"));
	CHECK(!detect("busy\xff 1 1.5:\n"));
	CHECK(!perf_text_detect((const uint8_t *)"\x0a\x05\x08\x01\x10\x02", 6));
	CHECK(!perf_text_detect((const uint8_t *)"busy 1\0 1.5:\n", 13));
}

static void test_open_errors(void)
{
	struct perf_text *p;
	struct perf_sample s;

	errno = 0;
	p = perf_text_open(FIXTURES "does-not-exist.txt");
	CHECK(p == NULL);
	CHECK_EQ_I64(errno, ENOENT);
	p = perf_text_open("/dev/null");
	CHECK(p != NULL);
	CHECK_EQ_I64(perf_text_next(p, &s), 0);
	CHECK_EQ_I64(perf_text_next(p, &s), 0);
	CHECK(perf_text_last_error(p, NULL) == NULL);
	perf_text_close(p);
	perf_text_close(NULL);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_fixture_views_agree);
	RUN(test_time_exact);
	RUN(test_time_malformed);
	RUN(test_header_variants);
	RUN(test_flat_samples);
	RUN(test_frame_variants);
	RUN(test_line_endings_and_blanks);
	RUN(test_comments_and_no_frames);
	RUN(test_malformed_headers);
	RUN(test_malformed_frames);
	RUN(test_not_text);
	RUN(test_long_lines);
	RUN(test_too_large);
	RUN(test_fuzz);
	RUN(test_detect);
	RUN(test_open_errors);
	return unit_finish();
}
