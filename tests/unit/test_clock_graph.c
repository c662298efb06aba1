/* Unit tests of the offline clock graph (userspace/clock/clock_graph.c):
 * Perfetto's documented examples, clock scoping, snapshot validation,
 * non-monotonic clocks, path search limits and order, and that the path
 * cache and allocation failures never change a result. */
#include "clock/clock_graph.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

static const struct btr_clock_key RT = { BTR_CLOCK_REALTIME, 0, 0, 0 };
static const struct btr_clock_key MONO = { BTR_CLOCK_MONOTONIC, 0, 0, 0 };
static const struct btr_clock_key RAW = { BTR_CLOCK_MONOTONIC_RAW, 0, 0, 0 };
static const struct btr_clock_key BOOT = { BTR_CLOCK_BOOTTIME, 0, 0, 0 };

/* Global clock `id` on machine 0. */
static struct btr_clock_key gk(uint32_t id)
{
	return (struct btr_clock_key){ id, 0, 0, 0 };
}

/* Sequence-scoped clock `id` of sequence `seq` on machine 0. */
static struct btr_clock_key sk(uint32_t id, uint32_t seq)
{
	return (struct btr_clock_key){ id, seq, 0, 0 };
}

static struct btr_clock_key on_machine(struct btr_clock_key k, uint32_t machine)
{
	k.machine = machine;
	return k;
}

static struct btr_clock_reading rd(struct btr_clock_key k, uint64_t ts)
{
	return (struct btr_clock_reading){ k, ts, 1, false };
}

static struct btr_clock_reading rdu(struct btr_clock_key k, uint64_t ts,
				    uint64_t unit)
{
	return (struct btr_clock_reading){ k, ts, unit, false };
}

static struct btr_clock_reading rdi(struct btr_clock_key k, uint64_t ts,
				    uint64_t unit)
{
	return (struct btr_clock_reading){ k, ts, unit, true };
}

#define READINGS(...) ((struct btr_clock_reading[]){ __VA_ARGS__ })
#define SNAP(g, ...)                                                           \
	btr_clock_graph_add_snapshot((g), READINGS(__VA_ARGS__),               \
				     sizeof(READINGS(__VA_ARGS__)) /           \
					     sizeof(struct btr_clock_reading))

static int64_t conv_ns;

/* Converts into conv_ns, which keeps INT64_MIN when the conversion fails. */
static enum btr_clock_result conv(struct btr_clock_graph *g,
				  struct btr_clock_key src, int64_t ts,
				  struct btr_clock_key dst)
{
	conv_ns = INT64_MIN;
	return btr_clock_graph_convert(g, src, ts, dst, &conv_ns);
}

#define CHECK_CONV(g, src, ts, dst, want)                                      \
	do {                                                                   \
		CHECK(conv((g), (src), (ts), (dst)) == BTR_CLOCK_OK);          \
		CHECK_EQ_I64(conv_ns, (want));                                 \
	} while (0)

#define CHECK_CONV_FAILS(g, src, ts, dst, result)                              \
	do {                                                                   \
		CHECK(conv((g), (src), (ts), (dst)) == (result));              \
		CHECK_EQ_I64(conv_ns, INT64_MIN);                              \
	} while (0)

#define MISSES(g) btr_clock_graph_cache_misses(g)

static void test_key_make(void)
{
	struct btr_clock_key k = { 1, 2, 3, 4 };

	CHECK(btr_clock_key_make(64, 0, 5, 6, &k) == -EINVAL);
	CHECK(btr_clock_key_make(127, 0, 5, 6, &k) == -EINVAL);
	CHECK(btr_clock_key_equal(k, (struct btr_clock_key){ 1, 2, 3, 4 }));
	CHECK(btr_clock_key_make(64, 9, 5, 6, &k) == 0);
	CHECK(btr_clock_key_equal(k, (struct btr_clock_key){ 64, 9, 5, 6 }));
	CHECK(btr_clock_key_make(127, 9, 0, 0, &k) == 0 && k.seq_id == 9);
	CHECK(btr_clock_key_make(63, 9, 0, 0, &k) == 0 && k.seq_id == 0);
	CHECK(btr_clock_key_make(128, 9, 0, 0, &k) == 0 && k.seq_id == 0);
	CHECK(btr_clock_key_make(BTR_CLOCK_BOOTTIME, 0, 7, 8, &k) == 0);
	CHECK(btr_clock_key_equal(k, (struct btr_clock_key){ 6, 0, 7, 8 }));
	CHECK(!btr_clock_key_equal(k, (struct btr_clock_key){ 6, 0, 7, 9 }));
	CHECK(btr_clock_key_cmp(MONO, BOOT) < 0);
	CHECK(btr_clock_key_cmp(sk(64, 2), sk(64, 1)) > 0);
	CHECK(btr_clock_key_cmp(BOOT, on_machine(BOOT, 1)) < 0);
	CHECK(btr_clock_key_cmp(BOOT, BOOT) == 0);
}

