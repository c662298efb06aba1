/* Benchmark helper of scripts/bench-sync.sh.
 *
 *   bench_sync gen SIZE OUT    writes a recorder-like trace of about SIZE
 *                              bytes (K, M, G suffixes) to OUT
 *   bench_sync rewrite [-n N]  timestamps rewritten per second by the
 *                              wire-level rewriting of `sync` (N bundles)
 *
 * The generated trace: a clock snapshot (BOOTTIME, MONOTONIC, REALTIME,
 * MONOTONIC_RAW) every 1000 bundles with a slow drift; per-CPU
 * FtraceEventBundles (4 CPUs, 1000 compact switches, 500 compact wakings
 * and 20 regular task_renames each, one sequence per CPU). A recorder
 * writes every CPU's bundle at each drain: round k holds one bundle per
 * CPU, each covering the same 12 ms [t0 + 12k ms, t0 + 12(k+1) ms), so
 * the CPUs interleave in the file and in time while the bundles of one
 * CPU follow each other without overlap. Every 10 bundles a packet on
 * MONOTONIC (with timestamp_clock_id) and one without timestamp.
 *
 * Threads: THREADS tids (1000...), drawn for each switch-in and waking
 * from a Zipf distribution of exponent 1 over a shuffled order (a real
 * host: a few threads make most events, a long tail makes few); 10% of
 * switches go to the idle task, a switch-out leaves its task runnable
 * (30%), sleeping (65%) or in D (5%). The thread mix is printed: the
 * share of the events of the top 10 and top 100 threads.
 *
 * `rewrite` prints "bench_sync case=NAME rate=R" lines: timestamps per
 * second of CPU time, trace clock BOOTTIME (bundles copied unchanged) and
 * MONOTONIC (every event converted and re-encoded). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/packet_info.h"
#include "convert/rewrite.h"
#include "clock/timeline.h"
#include "util/wire.h"
#include "util/parse.h"

#define CPUS 4
#define SWITCHES 1000
#define WAKINGS 500
#define EVENTS 20
#ifndef THREADS
#define THREADS 2000
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void packed_deltas(struct wbuf *b, uint32_t field, const uint64_t *t,
			  size_t n)
{
	static uint64_t d[SWITCHES];
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = t[i] - (i ? t[i - 1] : 0);
	wbuf_field_packed(b, field, d, n);
}

/* Zipf(1) over THREADS ranks, each rank a tid (shuffled). */
static double zipf_cdf[THREADS];
static uint32_t zipf_tid[THREADS];
static uint64_t tid_events[THREADS];

static void zipf_init(void)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < THREADS; i++)
		sum += 1.0 / (double)(i + 1);
	for (i = 0; i < THREADS; i++) {
		zipf_cdf[i] = (i ? zipf_cdf[i - 1] : 0) + 1.0 / (double)(i + 1) / sum;
		zipf_tid[i] = (uint32_t)i;
	}
	for (i = THREADS - 1; i > 0; i--) {
		size_t j = next_rand() % (i + 1);
		uint32_t x = zipf_tid[i];

		zipf_tid[i] = zipf_tid[j];
		zipf_tid[j] = x;
	}
}

/* A thread (index 0..THREADS) drawn from the Zipf distribution. */
static uint32_t zipf_thread(void)
{
	double u = (double)(next_rand() >> 11) * 0x1.0p-53;
	size_t lo = 0, hi = THREADS - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	tid_events[zipf_tid[lo]]++;
	return zipf_tid[lo];
}

static void packed_fill(struct wbuf *b, uint32_t field, size_t n, uint64_t base,
			uint64_t mod)
{
	static uint64_t v[SWITCHES];
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = base + next_rand() % mod;
	wbuf_field_packed(b, field, v, n);
}

