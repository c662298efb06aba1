/* Sequence id remapping of merged inputs (see seq_map.h): a map from
 * input id to output id. */
#include "convert/seq_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void seq_map_free(struct seq_map *m)
{
	hmap_free(&m->map);
	m->renumbered = false;
}

int seq_map_add(struct seq_map *m, uint32_t seq)
{
	uint32_t *out;
	bool added;

	if (!seq)
		return 0;
	if (!m->map.key_size)
		hmap_init(&m->map, sizeof(seq), sizeof(*out), 0);
	out = hmap_insert(&m->map, &seq, &added);
	if (!out)
		return -ENOMEM;
	if (added)
		*out = seq;
	return 0;
}

bool seq_map_has(const struct seq_map *m, uint32_t seq)
{
	return seq && m->map.n && hmap_find(&m->map, &seq);
}

uint32_t seq_map_get(const struct seq_map *m, uint32_t seq)
{
	const uint32_t *out = seq && m->map.n ? hmap_find(&m->map, &seq) : NULL;

	return out ? *out : seq;
}

int seq_map_fresh(struct seq_map *used, uint32_t *max_used, uint32_t *out)
{
	uint32_t id = *max_used;

	do {
		id = id == UINT32_MAX ? 1 : id + 1;
	} while (seq_map_has(used, id));
	*out = id;
	if (id > *max_used)
		*max_used = id;
	return seq_map_add(used, id);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int seq_map_assign(struct seq_map *m, struct seq_map *used,
		   uint32_t *max_used)
{
	uint32_t *ids = m->map.n ? malloc(m->map.n * sizeof(*ids)) : NULL;
	size_t i, k = 0, pos = 0;
	const void *key;
	void *val;
	int err = 0;

	if (m->map.n && !ids)
		return -ENOMEM;
	while (hmap_next(&m->map, &pos, &key, &val))
		memcpy(&ids[k++], key, sizeof(*ids));
	/* in id order: the result does not depend on the hash layout */
	if (k)
		qsort(ids, k, sizeof(*ids), cmp_u32);
	for (i = 0; i < k && !err; i++) {
		uint32_t *out = hmap_find(&m->map, &ids[i]);

		if (seq_map_has(used, ids[i])) {
			err = seq_map_fresh(used, max_used, out);
			m->renumbered = true;
			continue;
		}
		*out = ids[i];
		if (ids[i] > *max_used)
			*max_used = ids[i];
		err = seq_map_add(used, ids[i]);
	}
	free(ids);
	return err;
}