/* A 900 ns suspend between two snapshots: MONOTONIC stands still. */
static void test_suspend_example(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new(), *h;

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 2000), rd(MONO, 1100)) == 0);
	CHECK_CONV(g, MONO, 1050, BOOT, 1050);
	CHECK_CONV(g, MONO, 1104, BOOT, 2004); /* 1104 - 1100 + 2000 */
	CHECK_CONV(g, BOOT, 2004, MONO, 1104);
	btr_clock_graph_free(g);

	/* Same suspend, with 100 ns already slept before the first one. */
	h = btr_clock_graph_new();
	CHECK(SNAP(h, rd(BOOT, 1100), rd(MONO, 1000)) == 0);
	CHECK(SNAP(h, rd(BOOT, 2100), rd(MONO, 1100)) == 0);
	CHECK_CONV(h, MONO, 1104, BOOT, 2104);
	CHECK_CONV(h, MONO, 1099, BOOT, 1199);
	CHECK_CONV(h, BOOT, 2104, MONO, 1104);
	btr_clock_graph_free(h);
}

/* CUSTOM (global 128) -> MONOTONIC -> BOOTTIME, never in one snapshot. */
static void test_custom_two_hops(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(gk(128), 3500), rd(MONO, 1200)) == 0);
	CHECK(SNAP(g, rd(MONO, 1000), rd(BOOT, 7500)) == 0);
	CHECK_CONV(g, gk(128), 3503, BOOT, 7703);
	CHECK_CONV(g, BOOT, 7703, gk(128), 3503);
	btr_clock_graph_free(g);
}

static void test_sequence_scoped(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	struct btr_clock_key a, b;

	CHECK(btr_clock_key_make(64, 1, 0, 0, &a) == 0);
	CHECK(btr_clock_key_make(64, 2, 0, 0, &b) == 0);
	CHECK(SNAP(g, rd(BOOT, 1000), rd(a, 100)) == 0);
	CHECK(SNAP(g, rd(BOOT, 1000), rd(b, 500)) == 0);
	CHECK_CONV(g, a, 150, BOOT, 1050);
	CHECK_CONV(g, b, 550, BOOT, 1050);
	CHECK_CONV(g, a, 150, b, 550);
	CHECK_CONV_FAILS(g, sk(64, 3), 150, BOOT, BTR_CLOCK_UNKNOWN_SOURCE);
	btr_clock_graph_free(g);
}

static void test_global_ids(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	struct btr_clock_key g0, g0b, g1, boot1 = on_machine(BOOT, 1);

	CHECK(btr_clock_key_make(200, 7, 0, 0, &g0) == 0);
	CHECK(btr_clock_key_make(200, 9, 0, 0, &g0b) == 0);
	CHECK(btr_clock_key_make(200, 7, 0, 1, &g1) == 0);
	CHECK(SNAP(g, rd(BOOT, 1000), rd(g0, 0)) == 0);
	CHECK(SNAP(g, rd(boot1, 1000), rd(g1, 500)) == 0);
	CHECK_CONV(g, g0b, 10, BOOT, 1010); /* sequence ignored above 127 */
	CHECK_CONV(g, g1, 510, boot1, 1010);
	CHECK_CONV_FAILS(g, g0, 10, boot1, BTR_CLOCK_NO_PATH);
	CHECK(btr_clock_graph_add_zero_offset_edge(g, BOOT, boot1) == 0);
	CHECK_CONV(g, g0, 10, boot1, 1010);
	btr_clock_graph_free(g);
}

