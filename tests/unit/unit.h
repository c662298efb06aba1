/* Minimal unit-test harness: CHECK macros that count passes and failures,
 * and a closing "N passed, N failed" line. Each tests/unit/test_*.c is its
 * own program: it defines test functions, calls them from main through
 * RUN(), and returns unit_finish(). */
#ifndef BTR_UNIT_H
#define BTR_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

/* Pseudo-random numbers for randomized tests (xorshift64, a fixed seed:
 * a failure repeats). */
static uint64_t unit_rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t unit_rand(void)
{
	unit_rng ^= unit_rng << 13;
	unit_rng ^= unit_rng >> 7;
	unit_rng ^= unit_rng << 17;
	return unit_rng;
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (cond) {                                                    \
			unit_passed++;                                         \
		} else {                                                       \
			unit_failed++;                                         \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_EQ_I64(a, b)                                                     \
	do {                                                                   \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                  \
		if (a_ == b_) {                                                \
			unit_passed++;                                         \
		} else {                                                       \
			unit_failed++;                                         \
			fprintf(stderr,                                        \
				"%s:%d: CHECK failed: %s == %s (%" PRId64      \
				" != %" PRId64 ")\n",                          \
				__FILE__, __LINE__, #a, #b, a_, b_);           \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (a_ && b_ && strcmp(a_, b_) == 0) {                         \
			unit_passed++;                                         \
		} else {                                                       \
			unit_failed++;                                         \
			fprintf(stderr,                                        \
				"%s:%d: CHECK failed: %s == %s (\"%s\" != "    \
				"\"%s\")\n",                                   \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",\
				b_ ? b_ : "(null)");                           \
		}                                                              \
	} while (0)

/* A test that made no check at all proves nothing: it fails. */
#define RUN(fn)                                                                \
	do {                                                                   \
		int failed_ = unit_failed, checks_ = unit_passed + unit_failed; \
		fn();                                                          \
		if (unit_passed + unit_failed == checks_) {                    \
			unit_failed++;                                         \
			fprintf(stderr, "%s: made no check\n", #fn);           \
		}                                                              \
		fprintf(stderr, "%s %s\n",                                     \
			unit_failed == failed_ ? "ok  " : "FAIL", #fn);        \
	} while (0)

static inline int unit_finish(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
