/* Benchmark: encoder throughput without the kernel. Replays ring records
 * captured by tests/tools/capture_raw.c through the recorder's path after
 * the rings: one bundle encoder per CPU (userspace/encode/bundle.h) into the
 * central buffer (userspace/buffer/central.h, 64 MiB of 32 KiB chunks, as the
 * recorder's defaults), read out when more than half full into a sink that
 * only counts, as a streaming recording does. Encoders are flushed every
 * BATCH records, as the recorder does after each drain pass.
 *
 *   bench_encode [-r REPEATS] [-t SECONDS] [-b BATCH] [-T] [-F] [-w SPEC]... FILE
 *
 * The records are replayed in the file's order (capture_raw's: ring by
 * ring each drain pass, as a recorder without --trigger reads them), or
 * with -T in time order across CPUs (as a recorder with --trigger reads
 * them: rings_drain_merged).
 *
 * With -w, each record also goes through the trigger watch of the SPECs
 * (userspace/trigger/watch.h) as the recorder's reader does with one
 * reader: its thread state prefetched before encoding, the record watched
 * after; queued hits are taken at each flush, and each one's spec is then
 * muted for good, as the recorder mutes a spec whose action is due (what
 * later hits cost is a count). Run it with and without -w to see what the
 * conditions cost per record.
 *
 * With -F (and no -w), each switch and waking goes through the least any
 * watch of the threads could do instead (floor_around): a floor under
 * the watch's cost, to weigh it against. 
 *
 * Each repeat replays the file (timestamps shifted so they keep growing)
 * until it has taken SECONDS of CPU time (default 0.5); prints one line per
 * repeat and a summary with the median:
 *   bench_encode records=N cpu_s=S rate=R wall_rate=W bytes_per_record=B
 * rate is records per second of this thread's CPU time (the machine may be
 * busy with other work), wall_rate per second of wall time. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "buffer/central.h"
#include "encode/bundle.h"
#include "encode/packet.h"
#include "record.h"
#include "trigger/spec.h"
#include "trigger/watch.h"

#define RAW_MAGIC "BTRRAW01"
#define MAX_CPUS 1024
#define MAX_REPEATS 100

struct raw_rec {
	uint32_t cpu, len;
	struct btr_hdr *h;
};

/* -F: the least any watch of the threads in time order can do a record
 * (a floor under trigger/watch.h's cost): a switch stores its time in
 * prev's line and compares it with next's last switch-out, a waking
 * stores its time in its thread's line, lines of 32 bytes by tid, looked
 * up and prefetched before the encoding as the watch's are. */
struct floor_line {
	uint64_t out, in, wake, pad;
};

static struct floor_line *floor_table;
static uint64_t floor_hits;

static inline struct floor_line *floor_of(int32_t tid)
{
	struct floor_line *l = &floor_table[(uint32_t)tid & ((1u << 22) - 1)];

	__builtin_prefetch(l, 1);
	return l;
}

static int floor_around(struct bundle_enc *b, const struct btr_hdr *h,
			size_t len)
{
	uint64_t ts = h->ts;

	if (h->type == BTR_REC_SWITCH) {
		const struct btr_switch *sw = (const void *)h;
		struct floor_line *p = floor_of(sw->prev_pid);
		struct floor_line *n = floor_of(sw->next_pid);
		int e = bundle_enc_add_switch(b, sw);

		p->out = ts;
		floor_hits += ts - n->out > 20000000;
		n->in = ts;
		return e;
	}
	if (h->type == BTR_REC_WAKING) {
		const struct btr_wakeup *wk = (const void *)h;
		struct floor_line *t = floor_of(wk->pid);
		int e = bundle_enc_add_waking(b, wk);

		t->wake = ts;
		return e;
	}
	return bundle_enc_add(b, h, len);
}

struct counting_sink {
	struct packet_sink sink;
	uint64_t packets, bytes;
};

