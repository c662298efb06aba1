/* A bounded map tid -> tgid (see tid_table.h). The tids come from the
 * inputs, so the map's hash is keyed with a random seed per table: no
 * input can pile its tids into one cluster. */
#include "sync/perf/tid_table.h"

#include <errno.h>

void tid_table_init(struct tid_table *t, size_t max)
{
	*t = (struct tid_table){ .max = max ? max : TID_TABLE_MAX };
	hmap_init(&t->map, sizeof(int32_t), sizeof(int32_t),
		  hmap_random_seed());
}

void tid_table_free(struct tid_table *t)
{
	hmap_free(&t->map);
}

int tid_table_add(struct tid_table *t, int32_t tid, int32_t tgid)
{
	int32_t *have;
	bool added;

	if (tid <= 0 || tgid <= 0)
		return 0;
	have = hmap_find(&t->map, &tid);
	if (have) {
		if (*have != tgid && *have != TID_TABLE_REUSED) {
			*have = TID_TABLE_REUSED;
			t->reused++;
		}
		return 0;
	}
	if (t->map.n >= t->max) {
		t->refused++;
		return 0;
	}
	have = hmap_insert(&t->map, &tid, &added);
	if (!have)
		return -ENOMEM;
	*have = tgid;
	return 0;
}

int32_t tid_table_tgid(struct tid_table *t, int32_t tid)
{
	const int32_t *tgid = tid > 0 ? hmap_find(&t->map, &tid) : NULL;

	return tgid ? *tgid : -1;
}
