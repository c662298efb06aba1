/* Simulated many-core host: N BPF rings (as if N CPUs were online), filled
 * by a test-only BPF program run with BPF_PROG_TEST_RUN
 * (tests/synth/synth.bpf.c), drained by the recorder's own reader code
 * (record/rings.c) into its bundle encoders and central buffer, with the
 * ring sizes of the memory budget (record/budget.c) for N CPUs. Needs
 * root.
 *
 *   synth_rings MODE -n RINGS [-r RING_SIZE] [-k ROUNDS] [-m MEMORY]
 *               [-t READERS] [-d DISCARD_EVERY]
 *
 * With -d N the BPF side discards every Nth record it reserved instead
 * of submitting it (bpf_ringbuf_discard): the readers must step over
 * those, and the checks count them apart (discarded=).
 *
 * With -t N (N > 1) the rings are drained by N reader threads
 * (record/readers.c, the recorder's), ring i by reader i mod N, each
 * encoding into its own sequences of the one central buffer, while this
 * thread writes records and syncs with them.
 *
 * check   random amounts into random rings, some past full, drained now
 *         and then (with threads: drained all along as well); verifies
 *         every record read once, in order per ring, and written = read +
 *         dropped exactly, per ring (exit 1 if not)
 * rate    every ring filled full, then drained: events/s of one reader
 *         thread, reading only and reading + encoding (with threads:
 *         encoding, events/s in all and per second of reader CPU time)
 * idle    drain passes over empty rings: ns per pass, ours and libbpf's
 *         ring_buffer__consume over the same rings, and with the caches
 *         cold (other work between passes, as in a 50 ms period)
 * memory  rings and buffer of the default budget for N CPUs, every ring
 *         filled and drained until the buffer wrapped: the process's
 *         proportional set size against the budget
 * merge   records of interleaved times into random rings, drained in time
 *         order across the rings (rings_drain_merged, as a recorder with
 *         --trigger reads): verifies every record read once, in time
 *         order across the rings (exit 1 if not)
 * turns   the rings filled with records whose times take turns between
 *         them every 1 to 4 records (as hackbench's two CPUs do), then
 *         drained merged in time order and, filled again the same way,
 *         drained ring after ring: ns a record of each (the best of the
 *         rounds) and what the merge adds; exit 1 on a record out of
 *         time order in a merged drain, or a drain that read fewer than
 *         were written
 *
 * Output: one line of key=value pairs. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "buffer/central.h"
#include "encode/bundle.h"
#include "record/budget.h"
#include "record/readers.h"
#include "record/rings.h"
#include "synth.skel.h"
#include "util/keyheap.h"

#define SEQ_BASE 4
#define TS_BASE 1000000000ull
#define REC_BYTES 88 /* a switch record and its ring header */

struct synth_count {
	uint64_t seq, written, dropped, pending;
	uint64_t discarded, pending_discarded;
};

struct synth;

/* One reader's counts (each reader thread its own, on cache lines of its
 * own: neighbours belong to other readers). */
struct sreader {
	_Alignas(64) struct synth *s;
	uint32_t id;
	uint64_t read, lost_carried, order_errors;
	uint64_t begun, done; /* passes: pass_begin's calls, pass_done's */
};