/* REALTIME stepping back becomes a target only, for good. */
static void test_realtime_back(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(RT, 5000)) == 0);
	CHECK_CONV(g, RT, 5100, BOOT, 1100);
	CHECK(SNAP(g, rd(BOOT, 2000), rd(RT, 3000)) == 0);
	CHECK_CONV(g, BOOT, 1500, RT, 5500);
	CHECK_CONV(g, BOOT, 2500, RT, 3500);
	CHECK_CONV_FAILS(g, RT, 5100, BOOT, BTR_CLOCK_NO_PATH);
	CHECK(SNAP(g, rd(BOOT, 3000), rd(RT, 4000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 4000), rd(RT, 5000), rd(MONO, 0)) == 0);
	CHECK_CONV_FAILS(g, RT, 5100, BOOT, BTR_CLOCK_NO_PATH);
	CHECK_CONV_FAILS(g, RT, 5100, MONO, BTR_CLOCK_NO_PATH);
	CHECK_CONV(g, BOOT, 3100, RT, 4100);
	CHECK_CONV(g, MONO, 10, RT, 5010);
	btr_clock_graph_free(g);
}

/* A lower value in another set of clocks is no step back. */
static void test_monotonic_per_series(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 5000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 2000), rd(MONO, 100), rd(RAW, 0)) == 0);
	CHECK_CONV(g, MONO, 5100, BOOT, 1100);
	CHECK(SNAP(g, rd(BOOT, 3000), rd(MONO, 50), rd(RAW, 10)) == 0);
	CHECK_CONV_FAILS(g, MONO, 5100, BOOT, BTR_CLOCK_NO_PATH);
	CHECK_CONV(g, BOOT, 1100, MONO, 5100);
	CHECK_CONV(g, RAW, 10, BOOT, 3000);
	btr_clock_graph_free(g);
}

/* Snapshots of one set of clocks in any order form one series. */
static void test_series_order_insensitive(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	CHECK(SNAP(g, rd(MONO, 1100), rd(BOOT, 2000)) == 0);
	CHECK_CONV(g, MONO, 1104, BOOT, 2004);
	CHECK(SNAP(g, rd(RT, 9000), rd(BOOT, 3000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 4000), rd(RT, 8000)) == 0);
	CHECK_CONV_FAILS(g, RT, 9000, BOOT, BTR_CLOCK_NO_PATH);
	btr_clock_graph_free(g);
}

/* Of two series linking BOOTTIME and MONOTONIC, the first one is used. */
static void test_first_series_wins(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 900), rd(RT, 50000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 2000), rd(MONO, 1900), rd(RT, 51000)) == 0);
	CHECK_CONV(g, BOOT, 2500, MONO, 2500);
	CHECK_CONV(g, MONO, 2400, RT, 51500);
	btr_clock_graph_free(g);
}

static void test_unit_multiplier(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000000), rdu(gk(128), 5, 1000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 1000000), rdu(gk(129), 10, 0)) == 0);
	CHECK(SNAP(g, rd(BOOT, 2000000), rdu(gk(129), 1000010, 1)) == 0);
	CHECK_CONV(g, gk(128), 7, BOOT, 1002000);
	CHECK_CONV(g, BOOT, 1002000, gk(128), 7000); /* ns, not raw */
	CHECK_CONV(g, gk(128), 7, gk(129), 2010);
	CHECK(SNAP(g, rd(BOOT, 3000000), rdu(gk(128), 2000, 1)) == -EINVAL);
	btr_clock_graph_free(g);
}

static void test_incremental(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	struct btr_clock_key inc = sk(64, 1), inc_us = sk(65, 1);

	CHECK(SNAP(g, rd(BOOT, 1000), rdi(inc, 500, 1)) == 0);
	CHECK_CONV(g, inc, 10, BOOT, 1010);
	CHECK_CONV(g, inc, 5, BOOT, 1015);
	CHECK_CONV(g, inc, -20, BOOT, 995);
	CHECK_CONV_FAILS(g, inc, 100, gk(999), BTR_CLOCK_UNKNOWN_TARGET);
	CHECK_CONV(g, inc, 1, BOOT, 996); /* the failure added nothing */
	CHECK(SNAP(g, rd(BOOT, 2000), rdi(inc, 600, 1)) == 0);
	CHECK_CONV(g, inc, 7, inc, 7); /* same clock: raw, nothing added */
	CHECK_CONV(g, inc, 1, BOOT, 2001);
	CHECK(SNAP(g, rd(BOOT, 5000), rdi(inc_us, 2, 1000)) == 0);
	CHECK_CONV(g, inc_us, 3, BOOT, 8000);
	CHECK_CONV(g, inc_us, 1, inc, 7600); /* BOOTTIME 9000 */
	btr_clock_graph_free(g);
}

