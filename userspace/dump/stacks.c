/* Per-sequence interned callstacks for dump (see stacks.h): one hash map
 * keyed by (sequence, table, iid), whose values own their copies. */
#include "dump/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hashmap.h"

enum table { T_NAME, T_FRAME, T_STACK };

struct key {
	uint32_t seq;
	uint32_t table;
	uint64_t iid;
};

/* T_NAME: a string; T_FRAME: the function name's iid, and in str its
 * rel_pc in hex, printed for a frame without a name; T_STACK: n frame
 * iids, root first. */
struct val {
	char *str;
	uint64_t *ids;
	uint64_t n;
};

struct dump_stacks {
	struct hmap map;
	char **names;
	size_t cap;
};

struct dump_stacks *dump_stacks_new(void)
{
	struct dump_stacks *s = calloc(1, sizeof(*s));

	if (s)
		hmap_init(&s->map, sizeof(struct key), sizeof(struct val),
			  hmap_random_seed());
	return s;
}

void dump_stacks_free(struct dump_stacks *s)
{
	const void *k;
	void *v;
	size_t pos = 0;

	if (!s)
		return;
	while (hmap_next(&s->map, &pos, &k, &v)) {
		free(((struct val *)v)->str);
		free(((struct val *)v)->ids);
	}
	hmap_free(&s->map);
	free(s->names);
	free(s);
}

/* The entry of (seq, table, iid), emptied, or NULL when out of memory. */
static struct val *slot(struct dump_stacks *s, uint32_t seq, uint32_t table,
			uint64_t iid)
{
	struct key k = { seq, table, iid };
	bool added;
	struct val *v = hmap_insert(&s->map, &k, &added);

	if (!v)
		return NULL;
	if (!added) {
		free(v->str);
		free(v->ids);
	}
	memset(v, 0, sizeof(*v));
	return v;
}

int dump_stacks_intern(struct dump_stacks *s, uint32_t seq,
		       const Perfetto__Protos__InternedData *d)
{
	struct val *v;
	size_t i;

	if (!d)
		return 0;
	for (i = 0; i < d->n_function_names; i++) {
		const Perfetto__Protos__InternedString *n = d->function_names[i];

		bool has = n->has_str && n->str.data; /* "" has no data */

		v = slot(s, seq, T_NAME, n->iid);
		if (!v || !(v->str = strndup(has ? (char *)n->str.data : "",
					      has ? n->str.len : 0)))
			return -ENOMEM;
	}
	for (i = 0; i < d->n_frames; i++) {
		const Perfetto__Protos__Frame *f = d->frames[i];

		v = slot(s, seq, T_FRAME, f->iid);
		if (!v)
			return -ENOMEM;
		v->n = f->function_name_id;
		if (asprintf(&v->str, "0x%" PRIx64, f->rel_pc) < 0) {
			v->str = NULL;
			return -ENOMEM;
		}
	}
	for (i = 0; i < d->n_callstacks; i++) {
		const Perfetto__Protos__Callstack *c = d->callstacks[i];

		v = slot(s, seq, T_STACK, c->iid);
		if (!v)
			return -ENOMEM;
		v->n = c->n_frame_ids;
		if (!v->n)
			continue;
		v->ids = malloc(v->n * sizeof(*v->ids));
		if (!v->ids)
			return -ENOMEM;
		memcpy(v->ids, c->frame_ids, v->n * sizeof(*v->ids));
	}
	return 0;
}

static const struct val *find(const struct dump_stacks *s, uint32_t seq,
			      uint32_t table, uint64_t iid)
{
	struct key k = { seq, table, iid };

	return hmap_find(&s->map, &k);
}

long dump_stacks_names(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names)
{
	const struct val *st = find(s, seq, T_STACK, iid), *f, *n;
	size_t i;

	if (!st)
		return -1;
	if (grow_array((void **)&s->names, &s->cap, st->n ? st->n : 1,
		       sizeof(*s->names), 16))
		return -1;
	for (i = 0; i < st->n; i++) {
		f = find(s, seq, T_FRAME, st->ids[st->n - 1 - i]);
		if (!f)
			return -1;
		/* No name, or an empty one: the frame's rel_pc. */
		n = f->n ? find(s, seq, T_NAME, f->n) : NULL;
		s->names[i] = n && n->str[0] ? n->str : f->str;
	}
	*names = s->names;
	return (long)st->n;
}