/* One bundle of `cpu` covering [t0, t0 + 12 ms) (ns, BOOTTIME). */
static void bundle(struct wbuf *p, uint32_t cpu, uint64_t t0, uint64_t prev_end)
{
	static uint64_t sw[SWITCHES], wk[WAKINGS], st[SWITCHES], pid[SWITCHES],
		comm[SWITCHES], wpid[WAKINGS], wcomm[WAKINGS];
	size_t m, c, i;

	for (i = 0; i < SWITCHES; i++) {
		uint64_t r = next_rand() % 100;
		uint32_t th = r < 10 ? 0 : zipf_thread();

		sw[i] = t0 + i * 12000 + next_rand() % 12000;
		pid[i] = r < 10 ? 0 : 1000 + th;
		comm[i] = pid[i] ? th % 40 : 0;
		r = next_rand() % 100;
		st[i] = r < 30 ? 0 : r < 95 ? 1 : 2;
	}
	for (i = 0; i < WAKINGS; i++) {
		uint32_t th = zipf_thread();

		wk[i] = t0 + i * 24000 + next_rand() % 24000;
		wpid[i] = 1000 + th;
		wcomm[i] = th % 40;
	}
	p->len = 0;
	m = wbuf_begin_len(p, 1);
	wbuf_field_varint(p, 1, cpu);
	for (i = 0; i < EVENTS; i++) {
		size_t e = wbuf_begin_len(p, 2), f;

		wbuf_field_varint(p, 1, t0 + i * 500000);
		wbuf_field_varint(p, 2, 1000 + i);
		f = wbuf_begin_len(p, 236); /* task_rename */
		wbuf_field_varint(p, 1, 1000 + i);
		wbuf_field_bytes(p, 2, "worker", 6);
		wbuf_field_bytes(p, 3, "worker-2", 8);
		wbuf_end_len(p, f);
		wbuf_end_len(p, e);
	}
	c = wbuf_begin_len(p, 4);
	for (i = 0; i < 40; i++) {
		char name[16];
		int n = snprintf(name, sizeof(name), "task-%zu", i);

		wbuf_field_bytes(p, 5, name, (size_t)n);
	}
	packed_deltas(p, 1, sw, SWITCHES);
	wbuf_field_packed(p, 2, st, SWITCHES);
	wbuf_field_packed(p, 3, pid, SWITCHES);
	packed_fill(p, 4, SWITCHES, 100, 40);
	wbuf_field_packed(p, 6, comm, SWITCHES);
	packed_deltas(p, 7, wk, WAKINGS);
	wbuf_field_packed(p, 8, wpid, WAKINGS);
	packed_fill(p, 9, WAKINGS, 0, CPUS);
	packed_fill(p, 10, WAKINGS, 100, 40);
	wbuf_field_packed(p, 11, wcomm, WAKINGS);
	packed_fill(p, 12, WAKINGS, 0, 1);
	wbuf_end_len(p, c);
	wbuf_field_varint(p, 10, prev_end);
	wbuf_end_len(p, m);
	wbuf_field_varint(p, 10, 3 + cpu);
}

static void snapshot(struct wbuf *p, uint64_t boot, uint64_t k)
{
	static const uint32_t ids[4] = { 6, 3, 1, 5 };
	uint64_t vals[4] = { boot, boot - 5000000000ull - k * 1000,
			     1700000000000000000ull + boot + k * 300,
			     boot - 5200000000ull - k * 1200 };
	size_t m, c, i;

	p->len = 0;
	m = wbuf_begin_len(p, 6);
	for (i = 0; i < 4; i++) {
		c = wbuf_begin_len(p, 1);
		wbuf_field_varint(p, 1, ids[i]);
		wbuf_field_varint(p, 2, vals[i]);
		wbuf_end_len(p, c);
	}
	wbuf_field_varint(p, 2, 6);
	wbuf_end_len(p, m);
	wbuf_field_varint(p, 10, 1);
}

static int put(FILE *f, const struct wbuf *p)
{
	uint8_t hdr[1 + WIRE_VARINT_MAX];
	size_t n = 1 + wire_put_varint(hdr + 1, p->len);

	hdr[0] = 0x0a;
	return fwrite(hdr, 1, n, f) == n &&
	       fwrite(p->p, 1, p->len, f) == p->len ? 0 : -1;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y) - (x > y);
}

/* What was written and the thread mix of the switch-ins and wakings. */
static void print_mix(uint64_t written, uint64_t bundles)
{
	uint64_t total = 0, top10 = 0, top100 = 0;
	size_t i, used = 0;

	qsort(tid_events, THREADS, sizeof(*tid_events), cmp_desc);
	for (i = 0; i < THREADS; i++) {
		total += tid_events[i];
		top10 += i < 10 ? tid_events[i] : 0;
		top100 += i < 100 ? tid_events[i] : 0;
		used += tid_events[i] != 0;
	}
	printf("bench_sync gen bytes=%llu bundles=%llu events=%llu threads=%zu "
	       "dist=zipf1 top10_share=%.2f top100_share=%.2f "
	       "cpu_bundles_overlap=no\n",
	       (unsigned long long)written, (unsigned long long)bundles,
	       (unsigned long long)(bundles * (SWITCHES + WAKINGS + EVENTS)),
	       used, total ? (double)top10 / (double)total : 0,
	       total ? (double)top100 / (double)total : 0);
}

