/* Interning of task names (names.h). */
#include "report/names.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* The id of a zero-padded key in the table, added when new; UINT32_MAX
 * when out of memory. */
static uint32_t table_id(struct names *t, const char key[NAME_MAX_LEN + 1])
{
	uint32_t *id;
	bool added;

	id = hmap_insert(&t->ids, key, &added);
	if (!id)
		return UINT32_MAX;
	if (added) {
		if (grow_array((void **)&t->str, &t->cap, t->n + 1,
			       sizeof(*t->str), 256)) {
			hmap_remove(&t->ids, key);
			return UINT32_MAX;
		}
		memcpy(t->str[t->n], key, NAME_MAX_LEN + 1);
		*id = (uint32_t)t->n++;
	}
	return *id;
}

int names_init(struct names *t)
{
	static const char empty[NAME_MAX_LEN + 1];

	memset(t, 0, sizeof(*t));
	hmap_init(&t->ids, NAME_MAX_LEN + 1, sizeof(uint32_t),
		  hmap_random_seed());
	hmap_init(&t->long_ids, sizeof(uint64_t), sizeof(uint32_t),
		  hmap_random_seed());
	/* "" first, as id 0: what every zeroed cache slot says */
	return table_id(t, empty) == 0 ? 0 : -1;
}

void names_free(struct names *t)
{
	size_t i;

	hmap_free(&t->ids);
	hmap_free(&t->long_ids);
	for (i = 0; i < t->nlong; i++)
		free(t->lstr[i]);
	free(t->lstr);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

uint32_t names_id(struct names *t, const void *s, size_t len)
{
	char key[NAME_MAX_LEN + 1] = { 0 };
	struct name_cached *c;
	uint32_t id;
	uint64_t k[2];

	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	memcpy(key, s, len);
	/* a NUL inside ends the name, as the kernel's comm */
	len = strnlen(key, len);
	memset(key + len, 0, sizeof(key) - len);
	memcpy(k, key, sizeof(k));
	c = &t->cache[((k[0] * 0x9e3779b97f4a7c15ull) ^
		       (k[1] * 0xc2b2ae3d27d4eb4full)) >> 56];
	if (c->k[0] == k[0] && c->k[1] == k[1])
		return c->id;
	id = table_id(t, key);
	if (id != UINT32_MAX)
		*c = (struct name_cached){ { k[0], k[1] }, id };
	return id;
}

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= (uint8_t)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t names_long_id(struct names *t, const void *s, size_t len)
{
	char *copy;
	uint64_t h;
	uint32_t *idx;
	bool added;

	if (len > NAMES_LONG_MAX_LEN)
		len = NAMES_LONG_MAX_LEN;
	len = strnlen(s, len);
	h = fnv1a(s, len);
	idx = hmap_insert(&t->long_ids, &h, &added);
	if (!idx)
		return UINT32_MAX;
	if (!added && strlen(t->lstr[*idx]) == len &&
	    !memcmp(t->lstr[*idx], s, len))
		return NAMES_LONG | *idx;
	/* new, or a hash collision: the newer name takes the index slot */
	if (t->nlong >= NAMES_LONG - 1 ||
	    grow_array((void **)&t->lstr, &t->caplong, t->nlong + 1,
		       sizeof(*t->lstr), 64) ||
	    !(copy = strndup(s, len))) {
		if (added)
			hmap_remove(&t->long_ids, &h);
		return UINT32_MAX;
	}
	t->lstr[t->nlong] = copy;
	*idx = (uint32_t)t->nlong++;
	return NAMES_LONG | *idx;
}

const char *names_str(const struct names *t, uint32_t id)
{
	if (id & NAMES_LONG)
		return (id & ~NAMES_LONG) < t->nlong ? t->lstr[id & ~NAMES_LONG] : "";
	return id < t->n ? t->str[id] : "";
}