static int count_write(struct packet_sink *s, uint32_t seq_id,
		       const uint8_t *pkt, size_t len)
{
	struct counting_sink *c = s->ctx;

	(void)seq_id;
	(void)pkt;
	c->packets++;
	c->bytes += len;
	return 0;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The encoder's entries as the watch calls them, the recorder's. */
static const struct trig_enc enc_cbs = BUNDLE_ENC_CBS;

/* The hits taken: each one's spec muted from then on (the recorder
 * mutes a spec while its action is due). Returns n. */
static uint64_t mute_hits(struct trig_watch *w, const struct trig_hit *h,
			  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		trig_watch_mute(w, h[i].spec, UINT64_MAX, false);
	return n;
}

static int cmp_rec_time(const void *a, const void *b)
{
	const struct raw_rec *x = a, *y = b;

	if (x->h->ts != y->h->ts)
		return x->h->ts < y->h->ts ? -1 : 1;
	/* equal times: the file's order, as the record's address holds it */
	return x->h < y->h ? -1 : x->h > y->h;
}

/* Reads the whole file and indexes its records. */
static int load(const char *path, uint8_t **buf, struct raw_rec **recs,
		size_t *nrecs, uint32_t *ncpus)
{
	FILE *f = fopen(path, "rb");
	long size;
	size_t off = 8, n = 0, cap = 0;
	struct raw_rec *r = NULL;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 8 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EINVAL;
	}
	*buf = malloc((size_t)size);
	if (!*buf || fread(*buf, 1, (size_t)size, f) != (size_t)size ||
	    memcmp(*buf, RAW_MAGIC, 8)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	*ncpus = 0;
	while (off + 8 <= (size_t)size) {
		uint32_t hdr[2];

		memcpy(hdr, *buf + off, sizeof(hdr));
		if (hdr[0] >= MAX_CPUS || hdr[1] < sizeof(struct btr_hdr) ||
		    off + 8 + hdr[1] > (size_t)size)
			break;
		if (n == cap) {
			struct raw_rec *nr;

			cap = cap ? cap * 2 : 1 << 16;
			nr = realloc(r, cap * sizeof(*r));
			if (!nr) {
				free(r);
				return -ENOMEM;
			}
			r = nr;
		}
		r[n].cpu = hdr[0];
		r[n].len = hdr[1];
		r[n].h = (struct btr_hdr *)(*buf + off + 8);
		r[n].h->lost = 0; /* replayed losses would only add flushes */
		if (hdr[0] + 1 > *ncpus)
			*ncpus = hdr[0] + 1;
		n++;
		off += 8 + ((hdr[1] + 7u) & ~7u);
	}
	*recs = r;
	*nrecs = n;
	return n ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct counting_sink out = { .sink = { .write = count_write } };
	struct bundle_enc *enc[MAX_CPUS] = { 0 };
	double rates[MAX_REPEATS], walls[MAX_REPEATS], min_cpu_s = 0.5;
	struct raw_rec *recs = NULL;
	struct central *cen = NULL;
	uint8_t *buf = NULL;
	size_t nrecs = 0, i, batch = 50000, until_flush;
	uint64_t span, shift = 0, total = 0, rejected = 0;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	uint32_t ncpus = 0, cpu;
	int repeats = 5, r, err = 1, e, opt_i;
	bool time_order = false, floor_mode = false;
	const char *path = NULL;
	struct trig_spec specs[TRIG_MAX];
	struct trig_watch *watch = NULL;
	struct trig_hit hits[64];
	uint64_t nhits = 0, overflow = 0;
	uint32_t nspecs = 0;
	char spec_err[256];

	out.sink.ctx = &out;
	for (opt_i = 1; opt_i < argc; opt_i++) {
		if (!strcmp(argv[opt_i], "-r") && opt_i + 1 < argc)
			repeats = atoi(argv[++opt_i]);
		else if (!strcmp(argv[opt_i], "-t") && opt_i + 1 < argc)
			min_cpu_s = strtod(argv[++opt_i], NULL);
		else if (!strcmp(argv[opt_i], "-b") && opt_i + 1 < argc)
			batch = strtoull(argv[++opt_i], NULL, 10);
		else if (!strcmp(argv[opt_i], "-T"))
			time_order = true;
		else if (!strcmp(argv[opt_i], "-F"))
			floor_mode = true;
		else if (!strcmp(argv[opt_i], "-w") && opt_i + 1 < argc &&
			 nspecs < TRIG_MAX) {
			if (trig_spec_parse(argv[++opt_i], &specs[nspecs],
					    spec_err, sizeof(spec_err))) {
				fprintf(stderr, "bench_encode: -w %s: %s\n",
					argv[opt_i], spec_err);
				return 64;
			}
			nspecs++;
		}
		else if (!path && argv[opt_i][0] != '-')
			path = argv[opt_i];
		else
			path = NULL, opt_i = argc;
	}
	if (!path || repeats < 1 || repeats > MAX_REPEATS || !batch ||
	    min_cpu_s <= 0) {
		fprintf(stderr, "usage: bench_encode [-r REPEATS] [-t SECONDS] [-b BATCH] [-T] [-F] [-w SPEC]... FILE\n");
		return 64;
	}
	e = load(path, &buf, &recs, &nrecs, &ncpus);
	if (e) {
		fprintf(stderr, "bench_encode: %s: %s\n", path, strerror(-e));
		goto cleanup;
	}
	if (time_order)
		qsort(recs, nrecs, sizeof(*recs), cmp_rec_time);
	for (i = 0; i < nrecs; i++) {
		if (recs[i].h->ts < tmin)
			tmin = recs[i].h->ts;
		if (recs[i].h->ts > tmax)
			tmax = recs[i].h->ts;
	}
	span = tmax - tmin + 1;
	cen = central_new(64ull << 20, 32u * 1024u, FILL_RING);
	if (!cen)
		goto cleanup;
	if (floor_mode) {
		floor_table = mmap(NULL, (size_t)32 << 22, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				   -1, 0);
		if (floor_table == MAP_FAILED)
			goto cleanup;
	}
	if (nspecs && !(watch = trig_watch_new(specs, nspecs, ncpus)))
		goto cleanup;
	for (cpu = 0; cpu < ncpus; cpu++) {
		enc[cpu] = bundle_enc_new(cpu, SEQ_FTRACE_BASE + cpu,
					  central_sink(cen));
		if (!enc[cpu])
			goto cleanup;
	}
	for (r = 0; r < repeats; r++) {
		uint64_t n = 0;
		double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0, cpu_s = 0;
		double wall_s = 0;

		while (cpu_s < min_cpu_s) {
			if (shift) {
				for (i = 0; i < nrecs; i++)
					recs[i].h->ts += span;
			}
			shift += span;
			c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
			w0 = clock_s(CLOCK_MONOTONIC);
			until_flush = batch;
			for (i = 0; i < nrecs; i++) {
				const struct raw_rec *x = &recs[i];

				if (x->h->type == BTR_REC_CLOCK)
					continue;
				if (watch ? trig_watch_around(watch, x->cpu, x->h,
							      x->len, enc_cbs,
							      enc[x->cpu])
				    : floor_mode ? floor_around(enc[x->cpu], x->h,
								       x->len)
					  : bundle_enc_add(enc[x->cpu], x->h,
							   x->len))
					rejected++;
				/* a count down, not (i + 1) % batch: a
				 * 64-bit division a record added the same
				 * time to every way */
				if (--until_flush == 0) {
					until_flush = batch;
					while (watch &&
					       (e = (int)trig_watch_take(watch, hits, 64,
									 &overflow)))
						nhits += mute_hits(watch, hits,
								   (size_t)e);
					for (cpu = 0; cpu < ncpus; cpu++)
						bundle_enc_flush(enc[cpu]);
					if (central_under_pressure(
						    central_unread_chunks(cen),
						    central_slots(cen)) &&
					    central_read(cen, &out.sink, true))
						goto cleanup;
				}
			}
			for (cpu = 0; cpu < ncpus; cpu++)
				bundle_enc_flush(enc[cpu]);
			n += nrecs;
			cpu_s += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall_s += clock_s(CLOCK_MONOTONIC) - w0;
		}
		central_flush(cen);
		c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		if (central_read(cen, &out.sink, true))
			goto cleanup;
		cpu_s += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		rates[r] = (double)n / cpu_s;
		walls[r] = (double)n / wall_s;
		total += n;
		printf("repeat %d: %llu records in %.3f s CPU: %.0f records/s\n",
		       r + 1, (unsigned long long)n, cpu_s, rates[r]);
	}
	qsort(rates, (size_t)repeats, sizeof(double), cmp_double);
	qsort(walls, (size_t)repeats, sizeof(double), cmp_double);
	printf("bench_encode records=%zu cpus=%u rate=%.0f rate_min=%.0f rate_max=%.0f wall_rate=%.0f bytes_per_record=%.2f packets=%llu rejected=%llu watched=%u hits=%llu\n",
	       nrecs, ncpus, rates[repeats / 2], rates[0], rates[repeats - 1],
	       walls[repeats / 2], (double)out.bytes / (double)total,
	       (unsigned long long)out.packets, (unsigned long long)rejected,
	       nspecs, (unsigned long long)(nhits + overflow));
	err = 0;
cleanup:
	for (cpu = 0; cpu < ncpus && cpu < MAX_CPUS; cpu++)
		bundle_enc_free(enc[cpu]);
	central_free(cen);
	trig_watch_free(watch);
	free(recs);
	free(buf);
	return err;
}
