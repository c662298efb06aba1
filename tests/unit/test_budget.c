/* Unit tests of the memory budget (record/budget.c) and of the CPU lists
 * it is computed for (record/cpus.c): the default split on small and big
 * hosts, the floor and cap of the rings, the overrides with and without
 * --memory, and the refusals. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "record/budget.h"
#include "record/cpus.h"
#include "unit.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

static int run(uint64_t memory, uint64_t buffer, uint64_t ring,
	       uint32_t nslots, uint32_t nonline, struct budget *b)
{
	struct budget_in in = { memory, buffer, ring, nslots, nonline, 4096, 0 };
	char err[256] = "";
	int r = budget_compute(&in, b, err, sizeof(err));

	if (r)
		fprintf(stderr, "  (refused: %s)\n", err);
	return r;
}

/* Every split adds up, keeps the buffer to half and the rings in range. */
static void check_invariants(const struct budget *b)
{
	CHECK(b->total == b->fixed + b->buffer + b->rings);
	CHECK(b->rings == b->nonline * b->ring_online + b->noffline * 4096ull);
	CHECK((b->ring_online & (b->ring_online - 1)) == 0);
	CHECK(b->ring_offline == 4096);
}

static void test_default_small_host(void)
{
	struct budget b;

	CHECK_EQ_I64(run(0, 0, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.memory, 128 * MiB);
	CHECK_EQ_I64(b.buffer, 64 * MiB); /* half */
	CHECK_EQ_I64(b.ring_online, 4 * MiB); /* the cap */
	CHECK(b.total <= b.memory);
	CHECK(!b.default_grown);
}

static void test_default_many_cpus(void)
{
	struct budget b;

	/* the worked example of budget.h */
	CHECK_EQ_I64(run(0, 0, 0, 192, 192, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.ring_online, 256 * KiB);
	CHECK_EQ_I64(b.fixed, 16 * MiB + 192 * 160 * KiB + 192 * 8 * KiB);
	CHECK(b.buffer < 64 * MiB && b.buffer >= 32 * MiB);
	CHECK(b.total <= 128 * MiB);
	CHECK_EQ_I64(b.buffer % (32 * KiB), 0);
	/* 64 CPUs: the buffer keeps its half, rings between floor and cap */
	CHECK_EQ_I64(run(0, 0, 0, 64, 64, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.buffer, 64 * MiB);
	CHECK_EQ_I64(b.ring_online, 512 * KiB);
	CHECK(b.total <= 128 * MiB);
	/* 224 online: still within the default, buffer at least 16 MiB */
	CHECK_EQ_I64(run(0, 0, 0, 224, 224, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.ring_online, 256 * KiB);
	CHECK(b.total <= 128 * MiB && b.buffer >= 16 * MiB);
	CHECK(!b.default_grown);
	/* 256 online: the default grows so the buffer keeps 16 MiB */
	CHECK_EQ_I64(run(0, 0, 0, 256, 256, &b), 0);
	check_invariants(&b);
	CHECK(b.default_grown);
	CHECK_EQ_I64(b.ring_online, 256 * KiB);
	CHECK(b.buffer >= 16 * MiB - 32 * KiB && b.buffer < 17 * MiB);
	CHECK(b.total <= b.memory && b.memory < 140 * MiB);
}

static void test_default_grows_for_huge_host(void)
{
	struct budget b;

	CHECK_EQ_I64(run(0, 0, 0, 512, 512, &b), 0);
	check_invariants(&b);
	CHECK(b.default_grown);
	CHECK(b.memory > 128 * MiB);
	CHECK_EQ_I64(b.ring_online, 256 * KiB);
	CHECK(b.buffer >= 16 * MiB - 32 * KiB);
	CHECK(b.total <= b.memory);
}

static void test_offline_cpus_get_a_page(void)
{
	struct budget b, all;

	/* 256 possible, 8 online: offline ids cost a page of ring each */
	CHECK_EQ_I64(run(0, 0, 0, 256, 8, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.noffline, 248);
	CHECK_EQ_I64(b.nonline, 8);
	CHECK_EQ_I64(b.ring_online, 4 * MiB);
	CHECK_EQ_I64(b.rings, 8 * 4 * MiB + 248 * 4096ull);
	CHECK_EQ_I64(run(0, 0, 0, 256, 256, &all), 0);
	CHECK(b.rings < all.rings);
}

static void test_memory_given(void)
{
	struct budget b;

	CHECK_EQ_I64(run(48 * MiB, 0, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.memory, 48 * MiB);
	CHECK_EQ_I64(b.buffer, 24 * MiB);
	CHECK_EQ_I64(b.ring_online, 2 * MiB); /* 7.7 MiB left for two */
	CHECK(b.total <= 48 * MiB);
	/* a small budget: the buffer gives way to the rings' floor */
	CHECK_EQ_I64(run(20 * MiB, 0, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK(b.buffer < 10 * MiB && b.buffer >= 3 * MiB);
	CHECK_EQ_I64(b.ring_online, 256 * KiB);
	CHECK(b.total <= 20 * MiB);
	/* the smallest budget the refusal names works */
	CHECK_EQ_I64(run(18 * MiB, 0, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK(b.total <= 18 * MiB);
	CHECK_EQ_I64(run(17 * MiB, 0, 0, 2, 2, &b), -1);
}

static void test_refused(void)
{
	struct budget b;

	CHECK_EQ_I64(run(4 * MiB, 0, 0, 2, 2, &b), -1);
	CHECK_EQ_I64(run(64 * MiB, 0, 0, 256, 256, &b), -1);
	/* overrides that exceed the budget given */
	CHECK_EQ_I64(run(32 * MiB, 30 * MiB, 0, 2, 2, &b), -1);
	CHECK_EQ_I64(run(32 * MiB, 0, 16 * MiB, 2, 2, &b), -1);
	CHECK_EQ_I64(run(32 * MiB, 4 * MiB, 4 * MiB, 2, 2, &b), 0);
	CHECK_EQ_I64(run(0, 0, 0, 4, 0, &b), -1);
}

static void test_overrides(void)
{
	struct budget b;

	/* without --memory: as given, the rest as the default sizes it */
	CHECK_EQ_I64(run(0, 256 * MiB, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.buffer, 256 * MiB);
	CHECK_EQ_I64(b.ring_online, 4 * MiB);
	CHECK(b.total > b.memory);
	CHECK_EQ_I64(run(0, 0, 100 * KiB, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.ring_online, 128 * KiB); /* rounded up */
	CHECK_EQ_I64(b.buffer, 64 * MiB);
	/* with --memory: the budget sizes the other part */
	CHECK_EQ_I64(run(64 * MiB, 8 * MiB, 0, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.buffer, 8 * MiB);
	CHECK_EQ_I64(b.ring_online, 4 * MiB);
	CHECK_EQ_I64(run(64 * MiB, 0, 64 * KiB, 2, 2, &b), 0);
	check_invariants(&b);
	CHECK_EQ_I64(b.ring_online, 64 * KiB); /* below the floor: asked */
	CHECK_EQ_I64(b.buffer, 32 * MiB);
	CHECK(b.total <= 64 * MiB);
}

static void test_cpu_lists(void)
{
	bool set[16];
	uint32_t n = 0, max = 0;

	CHECK_EQ_I64(cpus_parse_list("0-3,8,10-11\n", set, 16, &n, &max), 0);
	CHECK_EQ_I64(n, 7);
	CHECK_EQ_I64(max, 11);
	CHECK(set[0] && set[3] && !set[4] && set[8] && !set[9] && set[11]);
	CHECK_EQ_I64(cpus_parse_list("0", set, 16, &n, &max), 0);
	CHECK_EQ_I64(n, 1);
	CHECK_EQ_I64(max, 0);
	/* ids beyond the slots count in max only */
	CHECK_EQ_I64(cpus_parse_list("0-1,100", set, 16, &n, &max), 0);
	CHECK_EQ_I64(n, 2);
	CHECK_EQ_I64(max, 100);
	CHECK_EQ_I64(cpus_parse_list("", set, 16, &n, &max), -1);
	CHECK_EQ_I64(cpus_parse_list("3-1", set, 16, &n, &max), -1);
	CHECK_EQ_I64(cpus_parse_list("1,,2", set, 16, &n, &max), -1);
	CHECK_EQ_I64(cpus_parse_list("a", set, 16, &n, &max), -1);
	CHECK_EQ_I64(cpus_parse_list("0-99999", set, 16, &n, &max), -1);
	CHECK_EQ_I64(cpus_parse_list("1-", set, 16, &n, &max), -1);
}

static void test_cpus_of_this_host(void)
{
	struct cpus c, s;

	CHECK_EQ_I64(cpus_read(&c), 0);
	CHECK(c.nslots >= 1 && c.nonline >= 1 && c.nonline <= c.nslots);
	CHECK(c.npossible <= c.nslots);
	cpus_free(&c);
	CHECK_EQ_I64(cpus_simulate(&s, 256, 64), 0);
	CHECK(s.online[63] && !s.online[64]);
	CHECK_EQ_I64(s.nonline, 64);
	cpus_free(&s);
	CHECK_EQ_I64(cpus_simulate(&s, 4, 5), -EINVAL);
}

int main(void)
{
	RUN(test_default_small_host);
	RUN(test_default_many_cpus);
	RUN(test_default_grows_for_huge_host);
	RUN(test_offline_cpus_get_a_page);
	RUN(test_memory_given);
	RUN(test_refused);
	RUN(test_overrides);
	RUN(test_cpu_lists);
	RUN(test_cpus_of_this_host);
	return unit_finish();
}
