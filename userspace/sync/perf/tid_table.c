/* A bounded map tid -> tgid (see tid_table.h): linear probing, doubled at
 * half full. The tids come from the inputs, so the hash is keyed with a
 * random seed per table: no input can pile its tids into one cluster. */
#include "sync/perf/tid_table.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#define FIRST_SLOTS 1024u

static uint32_t random_seed(void)
{
	uint32_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)ts.tv_nsec ^ (uint32_t)(uintptr_t)&ts;
}

void tid_table_init(struct tid_table *t, size_t max)
{
	*t = (struct tid_table){ .max = max ? max : TID_TABLE_MAX,
				 .seed = random_seed() };
}

void tid_table_free(struct tid_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = t->n = 0;
}

/* MurmurHash3's 32-bit finalizer of the seeded tid: every bit of the tid
 * reaches the low bits that pick the slot. */
static uint32_t hash(uint32_t seed, int32_t tid)
{
	uint32_t h = (uint32_t)tid ^ seed;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The slot holding tid, or the empty one where it goes; *probes counts the
 * slots looked at beyond the first. */
static struct tid_entry *slot_of(const struct tid_entry *slots, size_t nslots,
				 uint32_t seed, int32_t tid, uint64_t *probes)
{
	size_t i = hash(seed, tid) & (nslots - 1);

	while (slots[i].tid && slots[i].tid != tid) {
		i = (i + 1) & (nslots - 1);
		(*probes)++;
	}
	return (struct tid_entry *)&slots[i];
}

static int grow(struct tid_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : FIRST_SLOTS, i;
	struct tid_entry *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nslots; i++)
		if (t->slots[i].tid)
			*slot_of(slots, n, t->seed, t->slots[i].tid,
				 &t->probes) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

int tid_table_add(struct tid_table *t, int32_t tid, int32_t tgid)
{
	struct tid_entry *e;
	int err;

	if (tid <= 0 || tgid <= 0)
		return 0;
	if (t->nslots) {
		e = slot_of(t->slots, t->nslots, t->seed, tid, &t->probes);
		if (e->tid) {
			if (e->tgid != tgid && e->tgid != TID_TABLE_REUSED) {
				e->tgid = TID_TABLE_REUSED;
				t->reused++;
			}
			return 0;
		}
	}
	if (t->n >= t->max) {
		t->refused++;
		return 0;
	}
	if ((t->n + 1) * 2 > t->nslots && (err = grow(t)))
		return err;
	e = slot_of(t->slots, t->nslots, t->seed, tid, &t->probes);
	e->tid = tid;
	e->tgid = tgid;
	t->n++;
	return 0;
}

int32_t tid_table_tgid(struct tid_table *t, int32_t tid)
{
	const struct tid_entry *e;

	if (!t->nslots || tid <= 0)
		return -1;
	e = slot_of(t->slots, t->nslots, t->seed, tid, &t->probes);
	return e->tid ? e->tgid : -1;
}