static void test_unknown_and_no_path(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	CHECK(SNAP(g, rd(gk(200), 0), rd(gk(201), 5)) == 0);
	CHECK(SNAP(g, rd(gk(400), 7)) == 0);
	CHECK(btr_clock_graph_is_known(g, gk(400)));
	CHECK(!btr_clock_graph_is_known(g, gk(999)));
	CHECK_CONV_FAILS(g, MONO, 5, gk(200), BTR_CLOCK_NO_PATH);
	CHECK_CONV_FAILS(g, gk(400), 5, BOOT, BTR_CLOCK_NO_PATH);
	CHECK_CONV_FAILS(g, gk(999), 5, BOOT, BTR_CLOCK_UNKNOWN_SOURCE);
	CHECK_CONV_FAILS(g, gk(999), 5, gk(998), BTR_CLOCK_UNKNOWN_SOURCE);
	CHECK_CONV_FAILS(g, BOOT, 5, gk(999), BTR_CLOCK_UNKNOWN_TARGET);
	CHECK_CONV_FAILS(g, BOOT, 5, gk(999), BTR_CLOCK_UNKNOWN_TARGET);
	CHECK_CONV(g, gk(999), 5, gk(999), 5);
	btr_clock_graph_free(g);
}

/* Every rejected snapshot leaves the graph as it was. */
static void test_atomic_rejection(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(BOOT, 1000), rd(RT, 5000)) == 0);
	CHECK(SNAP(g, rd(sk(64, 1), 5), rd(BOOT, 1000)) == 0);
	CHECK(SNAP(g, rd(RT, 4000), rd(BOOT, 2000), rd(gk(200), 7),
		   rd(gk(200), 8)) == -EINVAL);
	CHECK(SNAP(g, rd(BOOT, 2000), rdu(RT, 4, 1000), rd(MONO, 1)) == -EINVAL);
	CHECK(SNAP(g, rd(BOOT, 2000), rdi(sk(64, 1), 6, 1)) == -EINVAL);
	CHECK(SNAP(g, rd(BOOT, 2000), rdi(MONO, 6, 1)) == -EINVAL);
	CHECK(SNAP(g, rd(BOOT, 2000), rdi(gk(128), 6, 1)) == -EINVAL);
	CHECK(!btr_clock_graph_is_known(g, gk(200)));
	CHECK(!btr_clock_graph_is_known(g, MONO));
	CHECK(!btr_clock_graph_is_known(g, gk(128)));
	CHECK_CONV(g, RT, 5100, BOOT, 1100);  /* RT was not marked */
	CHECK_CONV(g, BOOT, 3000, RT, 7000);  /* no sample appended */
	CHECK_CONV(g, sk(64, 1), 6, BOOT, 1001);
	CHECK(SNAP(g, rd(BOOT, 2000), rdi(sk(66, 1), 6, 1)) == 0);
	CHECK_CONV(g, sk(66, 1), 1, BOOT, 2001);
	btr_clock_graph_free(g);
}

static void test_trace_clock(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(btr_clock_key_equal(btr_clock_graph_trace_clock(g),
				  gk(BTR_CLOCK_TRACE_FILE)));
	btr_clock_graph_set_trace_clock(g, BOOT);
	CHECK(btr_clock_key_equal(btr_clock_graph_trace_clock(g), BOOT));
	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	CHECK(SNAP(g, rd(BOOT, 900), rd(MONO, 2000)) == -EINVAL);
	CHECK_CONV(g, MONO, 2500, BOOT, 2500);
	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1500)) == 0); /* equal is fine */
	CHECK_CONV(g, MONO, 1600, BOOT, 1100);
	CHECK(SNAP(g, rd(BOOT, 500), rd(RT, 10)) == 0); /* other series */
	btr_clock_graph_set_trace_clock(g, gk(300));
	CHECK(SNAP(g, rdu(gk(300), 5, 1000), rd(BOOT, 6000)) == -EINVAL);
	CHECK(!btr_clock_graph_is_known(g, gk(300)));
	CHECK(SNAP(g, rdu(gk(300), 5000, 0), rd(BOOT, 6000)) == 0);
	btr_clock_graph_free(g);
}