struct synth {
	struct synth_bpf *skel;
	struct rings *rings;
	struct readers *readers;
	struct sreader *rd;
	uint32_t nreaders;
	struct budget b;
	uint32_t n;
	uint64_t *sizes;
	struct next_seq {
		_Alignas(64) uint64_t v; /* a line each: rings of other readers */
	} *next; /* per ring: the sequence number expected next */
	uint64_t read, lost_carried, order_errors; /* summed at the end */
	uint64_t passes, passes_unpaired; /* summed: begun, |begun - done| */
	struct bundle_enc **enc;
	struct central *buf;
	int encode; /* atomic: the readers look at it */
	int drain_ms; /* of the reader threads */
	uint32_t discard_every; /* -d: the BPF side discards every so many */
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A reader's own counter, which this thread sums while the readers run:
 * relaxed atomics (plain moves on x86), so the sum is no data race. */
static void bump(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static uint64_t peek(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static int on_record(void *ctx, uint32_t ring, const void *rec, size_t len)
{
	struct sreader *r = ctx;
	struct synth *s = r->s;
	const struct btr_hdr *h = rec;
	uint64_t seq = (h->ts - TS_BASE) / 1000;
	/* the records discarded before it, stepped over (synth.bpf.c) */
	uint64_t discarded = len >= sizeof(struct btr_switch)
				     ? (uint64_t)(((const struct btr_switch *)rec)->next_prio - 120)
				     : 0;

	if (seq != s->next[ring].v + h->lost + discarded)
		bump(&r->order_errors, 1);
	s->next[ring].v = seq + 1;
	bump(&r->read, 1);
	bump(&r->lost_carried, h->lost);
	return __atomic_load_n(&s->encode, __ATOMIC_RELAXED)
		       ? bundle_enc_add(s->enc[ring], h, len)
		       : 0;
}

/* The start of a reader's pass: counted, to check that each pass has
 * one, as the recorder's warming of its watch needs. */
static void pass_begin(void *ctx)
{
	struct sreader *r = ctx;

	bump(&r->begun, 1);
}

/* The end of a reader's pass: its rings' encoders emit what they hold. */
static int pass_done(void *ctx, int records)
{
	struct sreader *r = ctx;
	uint32_t n, i;
	const uint32_t *rings = readers_rings(r->s->readers, r->id, &n);
	int e = 0;

	bump(&r->done, 1);
	if (!records || !__atomic_load_n(&r->s->encode, __ATOMIC_RELAXED))
		return 0;
	for (i = 0; i < n && !e; i++)
		e = bundle_enc_flush(r->s->enc[rings[i]]);
	return e;
}

static void commit(void *ctx)
{
	struct sreader *r = ctx;
	uint32_t n, i;
	const uint32_t *rings = readers_rings(r->s->readers, r->id, &n);

	for (i = 0; i < n; i++)
		central_flush_seq(r->s->buf, SEQ_BASE + rings[i]);
}

static void sum_readers(struct synth *s)
{
	uint32_t k;

	s->read = s->lost_carried = s->order_errors = 0;
	s->passes = s->passes_unpaired = 0;
	for (k = 0; k < s->nreaders; k++) {
		uint64_t b = peek(&s->rd[k].begun), d = peek(&s->rd[k].done);

		s->passes += b;
		s->passes_unpaired += b > d ? b - d : d - b;
		s->read += peek(&s->rd[k].read);
		s->lost_carried += peek(&s->rd[k].lost_carried);
		s->order_errors += peek(&s->rd[k].order_errors);
	}
}

/* count records into ring, stamped ts, ts + step, ... (ts 0: from their
 * sequence numbers). */
static int write_ring_at(struct synth *s, uint32_t ring, uint64_t count,
			 uint64_t ts, uint64_t step)
{
	uint64_t args[4] = { ring, count, ts, step };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(s->skel->progs.synth_write),
				   &opts))
		return -errno;
	return opts.retval ? -ENOENT : 0;
}

static int write_ring(struct synth *s, uint32_t ring, uint64_t count)
{
	return write_ring_at(s, ring, count, 0, 0);
}

static int flush_all(struct synth *s)
{
	uint32_t i;
	int e = 0;

	for (i = 0; i < s->n && !e; i++)
		e = bundle_enc_flush(s->enc[i]);
	return e;
}

/* Everything in the rings now read (and encoded): by this thread, or by
 * the reader threads. Returns the records read or a negative errno. */
static int drain(struct synth *s)
{
	uint64_t before = s->read;
	int n;

	if (readers_threaded(s->readers)) {
		n = readers_sync(s->readers);
		sum_readers(s);
		return n ? n : (int)(s->read - before);
	}
	n = rings_drain(s->rings);
	sum_readers(s);
	if (n >= 0 && s->encode) {
		int e = flush_all(s);

		if (e)
			return e;
	}
	return n;
}

static uint64_t capacity(const struct synth *s, uint32_t ring)
{
	return s->sizes[ring] / REC_BYTES;
}

static int start_readers(struct synth *s)
{
	const struct readers_ops ops = { false, on_record, pass_done, commit,
					 pass_begin };
	void **ctx = calloc(s->nreaders, sizeof(*ctx));
	char err[256];
	uint32_t k;
	int e = 0;

	for (k = 0; ctx && k < s->nreaders; k++)
		ctx[k] = &s->rd[k];
	s->readers = ctx ? readers_new(s->rings, s->nreaders, &ops, ctx, err,
				       sizeof(err))
			 : NULL;
	free(ctx);
	if (!s->readers) {
		fprintf(stderr, "synth_rings: readers: %s\n", err);
		return -EINVAL;
	}
	for (k = 0; s->nreaders > 1 && k < s->n && !e; k++)
		e = central_set_owned(s->buf, SEQ_BASE + k, true);
	/* check: the readers drain every millisecond while records are
	 * written, as well as when asked */
	if (!e)
		e = readers_start(s->readers, s->drain_ms);
	return e;
}

/* The reader threads end; the buffer is this thread's again. */
static int stop_readers(struct synth *s)
{
	uint32_t k;
	int e;

	if (!s->readers || !readers_threaded(s->readers))
		return 0;
	e = readers_stop(s->readers);
	for (k = 0; k < s->n; k++)
		central_set_owned(s->buf, SEQ_BASE + k, false);
	sum_readers(s);
	return e;
}

static int setup(struct synth *s, uint64_t memory, uint64_t ring_size)
{
	struct budget_in in = { memory, 0, ring_size, s->n, s->n,
				(uint64_t)sysconf(_SC_PAGESIZE), 0 };
	char err[256];
	uint32_t i;

	if (budget_compute(&in, &s->b, err, sizeof(err))) {
		fprintf(stderr, "synth_rings: %s\n", err);
		return -EINVAL;
	}
	s->sizes = calloc(s->n, sizeof(*s->sizes));
	s->next = aligned_alloc(64, s->n * sizeof(*s->next));
	if (s->next)
		memset(s->next, 0, s->n * sizeof(*s->next));
	s->enc = calloc(s->n, sizeof(*s->enc));
	s->buf = central_new(s->b.buffer, 32 * 1024, FILL_RING);
	if (!s->sizes || !s->next || !s->enc || !s->buf)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		s->sizes[i] = s->b.ring_online;
		s->enc[i] = bundle_enc_new(i, SEQ_BASE + i, central_sink(s->buf));
		if (!s->enc[i])
			return -ENOMEM;
	}
	s->skel = synth_bpf__open();
	if (s->skel)
		s->skel->rodata->discard_every = s->discard_every;
	if (!s->skel)
		return -errno;
	if (bpf_map__set_max_entries(s->skel->maps.rings, s->n) ||
	    synth_bpf__load(s->skel)) {
		fprintf(stderr, "synth_rings: cannot load the synthetic program\n");
		return -EINVAL;
	}
	s->rd = aligned_alloc(64, s->nreaders * sizeof(*s->rd));
	if (s->rd)
		memset(s->rd, 0, s->nreaders * sizeof(*s->rd));
	if (!s->rd)
		return -ENOMEM;
	for (i = 0; i < s->nreaders; i++) {
		s->rd[i].s = s;
		s->rd[i].id = i;
	}
	s->rings = rings_new(bpf_map__fd(s->skel->maps.rings), s->n, s->sizes,
			     on_record, &s->rd[0], err, sizeof(err));
	if (!s->rings) {
		fprintf(stderr, "synth_rings: %s\n", err);
		return -EINVAL;
	}
	return start_readers(s);
}