static int gen(const char *size_arg, const char *out)
{
	struct wbuf p = { 0 };
	uint64_t size, written = 0, k = 0, boot = 10000000000ull;
	uint64_t prev_end[CPUS] = { 0 };
	FILE *f;

	if (parse_size(size_arg, &size)) {
		fprintf(stderr, "bench_sync: bad size '%s'\n", size_arg);
		return 64;
	}
	f = fopen(out, "wb");
	if (!f) {
		perror(out);
		return 1;
	}
	while (written < size) {
		uint32_t cpu = (uint32_t)(k % CPUS);

		if (k % 1000 == 0) {
			snapshot(&p, boot, k);
			if (put(f, &p))
				break;
			written += p.len + 4;
		}
		/* each CPU's bundle covers the round's 12 ms */
		bundle(&p, cpu, boot, prev_end[cpu]);
		prev_end[cpu] = boot + 12000000;
		if (put(f, &p))
			break;
		written += p.len + 4;
		if (k % 10 == 0) {
			p.len = 0;
			wbuf_field_varint(&p, 8, boot - 5000000000ull - k * 1000 +
					  500);
			wbuf_field_varint(&p, 58, 3);
			wbuf_field_varint(&p, 10, 2);
			wbuf_field_bytes(&p, 2000, "some payload of a packet",
					 24);
			if (put(f, &p))
				break;
			p.len = 0;
			wbuf_field_varint(&p, 10, 2);
			wbuf_field_bytes(&p, 2001, "untimed", 7);
			if (put(f, &p))
				break;
			written += 80;
		}
		k++;
		if (cpu == CPUS - 1)
			boot += 12000000;
	}
	wbuf_free(&p);
	if (fclose(f) || written < size) {
		perror(out);
		return 1;
	}
	print_mix(written, k);
	return 0;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Timestamps per second through rewrite_packet on generated bundles. */
static void rewrite_case(const char *name, uint32_t trace_clock, long n)
{
	struct btr_clock_reading r[2] = {
		{ { 6, 0, 0, 0 }, 10000000000ull, 1, false },
		{ { 3, 0, 0, 0 }, 5000000000ull, 1, false },
	};
	struct sync_stats st = { 0 };
	struct wbuf p = { 0 };
	struct timeline tl;
	struct rewrite rw;
	struct rewritten res;
	struct packet_info info;
	const char *why;
	double t0, t;
	long i;

	if (timeline_init(&tl))
		exit(1);
	timeline_set_trace_clock(&tl, trace_clock);
	btr_clock_graph_add_snapshot(tl.graph, r, 2);
	tl.stats = &st;
	rewrite_init(&rw, &(struct rewrite_params){ .tl = &tl,
						    .default_clock = 6 });
	bundle(&p, 0, 10000000000ull, 0);
	t0 = cpu_s();
	for (i = 0; i < n; i++) {
		if (packet_info_read(p.p, p.len, &info, &why) ||
		    rewrite_packet(&rw, p.p, p.len, &info, &res, &why))
			exit(1);
	}
	t = cpu_s() - t0;
	printf("bench_sync case=%s rate=%.0f ns_per=%.1f\n", name,
	       (double)st.converted / t, t * 1e9 / (double)st.converted);
	rewrite_free(&rw);
	timeline_free(&tl);
	wbuf_free(&p);
}

int main(int argc, char **argv)
{
	long n = 2000;

	zipf_init();
	if (argc == 4 && !strcmp(argv[1], "gen"))
		return gen(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "rewrite")) {
		if (argc == 4 && !strcmp(argv[2], "-n"))
			n = atol(argv[3]);
		rewrite_case("rewrite_identity", 6, n);
		rewrite_case("rewrite_convert", 3, n);
		return 0;
	}
	fprintf(stderr, "usage: bench_sync gen SIZE OUT | rewrite [-n N]\n");
	return 64;
}
