/* Measures the trigger watch with reader threads (trigger/watch.h:
 * trig_watch_readers and trig_watch_frontier, the notes) on real scheduler
 * records: replays a file of ring records captured by capture_raw (the
 * real BPF programs' records, each with its CPU) through the watch of
 * the SPECs twice, and compares the hits.
 *
 *   replay_triggers [-R READERS] [-s SEED] [-T K/J] [-v] -w SPEC [-w SPEC]... FILE
 *
 * The records are sorted by time (stable: equal times keep the file's
 * order) and read a pass every 50 ms of trace time, as
 * test_trigger_orders reads its schedules (tests/unit/trig_replay.h):
 *   (a) one reader, in time order, as a recorder with --trigger and one
 *       reader reads them (rings_drain_merged): the reference;
 *   (b) READERS reader threads (default 2), the CPUs split into as many
 *       contiguous ranges, each reader its own records in time order,
 *       the readers taking turns in runs of 1 to 40 records (random, from
 *       SEED, default 1) within each pass, the hits taken after every
 *       run and every reader's frontier set at each pass's end.
 * No spec is ever muted (the recorder mutes one while its action is
 * due): every hit is counted, and held in the watch's queue (256 hits)
 * until it is taken. On a busy load with low
 * thresholds more than that end within a pass: -T K/J watches only the
 * threads whose tid % K is J, the others' records read all the same but
 * their tids made 0 (the idle tasks', which the watch leaves alone), so
 * that each thread's hits are what they are with all of them (a
 * runqueue spec counts the threads watched only); the K runs of J = 0
 * to K-1 watch every thread once. Prints
 *   replay_triggers records=N one=H1 readers=H2 found=F false=X missed=M overflow=O inexact=I cpus=C nreaders=R seed=S
 * and a line `spec=I SPEC one= readers= found= false= missed=` for each
 * SPEC: found are (b)'s hits equal to one of (a)'s (spec, thread, start
 * and end), false those that are not (each also on stderr, with (a)'s
 * hits of its thread that overlap it), missed = H1 - found (on stderr
 * with -v); overflow the hits the watch's queue had no room for in
 * either run, inexact the records (b) watched out of time order or not at
 * all (trig_watch_inexact). Exits 0 when the comparison ran (the numbers are the
 * caller's to judge), 1 when the queue overflowed (the comparison would
 * be of lost hits) or on a bad or unreadable file, naming where, 64 on
 * usage errors. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "trigger/spec.h"
#include "trigger/watch.h"
#include "../unit/trig_replay.h"

#define RAW_MAGIC "BTRRAW01"
#define MS 1000000ull
#define PASS (50 * MS)
#define MAX_READERS 256u
#define MAX_CPUS 4096u

struct raw {
	uint8_t *buf;
	size_t size;
	struct replay_rec *recs;
	size_t n;
	uint32_t ncpus;
};

/* Reads path whole and indexes its records (CLOCK records left out, as
 * the recorder's reader hands them to no watch); on a bad file, says
 * where and returns -1. */
