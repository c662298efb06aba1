/* Records handed to a trigger watch as the recorder's readers hand them,
 * for test_trigger_orders.c (synthetic schedules) and
 * tests/tools/replay_triggers.c (real ring records from capture_raw): a
 * pass every PASS ns of trace time, read by one reader in time order,
 * or by N reader threads, each its own rings in time order, taking turns
 * in runs of 1 to 40 records (either may be ahead of another by up to a
 * pass), the main thread taking the hits between the runs; after each
 * pass, every reader has read all before its end (its frontier). */
#ifndef BTR_TRIG_REPLAY_H
#define BTR_TRIG_REPLAY_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "trigger/watch.h"

/* A record in time order: its ring's CPU, and which reader reads it. */
struct replay_rec {
	uint64_t ts;
	const void *rec;
	uint32_t len, cpu, reader;
};

/* A hit as compared: its spec, thread and interval. */
struct hit {
	uint32_t spec;
	int32_t tid;
	uint64_t start, end;
};

/* The hits taken so far, as the main thread takes them (grown as
 * needed), and the hits the watch's queue had no room for. */
struct replay_hits {
	struct hit *v;
	size_t n, cap;
	uint64_t over;
	int err; /* -ENOMEM: some hits could not be kept */
};

/* A linear congruential generator: a seed gives the same turns again. */
static inline uint64_t replay_rnd(uint64_t *rng, uint64_t lo, uint64_t hi)
{
	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (*rng >> 33) % (hi - lo + 1);
}

/* By spec, thread, start, then end. */
static inline int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->spec != y->spec)
		return x->spec < y->spec ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static inline void replay_take(struct trig_watch *w, struct replay_hits *t)
{
	struct trig_hit h[64];
	size_t k, j;

	while ((k = trig_watch_take(w, h, 64, &t->over))) {
		for (j = 0; j < k; j++) {
			if (t->n == t->cap) {
				size_t cap = t->cap ? t->cap * 2 : 256;
				struct hit *v = realloc(t->v, cap * sizeof(*v));

				if (!v) {
					t->err = -ENOMEM;
					return;
				}
				t->v = v;
				t->cap = cap;
			}
			t->v[t->n++] = (struct hit){ h[j].spec, h[j].tid,
						     h[j].start, h[j].end };
		}
	}
}

/* Reader r's next record in [*at, to). */
static inline bool replay_next(const struct replay_rec *recs, uint32_t r,
			       size_t *at, size_t to)
{
	while (*at < to && recs[*at].reader != r)
		(*at)++;
	return *at < to;
}

/* The records [from, to) as nreaders reader threads read them, each its
 * own rings in time order, taking turns in runs of 1 to 40 records (a
 * reader with none left hands its turn to the next that has some). The
 * main thread takes hits between the runs, as it does while readers
 * read. at: nreaders cursors. */
static inline void replay_readers(struct trig_watch *w,
				  const struct replay_rec *recs, size_t from,
				  size_t to, uint32_t nreaders, size_t *at,
				  uint64_t *rng, struct replay_hits *t)
{
	uint32_t i;

	for (i = 0; i < nreaders; i++)
		at[i] = from;
	for (;;) {
		uint32_t r = (uint32_t)replay_rnd(rng, 0, nreaders - 1);
		uint32_t run = (uint32_t)replay_rnd(rng, 1, 40);

		for (i = 0; i < nreaders &&
			    !replay_next(recs, r, &at[r], to); i++)
			r = (r + 1) % nreaders;
		if (i == nreaders)
			return;
		for (; run && replay_next(recs, r, &at[r], to); at[r]++, run--)
			trig_watch_record(w, recs[at[r]].cpu, recs[at[r]].rec,
					  recs[at[r]].len);
		replay_take(w, t);
	}
}

/* The rings each reader reads, from the records: reader r's CPUs are
 * cpus[at[r] .. at[r + 1]). at: nreaders + 1; *cpus allocated (NULL
 * with no records). 0, or -ENOMEM. */
static inline int replay_rings(const struct replay_rec *recs, size_t n,
			       uint32_t nreaders, uint32_t *at,
			       uint32_t **cpus)
{
	uint32_t ncpus = 0, c, r, k = 0, *owner;
	size_t i;

	for (i = 0; i < n; i++)
		ncpus = recs[i].cpu >= ncpus ? recs[i].cpu + 1 : ncpus;
	owner = malloc((ncpus ? ncpus : 1) * sizeof(*owner));
	*cpus = malloc((ncpus ? ncpus : 1) * sizeof(**cpus));
	if (!owner || !*cpus) {
		free(owner);
		free(*cpus);
		*cpus = NULL;
		return -ENOMEM;
	}
	for (c = 0; c < ncpus; c++)
		owner[c] = UINT32_MAX;
	for (i = 0; i < n; i++)
		owner[recs[i].cpu] = recs[i].reader;
	for (r = 0; r < nreaders; r++) {
		at[r] = k;
		for (c = 0; c < ncpus; c++)
			if (owner[c] == r)
				(*cpus)[k++] = c;
	}
	at[nreaders] = k;
	free(owner);
	return 0;
}

/* Feeds recs[0..n) (in time order) to w a pass at a time, the passes
 * ending at multiples of `pass` ns: in time order with one reader
 * (nreaders 1, hits taken every 40 records), else as nreaders reader
 * threads do (replay_readers; trig_watch_readers
 * called). The hits into *t, sorted (cmp_hit). 0, or -ENOMEM. */
static inline int replay_passes(struct trig_watch *w,
				const struct replay_rec *recs, size_t n,
				uint32_t nreaders, uint64_t pass, uint64_t *rng,
				struct replay_hits *t)
{
	size_t i = 0, end, *at = calloc(nreaders, sizeof(*at));
	uint32_t *rat = calloc(nreaders + 1, sizeof(*rat)), *cpus = NULL;
	uint64_t now;
	uint32_t r;

	if (!at || !rat || replay_rings(recs, n, nreaders, rat, &cpus)) {
		free(at);
		free(rat);
		return -ENOMEM;
	}
	for (now = n ? (recs[0].ts / pass + 1) * pass : 0; i < n;
	     now += pass) {
		for (end = i; end < n && recs[end].ts <= now; end++)
			;
		if (nreaders > 1) {
			replay_readers(w, recs, i, end, nreaders, at, rng, t);
		} else {
			for (; i < end; i++) {
				trig_watch_record(w, recs[i].cpu, recs[i].rec,
						  recs[i].len);
				if (i % 40 == 39)
					replay_take(w, t);
			}
		}
		i = end;
		for (r = 0; r < nreaders; r++)
			trig_watch_frontier(w, r, now, &cpus[rat[r]],
					    rat[r + 1] - rat[r]);
		replay_take(w, t);
	}
	for (r = 0; r < nreaders; r++)
		trig_watch_frontier(w, r, UINT64_MAX, &cpus[rat[r]],
				    rat[r + 1] - rat[r]);
	replay_take(w, t);
	free(at);
	free(rat);
	free(cpus);
	if (!t->err)
		qsort(t->v, t->n, sizeof(*t->v), cmp_hit);
	return t->err;
}

#endif
