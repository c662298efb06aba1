/* Sequence id remapping of merged inputs (see seq_map.h): an
 * open-addressing map from input id to output id. */
#include "convert/seq_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void seq_map_free(struct seq_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static size_t slot_of(const struct seq_pair *slots, size_t cap, uint32_t seq)
{
	size_t i = (seq * 2654435761u) & (cap - 1);

	while (slots[i].in && slots[i].in != seq)
		i = (i + 1) & (cap - 1);
	return i;
}

static int rehash(struct seq_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 32, i;
	struct seq_pair *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].in)
			slots[slot_of(slots, cap, m->slots[i].in)] = m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int seq_map_add(struct seq_map *m, uint32_t seq)
{
	size_t i;

	if (!seq)
		return 0;
	if (m->cap && m->slots[slot_of(m->slots, m->cap, seq)].in)
		return 0;
	if (2 * (m->n + 1) > m->cap && rehash(m))
		return -ENOMEM;
	i = slot_of(m->slots, m->cap, seq);
	m->slots[i] = (struct seq_pair){ seq, seq };
	m->n++;
	return 0;
}

static const struct seq_pair *find(const struct seq_map *m, uint32_t seq)
{
	const struct seq_pair *p;

	if (!seq || !m->cap)
		return NULL;
	p = &m->slots[slot_of(m->slots, m->cap, seq)];
	return p->in ? p : NULL;
}

bool seq_map_has(const struct seq_map *m, uint32_t seq)
{
	return find(m, seq) != NULL;
}

uint32_t seq_map_get(const struct seq_map *m, uint32_t seq)
{
	const struct seq_pair *p = find(m, seq);

	return p ? p->out : seq;
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
	uint32_t *ids = m->n ? malloc(m->n * sizeof(*ids)) : NULL;
	size_t i, k = 0;
	int err = 0;

	if (m->n && !ids)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].in)
			ids[k++] = m->slots[i].in;
	/* in id order: the result does not depend on the hash layout */
	if (k)
		qsort(ids, k, sizeof(*ids), cmp_u32);
	for (i = 0; i < k && !err; i++) {
		struct seq_pair *p = &m->slots[slot_of(m->slots, m->cap, ids[i])];

		if (seq_map_has(used, p->in)) {
			err = seq_map_fresh(used, max_used, &p->out);
			m->renumbered = true;
			continue;
		}
		p->out = p->in;
		if (p->in > *max_used)
			*max_used = p->in;
		err = seq_map_add(used, p->in);
	}
	free(ids);
	return err;
}
