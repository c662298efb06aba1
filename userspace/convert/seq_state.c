/* Per-sequence state (see seq_state.h): an open-addressing map from
 * sequence id to its default clock and latest time. */
#include "convert/seq_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void seq_state_free(struct seq_state *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

static size_t slot_of(const struct seq_slot *slots, size_t cap, uint32_t seq)
{
	size_t i = (seq * 2654435761u) & (cap - 1);

	while (slots[i].seq && slots[i].seq != seq)
		i = (i + 1) & (cap - 1);
	return i;
}

static int rehash(struct seq_state *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64, i;
	struct seq_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++)
		if (s->slots[i].seq)
			slots[slot_of(slots, cap, s->slots[i].seq)] = s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

/* The slot of seq (not 0), added if new; NULL when out of memory. */
static struct seq_slot *get(struct seq_state *s, uint32_t seq)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap && rehash(s))
		return NULL;
	i = slot_of(s->slots, s->cap, seq);
	if (!s->slots[i].seq) {
		s->slots[i] = (struct seq_slot){ seq, 0, INT64_MIN };
		s->n++;
	}
	return &s->slots[i];
}

static const struct seq_slot *find(const struct seq_state *s, uint32_t seq)
{
	const struct seq_slot *slot;

	if (!seq || !s->cap)
		return NULL;
	slot = &s->slots[slot_of(s->slots, s->cap, seq)];
	return slot->seq ? slot : NULL;
}

int seq_state_update(struct seq_state *s, const struct packet_info *p)
{
	struct seq_slot *slot;

	if (!p->seq_id || (!p->cleared && !p->has_defaults))
		return 0;
	slot = get(s, p->seq_id);
	if (!slot)
		return -ENOMEM;
	if (p->cleared)
		slot->clock = 0;
	if (p->has_defaults)
		slot->clock = p->defaults_clock;
	return 0;
}

uint32_t seq_state_clock(const struct seq_state *s, uint32_t seq)
{
	const struct seq_slot *slot = find(s, seq);

	return slot ? slot->clock : 0;
}

int seq_state_note_time(struct seq_state *s, uint32_t seq, int64_t t)
{
	struct seq_slot *slot;

	if (!seq)
		return 0;
	slot = get(s, seq);
	if (!slot)
		return -ENOMEM;
	if (t > slot->latest)
		slot->latest = t;
	return 0;
}

int64_t seq_state_latest(const struct seq_state *s, uint32_t seq)
{
	const struct seq_slot *slot = find(s, seq);

	return slot ? slot->latest : INT64_MIN;
}
