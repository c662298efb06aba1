/* Per-sequence state (see seq_state.h): a map from sequence id to its
 * default clock and latest time. */
#include "convert/seq_state.h"

#include <errno.h>

void seq_state_free(struct seq_state *s)
{
	hmap_free(&s->map);
}

/* The slot of seq (not 0), added if new; NULL when out of memory. */
static struct seq_slot *get(struct seq_state *s, uint32_t seq)
{
	struct seq_slot *slot;
	bool added;

	if (!s->map.key_size)
		hmap_init(&s->map, sizeof(seq), sizeof(*slot), 0);
	slot = hmap_insert(&s->map, &seq, &added);
	if (slot && added)
		slot->latest = INT64_MIN;
	return slot;
}

static const struct seq_slot *find(const struct seq_state *s, uint32_t seq)
{
	return seq && s->map.n ? hmap_find(&s->map, &seq) : NULL;
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
