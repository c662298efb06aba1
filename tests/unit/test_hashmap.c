/* Unit tests of util/hashmap: random insertions, lookups and removals
 * checked against a plain array, with 4- and 16-byte keys, sets, iteration
 * and probe counts. */
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "unit.h"

#define NKEYS 4000

struct big_key {
	uint32_t a, b, c, d;
};

/* A reference: present[k] and value[k] for keys 1..NKEYS-1. */
struct ref {
	bool present[NKEYS];
	int64_t value[NKEYS];
	size_t n;
};

static void check_same(struct hmap *m, const struct ref *r, bool big)
{
	uint32_t k;
	bool same = true;

	for (k = 1; k < NKEYS; k++) {
		struct big_key bk = { k, ~k, k * 7, 3 };
		int64_t *v = hmap_find(m, big ? (const void *)&bk
					      : (const void *)&k);

		if (!!v != r->present[k] || (v && *v != r->value[k]))
			same = false;
	}
	CHECK(same);
	CHECK_EQ_I64(m->n, r->n);
}

static void random_ops(bool big, uint64_t seed)
{
	struct hmap m;
	struct ref *r = calloc(1, sizeof(*r));
	int i;

	hmap_init(&m, big ? sizeof(struct big_key) : sizeof(uint32_t),
		  sizeof(int64_t), seed);
	for (i = 0; i < 200000; i++) {
		uint32_t k = (uint32_t)(unit_rand() % (NKEYS - 1)) + 1;
		struct big_key bk = { k, ~k, k * 7, 3 };
		const void *key = big ? (const void *)&bk : (const void *)&k;
		bool added;

		if (unit_rand() % 3) {
			int64_t *v = hmap_insert(&m, key, &added);

			if (!v || added == r->present[k]) {
				CHECK(v && added != r->present[k]);
				break;
			}
			if (added)
				CHECK_EQ_I64(*v, 0);
			*v = (int64_t)i;
			r->value[k] = i;
			r->n += added;
			r->present[k] = true;
		} else {
			bool removed = hmap_remove(&m, key);

			if (removed != r->present[k]) {
				CHECK(removed == r->present[k]);
				break;
			}
			r->n -= removed;
			r->present[k] = false;
		}
		if (i % 20000 == 0)
			check_same(&m, r, big);
	}
	check_same(&m, r, big);
	hmap_free(&m);
	free(r);
}

static void test_random_small_keys(void)
{
	random_ops(false, 0);
	random_ops(false, hmap_random_seed());
}

static void test_random_big_keys(void)
{
	random_ops(true, 12345);
}

static void test_set_and_iteration(void)
{
	struct hmap s;
	uint32_t k, sum = 0, count = 0;
	const void *key;
	void *val;
	size_t pos = 0;
	bool added;

	hmap_init(&s, sizeof(uint32_t), 0, 7);
	CHECK_EQ_I64(s.slot_size, 8); /* a set of 4-byte keys */
	CHECK(hmap_find(&s, &(uint32_t){ 1 }) == NULL);
	CHECK(!hmap_remove(&s, &(uint32_t){ 1 }));
	for (k = 1; k <= 100; k++)
		CHECK(hmap_insert(&s, &k, &added) != NULL && added);
	k = 50;
	CHECK(hmap_insert(&s, &k, &added) != NULL && !added);
	CHECK(hmap_find(&s, &k) != NULL);
	CHECK(hmap_remove(&s, &k));
	CHECK(hmap_find(&s, &k) == NULL);
	while (hmap_next(&s, &pos, &key, &val)) {
		memcpy(&k, key, sizeof(k));
		sum += k;
		count++;
	}
	CHECK_EQ_I64(count, 99);
	CHECK_EQ_I64(sum, 5050 - 50);
	hmap_free(&s);
	CHECK_EQ_I64(s.n, 0);
	CHECK(hmap_find(&s, &(uint32_t){ 2 }) == NULL);
}

/* Keys a plain multiplicative hash would cluster (multiples of a large
 * power of two) still spread: under one probe per operation. */
static void test_probes_stay_low(void)
{
	struct hmap m;
	uint32_t k;
	bool added, ok = true;

	hmap_init(&m, sizeof(uint32_t), sizeof(uint32_t), hmap_random_seed());
	CHECK_EQ_I64(m.slot_size, 12);
	for (k = 1; k <= 100000; k++)
		ok &= hmap_insert(&m, &(uint32_t){ k << 12 }, &added) != NULL;
	for (k = 1; k <= 100000; k++)
		ok &= hmap_find(&m, &(uint32_t){ k << 12 }) != NULL;
	CHECK(ok);
	CHECK(m.probes < 200000);
	hmap_free(&m);
}

int main(void)
{
	RUN(test_random_small_keys);
	RUN(test_random_big_keys);
	RUN(test_set_and_iteration);
	RUN(test_probes_stay_low);
	return unit_finish();
}