/* Chain 128 - 129 - ... - 133, each link +10 ns. */
static void test_hop_limit(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	uint32_t id;

	for (id = 128; id < 133; id++)
		CHECK(SNAP(g, rd(gk(id), 0), rd(gk(id + 1), 10)) == 0);
	CHECK_CONV(g, gk(128), 5, gk(132), 45);
	CHECK_CONV(g, gk(129), 5, gk(133), 45);
	CHECK_CONV(g, gk(133), 45, gk(129), 5);
	CHECK_CONV_FAILS(g, gk(128), 5, gk(133), BTR_CLOCK_NO_PATH);
	CHECK_CONV_FAILS(g, gk(133), 5, gk(128), BTR_CLOCK_NO_PATH);
	btr_clock_graph_free(g);
}

/* Two 2-link paths from 200 to 201, through 150 (+1000) and MONOTONIC
 * (+100); the one through the lower clock id wins in either order. */
static void build_tie(struct btr_clock_graph *g, bool low_first)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (low_first == (i == 0)) {
			CHECK(SNAP(g, rd(gk(200), 0), rd(MONO, 100)) == 0);
			CHECK(SNAP(g, rd(MONO, 0), rd(gk(201), 0)) == 0);
		} else {
			CHECK(SNAP(g, rd(gk(200), 0), rd(gk(150), 0)) == 0);
			CHECK(SNAP(g, rd(gk(150), 0), rd(gk(201), 1000)) == 0);
		}
	}
}

static void test_tie_break(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	struct btr_clock_graph *h = btr_clock_graph_new();

	build_tie(g, false);
	build_tie(h, true);
	CHECK_CONV(g, gk(200), 5, gk(201), 105);
	CHECK_CONV(h, gk(200), 5, gk(201), 105);
	/* a 3-link path through clock 1 loses to the 2-link ones */
	CHECK(SNAP(g, rd(gk(200), 0), rd(RT, 0)) == 0);
	CHECK(SNAP(g, rd(RT, 0), rd(gk(170), 0)) == 0);
	CHECK(SNAP(g, rd(gk(170), 0), rd(gk(201), 7)) == 0);
	CHECK_CONV(g, gk(200), 5, gk(201), 105);
	CHECK_CONV(g, RT, 5, gk(201), 12);
	btr_clock_graph_free(g);
	btr_clock_graph_free(h);
}

/* A new shorter path wins at once, for old timestamps too. */
static void test_shorter_path_wins(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(gk(128), 100), rd(gk(129), 200)) == 0);
	CHECK(SNAP(g, rd(gk(129), 100), rd(gk(130), 300)) == 0);
	CHECK_CONV(g, gk(128), 150, gk(130), 450);
	CHECK(SNAP(g, rd(gk(128), 1000), rd(gk(130), 1010)) == 0);
	CHECK_CONV(g, gk(128), 150, gk(130), 160);
	btr_clock_graph_free(g);
}

/* Last row <= ts; the first row before all of them; the last of equals. */
static void test_row_lookup(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();

	CHECK(SNAP(g, rd(MONO, 100), rd(BOOT, 1000)) == 0);
	CHECK(SNAP(g, rd(MONO, 200), rd(BOOT, 2000)) == 0);
	CHECK(SNAP(g, rd(MONO, 200), rd(BOOT, 2500)) == 0);
	CHECK(SNAP(g, rd(MONO, 300), rd(BOOT, 3000)) == 0);
	CHECK_CONV(g, MONO, 50, BOOT, 950);
	CHECK_CONV(g, MONO, 199, BOOT, 1099);
	CHECK_CONV(g, MONO, 200, BOOT, 2500);
	CHECK_CONV(g, MONO, 250, BOOT, 2550);
	CHECK_CONV(g, MONO, 400, BOOT, 3100);
	CHECK_CONV(g, BOOT, 2200, MONO, 400); /* row 2000, not interpolated */
	CHECK_CONV(g, BOOT, 10, MONO, -890);  /* negative results are kept */
	btr_clock_graph_free(g);
}

