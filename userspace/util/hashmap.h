/* The one hash map of the program: open addressing with linear probing over
 * fixed-size keys (up to 16 bytes, compared bytewise) and fixed-size values
 * stored inline, doubled at half full, removal by backward shift (no
 * tombstones). The hash is seeded: a map whose keys come from an input
 * takes a random seed (hmap_random_seed) so that no input can pile its keys
 * into one cluster. Used for sequence ids, tids and clock keys alike.
 *
 * Pointers to values stay valid until the next insertion or removal. A
 * map with val_size 0 is a set: hmap_find returns a non-NULL pointer for a
 * key it holds. */
#ifndef BTR_HASHMAP_H
#define BTR_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HMAP_MAX_KEY 16

struct hmap {
	unsigned char *slots; /* cap slots: [used][key][value] */
	size_t cap, n;
	uint32_t key_size, val_size, slot_size, key_off, val_off;
	uint64_t seed;
	uint64_t probes; /* slots looked at beyond the first, in all */
};

/* An empty map; key_size from 1 to HMAP_MAX_KEY. */
void hmap_init(struct hmap *m, size_t key_size, size_t val_size,
	       uint64_t seed);
void hmap_free(struct hmap *m); /* empty again, same sizes and seed */

/* Room for n keys in all: insertions up to n then never allocate. Returns
 * 0, or -1 when out of memory (the map unchanged). */
int hmap_reserve(struct hmap *m, size_t n);

/* The value of key, or NULL when the map does not hold it. */
void *hmap_find(const struct hmap *m, const void *key);
/* The value of key, zeroed and *added set when it is new; NULL when out
 * of memory. */
void *hmap_insert(struct hmap *m, const void *key, bool *added);
/* True if key was there and is removed. */
bool hmap_remove(struct hmap *m, const void *key);

/* Iteration: for (size_t i = 0; hmap_next(m, &i, &k, &v);) ... */
bool hmap_next(const struct hmap *m, size_t *pos, const void **key,
	       void **val);

/* A seed from the kernel's random pool (the clock if it has none). */
uint64_t hmap_random_seed(void);

#endif