static int read_counts(struct synth *s, struct synth_count *tot, uint64_t *bad)
{
	uint32_t i;

	memset(tot, 0, sizeof(*tot));
	*bad = 0;
	for (i = 0; i < s->n; i++) {
		struct synth_count c;

		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counts), &i, &c))
			return -errno;
		tot->seq += c.seq;
		tot->written += c.written;
		tot->dropped += c.dropped;
		tot->pending += c.pending;
		tot->discarded += c.discarded;
		/* per ring: what was read, and the losses and discards after
		 * it */
		if (s->next[i].v + c.pending + c.pending_discarded != c.seq)
			(*bad)++;
	}
	return 0;
}

static long status_kib(const char *file, const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen(file, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int mode_check(struct synth *s, uint32_t rounds)
{
	struct synth_count t;
	uint64_t bad;
	uint32_t k, i;
	int e;

	srand(42);
	__atomic_store_n(&s->encode, 1, __ATOMIC_RELAXED);
	for (k = 0; k < rounds; k++) {
		for (i = 0; i < s->n; i++) {
			uint32_t ring = (uint32_t)rand() % s->n;
			/* up to a ring and a half: some rings overflow */
			uint64_t count = (uint64_t)rand() % (capacity(s, ring) * 3 / 2 + 1);

			if (rand() % 4 == 0)
				continue;
			e = write_ring(s, ring, count / (1 + rand() % 4));
			if (e)
				return e;
		}
		if (k % 3 == 2 && (e = drain(s)) < 0)
			return e;
	}
	if ((e = drain(s)) < 0 || (e = stop_readers(s)) ||
	    (e = read_counts(s, &t, &bad)))
		return e;
	printf("readers=%u rings=%u ring_size=%llu attempted=%llu written=%llu read=%llu "
	       "dropped=%llu discarded=%llu lost_carried=%llu lost_pending=%llu "
	       "order_errors=%llu rings_unbalanced=%llu budget_kib=%llu "
	       "pss_kib=%ld passes=%llu passes_unpaired=%llu\n", s->nreaders,
	       s->n,
	       (unsigned long long)s->sizes[0], (unsigned long long)t.seq,
	       (unsigned long long)t.written, (unsigned long long)s->read,
	       (unsigned long long)t.dropped, (unsigned long long)t.discarded,
	       (unsigned long long)s->lost_carried,
	       (unsigned long long)t.pending,
	       (unsigned long long)s->order_errors, (unsigned long long)bad,
	       (unsigned long long)(s->b.memory >> 10),
	       status_kib("/proc/self/smaps_rollup", "Pss"),
	       (unsigned long long)s->passes,
	       (unsigned long long)s->passes_unpaired);
	return t.seq == s->read + t.dropped + t.discarded && t.written == s->read &&
	       t.dropped == s->lost_carried + t.pending && !s->order_errors &&
	       !bad && !s->passes_unpaired ? 0 : 1;
}

/* What merged drains handed out: how many, the last time, how many came
 * before one already handed out. */
struct merged {
	uint64_t read, last, order_errors;
};

static int on_merged(void *ctx, uint32_t ring, const void *rec, size_t len)
{
	struct merged *m = ctx;
	const struct btr_hdr *h = rec;

	(void)ring;
	(void)len;
	if (h->ts < m->last)
		m->order_errors++;
	m->last = h->ts;
	m->read++;
	return 0;
}

/* What a merged drain of all the rings takes: their indexes, in *all,
 * and a heap as large (rings_drain_merged). */
static int merge_arrays(const struct synth *s, uint32_t **all,
			struct keyheap_ent **heap)
{
	uint32_t i;

	*all = calloc(s->n, sizeof(**all));
	*heap = calloc(s->n, sizeof(**heap));
	if (!*all || !*heap) {
		free(*all);
		free(*heap);
		return -ENOMEM;
	}
	for (i = 0; i < s->n; i++)
		(*all)[i] = i;
	return 0;
}

static int mode_merge(struct synth *s, uint32_t rounds)
{
	struct merged m = { 0 };
	struct synth_count t;
	uint64_t base = TS_BASE, *next = calloc(s->n, sizeof(*next)), bad;
	uint32_t *all, k, i;
	struct keyheap_ent *heap;
	int e = 0, n;

	if (!next || merge_arrays(s, &all, &heap)) {
		free(next);
		return -ENOMEM;
	}
	srand(7);
	for (k = 0; k < rounds && !e; k++) {
		/* a round's records: each ring gets a stretch of times that
		 * interleaves with the others', after its own earlier ones */
		for (i = 0; i < s->n && !e; i++) {
			uint32_t ring = (uint32_t)rand() % s->n;
			uint64_t count = 1 + (uint64_t)rand() % (capacity(s, ring) / 8 + 1);
			uint64_t ts = base + (uint64_t)rand() % 100000, step = 1 + (uint64_t)rand() % 97;

			if (ts <= next[ring])
				ts = next[ring] + 1;
			e = write_ring_at(s, ring, count, ts, step);
			next[ring] = ts + (count - 1) * step;
		}
		/* the next round's records are newer than all of these, as
		 * records written later are */
		for (i = 0; i < s->n; i++)
			if (next[i] >= base + 200000)
				base = next[i] + 1 - 200000;
		n = rings_drain_merged(s->rings, all, s->n, heap, on_merged, &m);
		if (!e && n < 0)
			e = n;
		base += 200000;
	}
	free(next);
	free(all);
	free(heap);
	if (e || (e = read_counts(s, &t, &bad)))
		return e;
	printf("rings=%u written=%llu dropped=%llu discarded=%llu read=%llu order_errors=%llu\n",
	       s->n, (unsigned long long)t.written,
	       (unsigned long long)t.dropped, (unsigned long long)t.discarded,
	       (unsigned long long)m.read,
	       (unsigned long long)m.order_errors);
	return t.written == m.read && !m.order_errors && m.read ? 0 : 1;
}

/* Every ring filled, but one record, with records whose times take turns
 * between the rings in runs of 1 to 4, from *base on, 10 ns apart; *base
 * moved past them. Returns 0 or a negative errno. */
static int fill_turns(struct synth *s, uint64_t *base)
{
	uint64_t *left = calloc(s->n, sizeof(*left)), total = 0;
	uint32_t ring = 0, i;
	int e = 0;

	if (!left)
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		total += left[i] = capacity(s, i) - 1;
	while (total && !e) {
		uint64_t run = 1 + (uint64_t)rand() % 4;

		if (run > left[ring])
			run = left[ring];
		if (run) {
			e = write_ring_at(s, ring, run, *base, 10);
			*base += run * 10;
			left[ring] -= run;
			total -= run;
		}
		ring = (ring + 1) % s->n;
	}
	free(left);
	return e;
}

static int mode_turns(struct synth *s, uint32_t rounds)
{
	struct merged m = { 0 };
	uint32_t *all, k, i;
	struct keyheap_ent *heap;
	double best[2] = { 1e30, 1e30 };
	uint64_t base = TS_BASE, per_fill = 0, short_drains = 0;
	int e = merge_arrays(s, &all, &heap), n = 0;

	if (e)
		return e;
	srand(11);
	for (i = 0; i < s->n; i++)
		per_fill += capacity(s, i) - 1;
	for (k = 0; k < 2 * rounds && !e; k++) {
		bool merged = k % 2 == 0;
		double t0;

		if ((e = fill_turns(s, &base)))
			break;
		m.last = 0;
		t0 = now_ns();
		n = merged ? rings_drain_merged(s->rings, all, s->n, heap,
						on_merged, &m)
			   : rings_drain_list(s->rings, all, s->n, on_merged,
					      &m);
		if (n <= 0) {
			e = n ? n : -ENODATA;
			break;
		}
		if ((uint64_t)n != per_fill)
			short_drains++;
		t0 = (now_ns() - t0) / n;
		if (t0 < best[merged])
			best[merged] = t0;
		if (!merged) /* ring after ring is out of order by design */
			m.order_errors = 0;
		if (m.order_errors)
			break;
	}
	free(all);
	free(heap);
	if (e)
		return e;
	printf("rings=%u records_per_drain=%llu short_drains=%llu "
	       "merged_ns_per_record=%.2f ring_order_ns_per_record=%.2f "
	       "merge_adds_ns=%.2f order_errors=%llu\n", s->n,
	       (unsigned long long)per_fill, (unsigned long long)short_drains,
	       best[1], best[0], best[1] - best[0],
	       (unsigned long long)m.order_errors);
	return m.order_errors || short_drains ? 1 : 0;
}

static int fill_all(struct synth *s)
{
	uint32_t i;
	int e;

	for (i = 0; i < s->n; i++)
		if ((e = write_ring(s, i, capacity(s, i))))
			return e;
	return 0;
}

static int mode_rate(struct synth *s, uint32_t rounds)
{
	double t_read = 0, t_enc = 0, cpu_enc = 0;
	uint64_t n_read = 0, n_enc = 0, before;
	uint32_t k;
	int e;

	for (k = 0; k < rounds; k++) {
		double t0, c0;
		int enc = (int)(k % 2);

		__atomic_store_n(&s->encode, enc, __ATOMIC_RELAXED);
		if ((e = fill_all(s)))
			return e;
		before = s->read;
		c0 = (double)readers_cpu_ns(s->readers);
		t0 = now_ns();
		if ((e = drain(s)) < 0)
			return e;
		if (enc) {
			t_enc += now_ns() - t0;
			cpu_enc += (double)readers_cpu_ns(s->readers) - c0;
			n_enc += s->read - before;
		} else {
			t_read += now_ns() - t0;
			n_read += s->read - before;
		}
	}
	if ((e = stop_readers(s)))
		return e;
	/* per reader thread: events over the CPU time the readers used */
	printf("readers=%u rings=%u ring_size=%llu events=%llu "
	       "read_events_per_s=%.0f encode_events_per_s=%.0f "
	       "encode_events_per_reader_cpu_s=%.0f read_ns_per_event=%.1f "
	       "encode_ns_per_event=%.1f order_errors=%llu\n", s->nreaders,
	       s->n, (unsigned long long)s->sizes[0],
	       (unsigned long long)(n_read + n_enc), n_read / t_read * 1e9,
	       n_enc / t_enc * 1e9, n_enc / cpu_enc * 1e9, t_read / n_read,
	       t_enc / n_enc, (unsigned long long)s->order_errors);
	return s->order_errors ? 1 : 0;
}

static int count_cb(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* An idle pass as a 50 ms drain period finds the caches: after other
 * work went through them (32 MiB written between passes). The median of
 * 31 passes with the encoders' flush. */
static double idle_cold(struct synth *s)
{
	size_t big = 32u << 20;
	uint8_t *junk = malloc(big);
	double t[31], x;
	int i, j;

	if (!junk)
		return -1;
	for (i = 0; i < 31; i++) {
		memset(junk, i, big);
		x = now_ns();
		drain(s);
		t[i] = now_ns() - x;
	}
	free(junk);
	for (i = 1; i < 31; i++) /* insertion sort: 31 values */
		for (j = i; j > 0 && t[j] < t[j - 1]; j--) {
			x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	return t[15];
}

static int mode_idle(struct synth *s, uint32_t passes)
{
	struct ring_buffer *rb = NULL;
	uint64_t dummy = 0;
	double t0, t, ours, lib, enc, cold;
	uint32_t i, k;
	int e = 0;

	__atomic_store_n(&s->encode, 1, __ATOMIC_RELAXED);
	for (i = 0; i < s->n && !e; i++) {
		int fd = rings_fd(s->rings, i);

		if (!rb)
			rb = ring_buffer__new(fd, count_cb, &dummy, NULL);
		else if (ring_buffer__add(rb, fd, count_cb, &dummy))
			e = -EINVAL;
		if (!rb)
			e = -EINVAL;
	}
	if (e)
		goto out;
	/* the best of five batches: the host runs other work too */
	ours = enc = lib = 1e18;
	for (k = 0; k < 5; k++) {
		t0 = now_ns();
		for (i = 0; i < passes / 5; i++)
			rings_drain(s->rings);
		t = (now_ns() - t0) / (passes / 5);
		ours = t < ours ? t : ours;
		t0 = now_ns();
		for (i = 0; i < passes / 5; i++)
			drain(s);
		t = (now_ns() - t0) / (passes / 5);
		enc = t < enc ? t : enc;
		t0 = now_ns();
		for (i = 0; i < passes / 5; i++)
			ring_buffer__consume(rb);
		t = (now_ns() - t0) / (passes / 5);
		lib = t < lib ? t : lib;
	}
	cold = idle_cold(s);
	printf("rings=%u idle_pass_ns=%.0f idle_pass_with_encoders_ns=%.0f "
	       "idle_pass_libbpf_ns=%.0f idle_pass_cold_ns=%.0f\n", s->n, ours,
	       enc, lib, cold);
out:
	ring_buffer__free(rb);
	return e;
}

static int mode_memory(struct synth *s)
{
	uint32_t k;
	int e;

	__atomic_store_n(&s->encode, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 1000 && !central_stats(s->buf)->chunks_overwritten; k++)
		if ((e = fill_all(s)) || (e = drain(s)) < 0)
			return e;
	printf("cpus=%u budget_kib=%llu planned_kib=%llu buffer_kib=%llu "
	       "ring_kib=%llu pss_kib=%ld rss_kib=%ld hwm_kib=%ld "
	       "buffer_wrapped=%d\n", s->n,
	       (unsigned long long)(s->b.memory >> 10),
	       (unsigned long long)(s->b.total >> 10),
	       (unsigned long long)(s->b.buffer >> 10),
	       (unsigned long long)(s->b.ring_online >> 10),
	       status_kib("/proc/self/smaps_rollup", "Pss"),
	       status_kib("/proc/self/smaps_rollup", "Rss"),
	       status_kib("/proc/self/status", "VmHWM"),
	       central_stats(s->buf)->chunks_overwritten > 0);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: synth_rings check|rate|idle|memory|merge|turns -n RINGS "
			"[-r RING_SIZE] [-k ROUNDS] [-m MEMORY] [-t READERS "
			"(check, rate)] [-d DISCARD_EVERY]\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct synth s;
	uint64_t ring_size = 0, memory = 0;
	uint32_t rounds = 0, i;
	const char *mode;
	int opt, rc = 1;

	memset(&s, 0, sizeof(s));
	if (argc < 2)
		return usage();
	mode = argv[1];
	optind = 2;
	s.nreaders = 1;
	while ((opt = getopt(argc, argv, "n:r:k:m:t:d:")) != -1) {
		switch (opt) {
		case 'd': s.discard_every = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'n': s.n = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'r': ring_size = strtoull(optarg, NULL, 10); break;
		case 'k': rounds = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'm': memory = strtoull(optarg, NULL, 10); break;
		case 't': s.nreaders = (uint32_t)strtoul(optarg, NULL, 10); break;
		default: return usage();
		}
	}
	if (!s.n || s.n > 8192 || !s.nreaders || s.nreaders > s.n)
		return usage();
	if (strcmp(mode, "check") && strcmp(mode, "rate") && s.nreaders > 1)
		return usage(); /* -t: the modes that drain with readers */
	s.drain_ms = strcmp(mode, "check") ? 50 : 1;
	if (setup(&s, memory, ring_size))
		goto out;
	if (!strcmp(mode, "check"))
		rc = mode_check(&s, rounds ? rounds : 30);
	else if (!strcmp(mode, "rate"))
		rc = mode_rate(&s, rounds ? rounds : 10);
	else if (!strcmp(mode, "idle"))
		rc = mode_idle(&s, rounds ? rounds : 20000);
	else if (!strcmp(mode, "memory"))
		rc = mode_memory(&s);
	else if (!strcmp(mode, "merge"))
		rc = mode_merge(&s, rounds ? rounds : 20);
	else if (!strcmp(mode, "turns"))
		rc = mode_turns(&s, rounds ? rounds : 10);
	else
		rc = usage();
	if (rc < 0) {
		fprintf(stderr, "synth_rings: %s\n", strerror(-rc));
		rc = 1;
	}
out:
	readers_free(s.readers); /* the threads end first */
	rings_free(s.rings);
	synth_bpf__destroy(s.skel);
	for (i = 0; s.enc && i < s.n; i++)
		bundle_enc_free(s.enc[i]);
	free(s.enc);
	central_free(s.buf);
	free(s.sizes);
	free(s.next);
	free(s.rd);
	return rc;
}
