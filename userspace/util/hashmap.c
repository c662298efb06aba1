/* Open-addressing hash map with inline keys and values (see hashmap.h). */
#include "util/hashmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define FIRST_CAP 16u

/* A slot is [used flag][key][value], each part padded to the alignment
 * its sizes allow (8, 4 or 1), so that values of 8-byte fields align and a
 * map of 4-byte keys and values takes 12 bytes a slot. */
static size_t align_of(size_t key_size, size_t val_size)
{
	if (key_size % 8 == 0 && val_size % 8 == 0)
		return 8;
	if (val_size % 8 == 0 && val_size)
		return 8;
	if (key_size % 4 == 0 && val_size % 4 == 0)
		return 4;
	return 1;
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

void hmap_init(struct hmap *m, size_t key_size, size_t val_size,
	       uint64_t seed)
{
	size_t a = align_of(key_size, val_size);

	*m = (struct hmap){
		.key_size = (uint32_t)key_size,
		.val_size = (uint32_t)val_size,
		.key_off = (uint32_t)a,
		.val_off = (uint32_t)(a + round_up(key_size, a)),
		.seed = seed,
	};
	m->slot_size = m->val_off + (uint32_t)round_up(val_size, a);
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

uint64_t hmap_random_seed(void)
{
	uint64_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
	       (uint64_t)(uintptr_t)&ts;
}

/* MurmurHash3's 64-bit finalizer: every key bit reaches the low bits that
 * pick the slot. */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t hash(const struct hmap *m, const void *key)
{
	uint64_t w[2] = { 0, 0 };
	uint32_t k4;

	if (m->key_size == 4) { /* ids: the common case, kept short */
		memcpy(&k4, key, 4);
		return mix(k4 ^ m->seed);
	}
	memcpy(w, key, m->key_size);
	if (m->key_size <= 8)
		return mix(w[0] ^ m->seed);
	return mix(mix(w[0] ^ m->seed) ^ w[1]);
}

/* Key equality; 4- and 8-byte keys without a call to memcmp. */
static bool same_key(const struct hmap *m, const unsigned char *a,
		     const void *b)
{
	uint32_t x4, y4;
	uint64_t x8, y8;

	switch (m->key_size) {
	case 4:
		memcpy(&x4, a, 4);
		memcpy(&y4, b, 4);
		return x4 == y4;
	case 8:
		memcpy(&x8, a, 8);
		memcpy(&y8, b, 8);
		return x8 == y8;
	default:
		return !memcmp(a, b, m->key_size);
	}
}

static unsigned char *slot(const struct hmap *m, size_t i)
{
	return m->slots + i * m->slot_size;
}

static void *val_of(const struct hmap *m, unsigned char *s)
{
	return s + m->val_off;
}

/* The slot holding key, or the empty one where it would go (cap > 0). */
static size_t locate(const struct hmap *m, const void *key, bool *found)
{
	size_t mask = m->cap - 1, i = hash(m, key) & mask, probes = 0;
	unsigned char *s;

	for (;;) {
		s = slot(m, i);
		if (!s[0] || same_key(m, s + m->key_off, key))
			break;
		i = (i + 1) & mask;
		probes++;
	}
	/* Counting is not a change of the map's contents. */
	((struct hmap *)m)->probes += probes;
	*found = s[0] != 0;
	return i;
}

void *hmap_find(const struct hmap *m, const void *key)
{
	bool found;
	size_t i;

	if (!m->n)
		return NULL;
	i = locate(m, key, &found);
	return found ? val_of(m, slot(m, i)) : NULL;
}

/* Rehashes into cap slots (a power of two, over twice m->n). */
static int resize(struct hmap *m, size_t cap)
{
	struct hmap g = *m;
	size_t i;
	bool found;

	g.cap = cap;
	g.slots = calloc(g.cap, g.slot_size);
	if (!g.slots)
		return -1;
	for (i = 0; i < m->cap; i++) {
		unsigned char *s = slot(m, i);

		if (s[0])
			memcpy(slot(&g, locate(&g, s + m->key_off, &found)), s,
			       m->slot_size);
	}
	g.probes = m->probes;
	free(m->slots);
	*m = g;
	return 0;
}

int hmap_reserve(struct hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : FIRST_CAP;

	while (cap < 2 * n)
		cap *= 2;
	return cap == m->cap ? 0 : resize(m, cap);
}

void *hmap_insert(struct hmap *m, const void *key, bool *added)
{
	unsigned char *s;
	bool found = false;
	size_t i = 0;

	*added = false;
	if (m->cap)
		i = locate(m, key, &found);
	if (found)
		return val_of(m, slot(m, i));
	if (2 * (m->n + 1) > m->cap) {
		if (hmap_reserve(m, m->n + 1))
			return NULL;
		i = locate(m, key, &found);
	}
	s = slot(m, i);
	memset(s, 0, m->slot_size);
	s[0] = 1;
	memcpy(s + m->key_off, key, m->key_size);
	m->n++;
	*added = true;
	return val_of(m, s);
}

bool hmap_remove(struct hmap *m, const void *key)
{
	size_t mask = m->cap - 1, i, j, home;
	bool found;

	if (!m->n)
		return false;
	i = locate(m, key, &found);
	if (!found)
		return false;
	/* Backward shift: pull later entries of the run into the hole when
	 * their home slot does not lie between the hole and them. */
	for (j = (i + 1) & mask; slot(m, j)[0]; j = (j + 1) & mask) {
		home = hash(m, slot(m, j) + m->key_off) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			memcpy(slot(m, i), slot(m, j), m->slot_size);
			i = j;
		}
	}
	memset(slot(m, i), 0, m->slot_size);
	m->n--;
	return true;
}

bool hmap_next(const struct hmap *m, size_t *pos, const void **key,
	       void **val)
{
	for (; *pos < m->cap; (*pos)++) {
		unsigned char *s = slot(m, *pos);

		if (s[0]) {
			(*pos)++;
			*key = s + m->key_off;
			*val = val_of(m, s);
			return true;
		}
	}
	return false;
}