static void test_edges(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	struct btr_clock_key mono1 = on_machine(MONO, 1);

	CHECK(btr_clock_graph_add_edge(g, MONO, 1000, mono1, 1500) == 0);
	CHECK_CONV(g, mono1, 1600, MONO, 1100);
	CHECK(SNAP(g, rd(BOOT, 0), rdu(gk(300), 1, 1000)) == 0);
	CHECK(btr_clock_graph_add_edge(g, gk(300), 2, gk(301), 5000) == 0);
	CHECK_CONV(g, gk(301), 5500, gk(300), 2500);
	CHECK(btr_clock_graph_add_zero_offset_edge(g, RT, on_machine(RT, 2)) == 0);
	CHECK_CONV(g, on_machine(RT, 2), 77, RT, 77);
	CHECK(btr_clock_graph_add_edge(g, RT, 5, RT, 6) == -EINVAL);
	btr_clock_graph_free(g);
}

static void test_cache_misses(void)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	int i;

	CHECK(SNAP(g, rd(BOOT, 1000), rd(MONO, 1000)) == 0);
	for (i = 0; i < 3; i++)
		CHECK_CONV(g, MONO, 1000 + i, BOOT, 1000 + i);
	CHECK_EQ_I64(MISSES(g), 1);
	CHECK(SNAP(g, rd(BOOT, 2000), rd(MONO, 1100)) == 0);
	CHECK_CONV(g, MONO, 1104, BOOT, 2004);
	CHECK_EQ_I64(MISSES(g), 2);
	btr_clock_graph_set_cache(g, false);
	for (i = 0; i < 3; i++)
		CHECK_CONV(g, MONO, 1104, BOOT, 2004);
	CHECK_EQ_I64(MISSES(g), 5);
	btr_clock_graph_free(g);
}

/* ---- cached and uncached graphs agree on random streams ---- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#define NRAND_CLOCKS 11

/* Clock c of the random graph at time now; the last one is never in a
 * snapshot. */
static struct btr_clock_reading random_reading(int c, uint64_t now)
{
	static const uint32_t ids[NRAND_CLOCKS] = { 1, 3, 5, 6, 128, 129, 130,
						    131, 64, 65, 999 };
	uint32_t id = ids[c];
	struct btr_clock_key k = sk(id, id >= 64 && id < 128 ? 1 : 0);
	uint64_t drift = now / (uint64_t)(c + 2);

	if (id == BTR_CLOCK_REALTIME && rng() % 4 == 0)
		drift = 0; /* steps back now and then */
	if (id == 64)
		return rdu(k, (now + drift) / 1000, 1000);
	if (id == 65)
		return rdi(k, now + drift, 1);
	return rd(k, now + 1000000 * (uint64_t)c + drift);
}

/* A snapshot of 1 to 3 neighbours in the list of clocks, so that clocks
 * further apart need several links. */
static void random_snapshot(struct btr_clock_graph **gs, uint64_t now)
{
	struct btr_clock_reading r[3];
	size_t n = 1 + rng() % 3, i;
	int first = (int)(rng() % (NRAND_CLOCKS - n)), k;

	for (i = 0; i < n; i++)
		r[i] = random_reading(first + (int)i, now);
	for (k = 0; k < 2; k++)
		btr_clock_graph_add_snapshot(gs[k], r, n);
}

/* A timestamp of clock c a little before now (a delta for the incremental
 * clock), much earlier now and then. */
static int64_t random_ts(int c, uint64_t now)
{
	struct btr_clock_reading r;

	now -= rng() % (rng() % 16 ? 200000 : 20000000);
	r = random_reading(c, now);
	return r.incremental ? (int64_t)(rng() % 5000) : (int64_t)r.ts;
}

