/* A bounded map tid -> tgid (see tid_table.h): linear probing on a
 * multiplicative hash, doubled at half full. */
#include "offline/tid_table.h"

#include <errno.h>
#include <stdlib.h>

#define FIRST_SLOTS 1024u

void tid_table_init(struct tid_table *t, size_t max)
{
	*t = (struct tid_table){ .max = max ? max : TID_TABLE_MAX };
}

void tid_table_free(struct tid_table *t)
{
	free(t->slots);
	tid_table_init(t, t->max);
}

/* The slot holding tid, or the empty one where it goes. */
static struct tid_entry *slot_of(const struct tid_entry *slots, size_t nslots,
				 int32_t tid)
{
	size_t i = ((uint32_t)tid * 2654435761u) & (nslots - 1);

	while (slots[i].tid && slots[i].tid != tid)
		i = (i + 1) & (nslots - 1);
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
			*slot_of(slots, n, t->slots[i].tid) = t->slots[i];
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
		e = slot_of(t->slots, t->nslots, tid);
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
	e = slot_of(t->slots, t->nslots, tid);
	e->tid = tid;
	e->tgid = tgid;
	t->n++;
	return 0;
}

int32_t tid_table_tgid(const struct tid_table *t, int32_t tid)
{
	const struct tid_entry *e;

	if (!t->nslots || tid <= 0)
		return -1;
	e = slot_of(t->slots, t->nslots, tid);
	return e->tid ? e->tgid : -1;
}
