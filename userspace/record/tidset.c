/* Open-addressing set of positive ids. */
#include "record/tidset.h"

#include <stdlib.h>

static size_t slot_of(const struct tidset *s, int32_t id)
{
	return ((uint32_t)id * 2654435761u) & (s->cap - 1);
}

/* Index of id, or of the slot where it would go; SIZE_MAX if full. */
static size_t find(const struct tidset *s, int32_t id, bool *found)
{
	size_t i = slot_of(s, id), n, tomb = SIZE_MAX;

	*found = false;
	for (n = 0; n < s->cap; n++, i = (i + 1) & (s->cap - 1)) {
		if (s->slots[i] == id) {
			*found = true;
			return i;
		}
		if (s->slots[i] == -1 && tomb == SIZE_MAX)
			tomb = i;
		if (s->slots[i] == 0)
			return tomb != SIZE_MAX ? tomb : i;
	}
	return tomb;
}

bool tidset_has(const struct tidset *s, int32_t id)
{
	bool found = false;

	if (s->cap && id > 0)
		find(s, id, &found);
	return found;
}

static int rehash(struct tidset *s, size_t cap)
{
	struct tidset n = { calloc(cap, sizeof(int32_t)), cap, 0, 0 };
	size_t i;

	if (!n.slots)
		return -1;
	for (i = 0; i < s->cap; i++)
		if (s->slots[i] > 0)
			tidset_add(&n, s->slots[i]);
	free(s->slots);
	*s = n;
	return 0;
}

int tidset_add(struct tidset *s, int32_t id)
{
	bool found;
	size_t i;

	if (id <= 0)
		return 0;
	if ((s->used + 1) * 2 > s->cap) {
		size_t cap = 64;

		while (cap < s->live * 4)
			cap *= 2;
		if (rehash(s, cap))
			return -1;
	}
	i = find(s, id, &found);
	if (found)
		return 0;
	if (s->slots[i] == 0)
		s->used++;
	s->slots[i] = id;
	s->live++;
	return 1;
}

void tidset_del(struct tidset *s, int32_t id)
{
	bool found = false;
	size_t i;

	if (!s->cap || id <= 0)
		return;
	i = find(s, id, &found);
	if (found) {
		s->slots[i] = -1;
		s->live--;
	}
}

void tidset_free(struct tidset *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->used = s->live = 0;
}