static int load(const char *path, struct raw *raw)
{
	FILE *f = fopen(path, "rb");
	size_t off = 8, cap = 0;
	long size;

	if (!f) {
		fprintf(stderr, "replay_triggers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay_triggers: %s: cannot size it: %s\n",
			path, strerror(errno));
		fclose(f);
		return -1;
	}
	raw->size = (size_t)size;
	raw->buf = malloc(raw->size ? raw->size : 1);
	if (!raw->buf ||
	    fread(raw->buf, 1, raw->size, f) != raw->size) {
		fprintf(stderr, "replay_triggers: %s: cannot read it\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	if (raw->size < 8 || memcmp(raw->buf, RAW_MAGIC, 8)) {
		fprintf(stderr, "replay_triggers: %s: not a capture_raw file (no %s at offset 0)\n",
			path, RAW_MAGIC);
		return -1;
	}
	for (; off < raw->size; raw->n++) {
		uint32_t hdr[2];
		struct btr_hdr h;

		if (raw->size - off < sizeof(hdr)) {
			fprintf(stderr, "replay_triggers: %s: offset %zu: a record's header cut short (%zu bytes left)\n",
				path, off, raw->size - off);
			return -1;
		}
		memcpy(hdr, raw->buf + off, sizeof(hdr));
		if (hdr[0] >= MAX_CPUS || hdr[1] < sizeof(h) ||
		    hdr[1] > raw->size - off - sizeof(hdr)) {
			fprintf(stderr, "replay_triggers: %s: offset %zu: bad record header (cpu %u, length %u, %zu bytes left)\n",
				path, off, hdr[0], hdr[1],
				raw->size - off - sizeof(hdr));
			return -1;
		}
		memcpy(&h, raw->buf + off + sizeof(hdr), sizeof(h));
		if (h.type == 0 || h.type >= BTR_REC_TYPE_MAX) {
			fprintf(stderr, "replay_triggers: %s: offset %zu: unknown record type %u\n",
				path, off, h.type);
			return -1;
		}
		if (h.type != BTR_REC_CLOCK) {
			if (raw->n == cap) {
				struct replay_rec *r;

				cap = cap ? cap * 2 : 1 << 16;
				r = realloc(raw->recs, cap * sizeof(*r));
				if (!r) {
					fprintf(stderr, "replay_triggers: out of memory\n");
					return -1;
				}
				raw->recs = r;
			}
			raw->recs[raw->n] = (struct replay_rec){
				h.ts, raw->buf + off + sizeof(hdr), hdr[1],
				hdr[0], 0
			};
			if (hdr[0] >= raw->ncpus)
				raw->ncpus = hdr[0] + 1;
		} else {
			raw->n--;
		}
		off += sizeof(hdr) + ((hdr[1] + 7u) & ~7u);
	}
	if (!raw->n) {
		fprintf(stderr, "replay_triggers: %s: no records\n", path);
		return -1;
	}
	return 0;
}

/* -T K/J: the records of threads whose tid % K is not J left to the
 * idle tasks' tid, 0. */
static void sample_threads(struct raw *raw, uint32_t k, uint32_t j)
{
	size_t i;

	for (i = 0; i < raw->n; i++) {
		uint8_t *p = raw->buf + ((const uint8_t *)raw->recs[i].rec -
					 raw->buf);
		uint16_t type = ((struct btr_hdr *)p)->type;
		uint32_t len = raw->recs[i].len;
		int32_t *tid[2] = { NULL, NULL };
		int t;

		if ((type == BTR_REC_SWITCH || type == BTR_REC_SWITCH_BLOCKED) &&
		    len >= sizeof(struct btr_switch)) {
			tid[0] = &((struct btr_switch *)p)->prev_pid;
			tid[1] = &((struct btr_switch *)p)->next_pid;
		} else if ((type == BTR_REC_WAKING ||
			    type == BTR_REC_WAKEUP_NEW) &&
			   len >= sizeof(struct btr_wakeup)) {
			tid[0] = &((struct btr_wakeup *)p)->pid;
		} else if (type == BTR_REC_FREE &&
			   len >= sizeof(struct btr_exit)) {
			tid[0] = &((struct btr_exit *)p)->pid;
		}
		for (t = 0; t < 2; t++)
			if (tid[t] && (uint32_t)*tid[t] % k != j)
				*tid[t] = 0;
	}
}

/* By time; equal times in the file's order (the records' addresses). */
static int cmp_rec(const void *a, const void *b)
{
	const struct replay_rec *x = a, *y = b;
	const uint8_t *p = x->rec, *q = y->rec;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return p < q ? -1 : p > q;
}

/* Replays the records as `nreaders` readers read them (1: the one
 * reader's configuration); the hits into *t. */
static int replay(const struct trig_spec *specs, uint32_t nspecs,
		  const struct raw *raw, uint32_t nreaders, uint64_t seed,
		  struct replay_hits *t, uint64_t *inexact)
{
	struct trig_watch *w = trig_watch_new(specs, nspecs, raw->ncpus);
	uint64_t rng = seed;
	int e;

	if (!w || (nreaders > 1 && trig_watch_readers(w, nreaders))) {
		trig_watch_free(w);
		return -ENOMEM;
	}
	e = replay_passes(w, raw->recs, raw->n, nreaders, PASS, &rng, t);
	*inexact = trig_watch_inexact(w);
	trig_watch_free(w);
	return e;
}

static void print_hit(const char *what, const char *spec, const struct hit *h)
{
	fprintf(stderr, "replay_triggers: %s: %s tid %d %llu..%llu (%.3f ms)\n",
		what, spec, h->tid, (unsigned long long)h->start,
		(unsigned long long)h->end, (double)(h->end - h->start) / 1e6);
}

/* A false hit, and (a)'s hits of its spec and thread that overlap it. */
static void print_false(const char *const *names, const struct hit *h,
			const struct replay_hits *one)
{
	size_t i;

	print_hit("false hit", names[h->spec], h);
	for (i = 0; i < one->n; i++) {
		const struct hit *o = &one->v[i];

		if (o->spec == h->spec && o->tid == h->tid &&
		    o->start < h->end && h->start < o->end)
			print_hit("  one reader had", names[o->spec], o);
	}
}

struct tally {
	uint64_t one, readers, found, false_;
};

/* Walks the two sorted hit lists side by side: per spec and in all
 * (tally[nspecs]). */
static void compare(const struct replay_hits *one,
		    const struct replay_hits *rd, const char *const *names,
		    bool verbose, struct tally *tally, uint32_t nspecs)
{
	size_t i = 0, j = 0;

	while (i < one->n || j < rd->n) {
		int c = i == one->n  ? 1
			: j == rd->n ? -1
				     : cmp_hit(&one->v[i], &rd->v[j]);
		const struct hit *h = c <= 0 ? &one->v[i] : &rd->v[j];
		struct tally *s = &tally[h->spec];

		if (c == 0) {
			s->one++, s->readers++, s->found++;
			i++, j++;
		} else if (c < 0) {
			s->one++;
			if (verbose)
				print_hit("missed", names[h->spec], h);
			i++;
		} else {
			s->readers++, s->false_++;
			print_false(names, h, one);
			j++;
		}
	}
	for (i = 0; i < nspecs; i++) {
		tally[nspecs].one += tally[i].one;
		tally[nspecs].readers += tally[i].readers;
		tally[nspecs].found += tally[i].found;
		tally[nspecs].false_ += tally[i].false_;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: replay_triggers [-R READERS] [-s SEED] [-T K/J] [-v] -w SPEC [-w SPEC]... FILE\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct trig_spec specs[TRIG_MAX];
	const char *names[TRIG_MAX + 1];
	struct tally tally[TRIG_MAX + 1];
	struct replay_hits one = { 0 }, rd = { 0 };
	struct raw raw = { 0 };
	const char *path = NULL;
	uint64_t seed = 1, inexact = 0, unused;
	unsigned long long v;
	size_t k;
	uint32_t nspecs = 0, nreaders = 2, i, mod = 1, rem = 0;
	bool verbose = false;
	char err[256], *end;
	int a, rc = 1;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-w") && a + 1 < argc) {
			if (nspecs == TRIG_MAX) {
				fprintf(stderr, "replay_triggers: at most %d -w\n",
					TRIG_MAX);
				return 64;
			}
			if (trig_spec_parse(argv[++a], &specs[nspecs], err,
					    sizeof(err))) {
				fprintf(stderr, "replay_triggers: -w %s: %s\n",
					argv[a], err);
				return 64;
			}
			names[nspecs++] = argv[a];
		} else if (!strcmp(argv[a], "-R") && a + 1 < argc) {
			errno = 0;
			v = strtoull(argv[++a], &end, 10);

			if (errno || *end || v < 1 || v > MAX_READERS) {
				fprintf(stderr, "replay_triggers: -R %s: from 1 to %u\n",
					argv[a], MAX_READERS);
				return 64;
			}
			nreaders = (uint32_t)v;
		} else if (!strcmp(argv[a], "-s") && a + 1 < argc) {
			errno = 0;
			seed = strtoull(argv[++a], &end, 10);
			if (errno || *end || argv[a][0] == '-') {
				fprintf(stderr, "replay_triggers: -s %s: not a number\n",
					argv[a]);
				return 64;
			}
		} else if (!strcmp(argv[a], "-T") && a + 1 < argc) {
			if (sscanf(argv[++a], "%u/%u%c", &mod, &rem, err) != 2 ||
			    !mod || rem >= mod) {
				fprintf(stderr, "replay_triggers: -T %s: K/J, 0 <= J < K\n",
					argv[a]);
				return 64;
			}
		} else if (!strcmp(argv[a], "-v")) {
			verbose = true;
		} else if (!path && argv[a][0] != '-') {
			path = argv[a];
		} else {
			return usage();
		}
	}
	if (!path || !nspecs)
		return usage();
	names[nspecs] = "all";
	if (load(path, &raw))
		goto cleanup;
	qsort(raw.recs, raw.n, sizeof(*raw.recs), cmp_rec);
	if (mod > 1)
		sample_threads(&raw, mod, rem);
	/* contiguous ranges of CPUs, one a reader */
	for (k = 0; k < raw.n; k++)
		raw.recs[k].reader = (uint32_t)((uint64_t)raw.recs[k].cpu *
						nreaders / raw.ncpus);
	if (replay(specs, nspecs, &raw, 1, seed, &one, &unused) ||
	    replay(specs, nspecs, &raw, nreaders, seed, &rd, &inexact)) {
		fprintf(stderr, "replay_triggers: out of memory\n");
		goto cleanup;
	}
	memset(tally, 0, sizeof(tally));
	compare(&one, &rd, names, verbose, tally, nspecs);
	printf("replay_triggers records=%zu one=%llu readers=%llu found=%llu false=%llu missed=%llu overflow=%llu inexact=%llu cpus=%u nreaders=%u seed=%llu\n",
	       raw.n, (unsigned long long)tally[nspecs].one,
	       (unsigned long long)tally[nspecs].readers,
	       (unsigned long long)tally[nspecs].found,
	       (unsigned long long)tally[nspecs].false_,
	       (unsigned long long)(tally[nspecs].one - tally[nspecs].found),
	       (unsigned long long)(one.over + rd.over),
	       (unsigned long long)inexact, raw.ncpus, nreaders,
	       (unsigned long long)seed);
	for (i = 0; i < nspecs; i++)
		printf("spec=%u %s one=%llu readers=%llu found=%llu false=%llu missed=%llu\n",
		       i, names[i], (unsigned long long)tally[i].one,
		       (unsigned long long)tally[i].readers,
		       (unsigned long long)tally[i].found,
		       (unsigned long long)tally[i].false_,
		       (unsigned long long)(tally[i].one - tally[i].found));
	if (one.over || rd.over) {
		fprintf(stderr, "replay_triggers: the watch's queue overflowed: %llu hits lost with one reader, %llu with %u readers; the comparison is not valid (higher thresholds, or a lighter load)\n",
			(unsigned long long)one.over,
			(unsigned long long)rd.over, nreaders);
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(one.v);
	free(rd.v);
	free(raw.recs);
	free(raw.buf);
	return rc;
}