static void test_cache_equivalence(void)
{
	struct btr_clock_graph *gs[2] = { btr_clock_graph_new(),
					  btr_clock_graph_new() };
	struct btr_clock_key src = BOOT, dst = BOOT;
	uint64_t now = 1000000000;
	int i, a = 0, b = 0, mismatches = 0, ok = 0, far = 0;

	btr_clock_graph_set_cache(gs[1], false);
	for (i = 0; i < 5000; i++) {
		int64_t out[2] = { 0, 0 }, ts;
		enum btr_clock_result res[2];
		int k;

		if (i % 10 == 0) { /* runs of one pair */
			a = (int)(rng() % NRAND_CLOCKS);
			b = (int)(rng() % NRAND_CLOCKS);
			src = random_reading(a, now).key;
			dst = random_reading(b, now).key;
		}
		now += rng() % 5000;
		if (i % 50 == 0)
			random_snapshot(gs, now);
		ts = random_ts(a, now);
		for (k = 0; k < 2; k++)
			res[k] = btr_clock_graph_convert(gs[k], src, ts, dst,
							 &out[k]);
		mismatches += res[0] != res[1] || out[0] != out[1];
		ok += res[0] == BTR_CLOCK_OK;
		far += res[0] == BTR_CLOCK_OK && abs(a - b) >= 3;
	}
	CHECK_EQ_I64(mismatches, 0);
	CHECK(ok > 1000);
	CHECK(far > 100);
	CHECK(MISSES(gs[0]) * 4 < MISSES(gs[1]));
	btr_clock_graph_free(gs[0]);
	btr_clock_graph_free(gs[1]);
}

/* ---- allocation failures leave the graph as it was ---- */

struct probe {
	struct btr_clock_key src;
	int64_t ts;
	struct btr_clock_key dst;
	enum btr_clock_result before_result;
	int64_t before, after;
};

/* For every k, fails the k-th allocation of adding r to a fresh build. */
static void check_alloc_failures(void (*build)(struct btr_clock_graph *),
				 const struct btr_clock_reading *r, size_t n,
				 const struct probe *p)
{
	int failures = 0, rc = -ENOMEM;
	long k;

	for (k = 0; rc && k < 100; k++) {
		struct btr_clock_graph *g = btr_clock_graph_new();

		build(g);
		btr_clock_graph_fail_allocs_after(g, k);
		rc = btr_clock_graph_add_snapshot(g, r, n);
		btr_clock_graph_fail_allocs_after(g, -1);
		CHECK(rc == 0 || rc == -ENOMEM);
		failures += rc != 0;
		if (rc) {
			CHECK(conv(g, p->src, p->ts, p->dst) == p->before_result);
			CHECK_EQ_I64(conv_ns, p->before);
		} else {
			CHECK_CONV(g, p->src, p->ts, p->dst, p->after);
		}
		btr_clock_graph_free(g);
	}
	CHECK(rc == 0);
	CHECK(failures > 0);
}

/* Eight clocks, four rows in the {BOOTTIME, MONOTONIC} series. */
static void build_base(struct btr_clock_graph *g)
{
	uint32_t id;
	int i;

	for (i = 1; i <= 4; i++)
		CHECK(SNAP(g, rd(BOOT, 1000 * i), rd(MONO, 1100 * i)) == 0);
	for (id = 128; id < 134; id++)
		CHECK(SNAP(g, rd(gk(id), 0), rd(BOOT, 0)) == 0);
}

static void test_alloc_failures(void)
{
	const struct btr_clock_reading fresh[] = { rd(gk(200), 9000),
						   rd(gk(201), 1),
						   rd(BOOT, 5000) };
	const struct btr_clock_reading row[] = { rd(MONO, 6000),
						 rd(BOOT, 5000) };
	const struct probe new_clock = { gk(200), 9001, MONO,
					 BTR_CLOCK_UNKNOWN_SOURCE, INT64_MIN,
					 5401 };
	const struct probe new_row = { MONO, 6001, BOOT, BTR_CLOCK_OK, 5601,
				       5001 };

	check_alloc_failures(build_base, fresh, 3, &new_clock);
	check_alloc_failures(build_base, row, 2, &new_row);
}

int main(void)
{
	RUN(test_key_make);
	RUN(test_suspend_example);
	RUN(test_custom_two_hops);
	RUN(test_sequence_scoped);
	RUN(test_global_ids);
	RUN(test_realtime_back);
	RUN(test_monotonic_per_series);
	RUN(test_series_order_insensitive);
	RUN(test_first_series_wins);
	RUN(test_unit_multiplier);
	RUN(test_incremental);
	RUN(test_unknown_and_no_path);
	RUN(test_atomic_rejection);
	RUN(test_trace_clock);
	RUN(test_hop_limit);
	RUN(test_tie_break);
	RUN(test_shorter_path_wins);
	RUN(test_row_lookup);
	RUN(test_edges);
	RUN(test_cache_misses);
	RUN(test_cache_equivalence);
	RUN(test_alloc_failures);
	return unit_finish();
}
