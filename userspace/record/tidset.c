/* A set of positive ids (see tidset.h). */
#include "record/tidset.h"

bool tidset_has(const struct tidset *s, int32_t id)
{
	return id > 0 && s->map.n && hmap_find(&s->map, &id);
}

int tidset_add(struct tidset *s, int32_t id)
{
	bool added;

	if (id <= 0)
		return 0;
	if (!s->map.key_size)
		hmap_init(&s->map, sizeof(id), 0, 0);
	if (!hmap_insert(&s->map, &id, &added))
		return -1;
	return added;
}

void tidset_del(struct tidset *s, int32_t id)
{
	if (id > 0)
		hmap_remove(&s->map, &id);
}

void tidset_free(struct tidset *s)
{
	hmap_free(&s->map);
}
