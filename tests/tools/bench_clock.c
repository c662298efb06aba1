/* Benchmark: timestamp conversions per second of the offline clock graph
 * (userspace/clock/clock_graph.h), on the graph a long recording makes: a
 * clock snapshot per second (BOOTTIME, MONOTONIC, MONOTONIC_RAW, REALTIME,
 * MONOTONIC_COARSE, REALTIME_COARSE, with NTP-like drift) for SNAPSHOTS
 * seconds on each of two machines, joined by a REALTIME rendezvous.
 *
 *   bench_clock [-n CONVERSIONS] [-s SNAPSHOTS] [-r REPEATS]
 *
 * Cases, each the median of REPEATS runs of CONVERSIONS conversions:
 *   seq_1hop    growing BOOTTIME timestamps -> REALTIME (what sync does to a
 *               trace's events: the path and the last row are cached)
 *   seq_3hop    machine 1 BOOTTIME -> machine 0 BOOTTIME (through both
 *               REALTIMEs), growing timestamps
 *   random_1hop BOOTTIME -> REALTIME at random times (binary search)
 *   alternate   two destinations alternating (two cached paths)
 * Prints one line per case, "bench_clock case=NAME rate=R ns_per=N", rates
 * per second of this thread's CPU time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock/clock_graph.h"

#define NCLOCKS 6
#define MAX_REPEATS 50

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct btr_clock_key key(uint32_t id, uint32_t machine)
{
	struct btr_clock_key k;

	btr_clock_key_make(id, 0, 0, machine, &k);
	return k;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* One machine's snapshots: BOOTTIME starts at boot0, the others keep a
 * fixed offset plus a drift of up to +-50 us per second. */
static int add_machine(struct btr_clock_graph *g, uint32_t m, uint64_t boot0,
		       uint64_t real0, size_t n)
{
	static const uint32_t ids[NCLOCKS] = {
		BTR_CLOCK_BOOTTIME, BTR_CLOCK_MONOTONIC,
		BTR_CLOCK_MONOTONIC_RAW, BTR_CLOCK_REALTIME,
		BTR_CLOCK_MONOTONIC_COARSE, BTR_CLOCK_REALTIME_COARSE,
	};
	struct btr_clock_reading r[NCLOCKS];
	int64_t drift = 0;
	size_t i, c;

	for (i = 0; i < n; i++) {
		uint64_t boot = boot0 + i * 1000000000ull;

		drift += (int64_t)(rng() % 100001) - 50000;
		for (c = 0; c < NCLOCKS; c++) {
			memset(&r[c], 0, sizeof(r[c]));
			r[c].key = key(ids[c], m);
			r[c].unit_ns = 1;
		}
		r[0].ts = boot;
		r[1].ts = boot - 1000000000ull;
		r[2].ts = boot - 1000000000ull + (uint64_t)(drift / 2);
		r[3].ts = real0 + boot + (uint64_t)drift;
		r[4].ts = r[1].ts - (r[1].ts % 4000000ull);
		r[5].ts = r[3].ts - (r[3].ts % 4000000ull);
		if (btr_clock_graph_add_snapshot(g, r, NCLOCKS))
			return -1;
	}
	return 0;
}

struct bench_case {
	const char *name;
	struct btr_clock_key src, dst, dst2;
	uint64_t t0, span;
	int random, alternate;
};

static double run_case(struct btr_clock_graph *g, const struct bench_case *c,
		       uint64_t n, int64_t *sink)
{
	uint64_t i, step = c->span / n ? c->span / n : 1;
	int64_t acc = 0, ns;
	double t = cpu_s();

	for (i = 0; i < n; i++) {
		uint64_t ts = c->random ? c->t0 + rng() % c->span
					: c->t0 + i * step;
		struct btr_clock_key dst = c->alternate && (i & 1) ? c->dst2
								  : c->dst;

		if (btr_clock_graph_convert(g, c->src, (int64_t)ts, dst, &ns) ==
		    BTR_CLOCK_OK)
			acc += ns;
	}
	t = cpu_s() - t;
	*sink += acc;
	return (double)n / t;
}

int main(int argc, char **argv)
{
	struct btr_clock_graph *g = btr_clock_graph_new();
	uint64_t n = 10000000, snaps = 3600, boot0 = 5000000000ull;
	uint64_t real0 = 1700000000000000000ull;
	double rates[MAX_REPEATS];
	int repeats = 5, i, k, err = 1;
	int64_t sink = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			snaps = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			repeats = atoi(argv[++i]);
		else
			repeats = 0, i = argc;
	}
	if (!n || snaps < 2 || repeats < 1 || repeats > MAX_REPEATS) {
		fprintf(stderr, "usage: bench_clock [-n CONVERSIONS] [-s SNAPSHOTS] [-r REPEATS]\n");
		btr_clock_graph_free(g);
		return 64;
	}
	if (!g || add_machine(g, 0, boot0, real0, snaps) ||
	    add_machine(g, 1, boot0 * 3, real0 + 7000000000ull, snaps) ||
	    btr_clock_graph_add_zero_offset_edge(g, key(BTR_CLOCK_REALTIME, 1),
						 key(BTR_CLOCK_REALTIME, 0))) {
		fprintf(stderr, "bench_clock: cannot build the clock graph\n");
		goto cleanup;
	}
	{
		const uint64_t span = (snaps - 1) * 1000000000ull;
		const struct bench_case cases[] = {
			{ "seq_1hop", key(BTR_CLOCK_BOOTTIME, 0),
			  key(BTR_CLOCK_REALTIME, 0), key(0, 0), boot0, span,
			  0, 0 },
			{ "seq_3hop", key(BTR_CLOCK_BOOTTIME, 1),
			  key(BTR_CLOCK_BOOTTIME, 0), key(0, 0), boot0 * 3,
			  span, 0, 0 },
			{ "random_1hop", key(BTR_CLOCK_BOOTTIME, 0),
			  key(BTR_CLOCK_REALTIME, 0), key(0, 0), boot0, span,
			  1, 0 },
			{ "alternate", key(BTR_CLOCK_BOOTTIME, 0),
			  key(BTR_CLOCK_REALTIME, 0),
			  key(BTR_CLOCK_MONOTONIC, 0), boot0, span, 0, 1 },
		};

		for (k = 0; k < (int)(sizeof(cases) / sizeof(cases[0])); k++) {
			for (i = 0; i < repeats; i++)
				rates[i] = run_case(g, &cases[k], n, &sink);
			qsort(rates, (size_t)repeats, sizeof(double),
			      cmp_double);
			printf("bench_clock case=%s rate=%.0f rate_min=%.0f rate_max=%.0f ns_per=%.2f\n",
			       cases[k].name, rates[repeats / 2], rates[0],
			       rates[repeats - 1], 1e9 / rates[repeats / 2]);
		}
	}
	fprintf(stderr, "bench_clock: checksum %lld, %llu path searches\n",
		(long long)sink,
		(unsigned long long)btr_clock_graph_cache_misses(g));
	err = 0;
cleanup:
	btr_clock_graph_free(g);
	return err;
}
