/* Per-sequence interned callstacks (see stacks.h): one hash map keyed by
 * (sequence, table, iid), whose values own their copies. */
#include "dump/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hashmap.h"

enum table { T_NAME, T_FRAME, T_STACK, T_PATH, T_MAP };

struct key {
	uint32_t seq;
	uint32_t table;
	uint64_t iid;
};

/* T_NAME, T_PATH: a string; T_FRAME: the function name's iid, in str
 * its rel_pc in hex, printed for a frame without a name, and in map its
 * mapping's iid (0: none); T_STACK: n frame iids, root first; T_MAP: in
 * n the iid of its path's first part. */
struct val {
	char *str;
	uint64_t *ids;
	uint64_t n, map;
};

struct dump_stacks {
	struct hmap map;
	char **names;
	size_t cap;
};

/* Copies the strings of list[0..n) into table t of sequence seq. */
static int intern_strings(struct dump_stacks *s, uint32_t seq, uint32_t t,
			  Perfetto__Protos__InternedString *const *list,
			  size_t n);

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
	if (intern_strings(s, seq, T_NAME, d->function_names,
			   d->n_function_names) ||
	    intern_strings(s, seq, T_PATH, d->mapping_paths,
			   d->n_mapping_paths))
		return -ENOMEM;
	for (i = 0; i < d->n_mappings; i++) {
		const Perfetto__Protos__Mapping *mp = d->mappings[i];

		v = slot(s, seq, T_MAP, mp->iid);
		if (!v)
			return -ENOMEM;
		v->n = mp->n_path_string_ids ? mp->path_string_ids[0] : 0;
	}
	for (i = 0; i < d->n_frames; i++) {
		const Perfetto__Protos__Frame *f = d->frames[i];

		v = slot(s, seq, T_FRAME, f->iid);
		if (!v)
			return -ENOMEM;
		v->n = f->function_name_id;
		v->map = f->has_mapping_id ? f->mapping_id : 0;
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

static int intern_strings(struct dump_stacks *s, uint32_t seq, uint32_t t,
			  Perfetto__Protos__InternedString *const *list,
			  size_t n)
{
	struct val *v;
	size_t i;

	for (i = 0; i < n; i++) {
		const Perfetto__Protos__InternedString *str = list[i];
		bool has = str->has_str && str->str.data; /* "" has no data */

		v = slot(s, seq, t, str->iid);
		if (!v || !(v->str = strndup(has ? (char *)str->str.data : "",
					      has ? str->str.len : 0)))
			return -ENOMEM;
	}
	return 0;
}

static const struct val *find(const struct dump_stacks *s, uint32_t seq,
			      uint32_t table, uint64_t iid)
{
	struct key k = { seq, table, iid };

	return hmap_find(&s->map, &k);
}

/* Whether frame f is in the kernel: its mapping's path is the
 * recorder's "/kernel" or perf's "[kernel.kallsyms]". */
static bool kernel_frame(const struct dump_stacks *s, uint32_t seq,
			 const struct val *f)
{
	const struct val *mp = f->map ? find(s, seq, T_MAP, f->map) : NULL;
	const struct val *path = mp ? find(s, seq, T_PATH, mp->n) : NULL;

	return path && (!strcmp(path->str, "/kernel") ||
			!strncmp(path->str, "[kernel.", 8));
}

long dump_stacks_names(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names)
{
	return dump_stacks_split(s, seq, iid, names, NULL);
}

long dump_stacks_split(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names, size_t *nkernel)
{
	const struct val *st = find(s, seq, T_STACK, iid), *f, *n;
	bool leaf_side = true;
	size_t i;

	if (nkernel)
		*nkernel = 0;
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
		leaf_side = leaf_side && nkernel && kernel_frame(s, seq, f);
		if (leaf_side)
			*nkernel = i + 1;
	}
	*names = s->names;
	return (long)st->n;
}
