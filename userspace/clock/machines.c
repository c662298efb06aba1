/* The machine table of a run (see machines.h). */
#include "clock/machines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

void machine_table_init(struct machine_table *t)
{
	memset(t, 0, sizeof(*t));
	t->host = UINT32_MAX;
}

void machine_table_free(struct machine_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	machine_table_init(t);
}

static int add(struct machine_table *t, const char *name, uint32_t *idx)
{
	char *copy = NULL;

	if (name && !(copy = strdup(name)))
		return -ENOMEM;
	if (grow_array((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 4)) {
		free(copy);
		return -ENOMEM;
	}
	t->v[t->n] = (struct machine){ .name = copy };
	*idx = (uint32_t)t->n++;
	return 0;
}

uint32_t machine_table_find(const struct machine_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].name && !strcmp(t->v[i].name, name))
			return (uint32_t)i;
	return UINT32_MAX;
}

int machine_table_named(struct machine_table *t, const char *name,
			uint32_t *idx)
{
	*idx = machine_table_find(t, name);
	return *idx == UINT32_MAX ? add(t, name, idx) : 0;
}

int machine_table_anon(struct machine_table *t, uint32_t *idx)
{
	return add(t, NULL, idx);
}

const char *machine_table_label(const struct machine_table *t, uint32_t idx,
			  char *buf, size_t n)
{
	if (idx < t->n && t->v[idx].name)
		return t->v[idx].name;
	if (idx < t->n && !t->v[idx].out_id)
		snprintf(buf, n, "the host");
	else
		snprintf(buf, n, "machine %u",
			 idx < t->n ? t->v[idx].out_id : idx);
	return buf;
}

void machine_table_bind(struct machine_table *t, struct file_machines *fm,
		  uint32_t slot, uint32_t file_id, uint32_t idx)
{
	struct machine *m = &t->v[idx];
	struct file_machine *s = &fm->v[slot];

	s->machine = idx;
	s->tag = 0;
	if (!m->first_file) {
		m->first_file = file_id + 1;
		m->raw_hint = s->raw_id;
	} else if (m->first_file != file_id + 1 && s->has_snapshots) {
		s->tag = file_id + 1;
	}
}

static bool id_taken(const struct machine_table *t, size_t upto, uint32_t id)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (t->v[i].out_id == id)
			return true;
	return false;
}

void machine_table_number(struct machine_table *t, uint32_t host)
{
	uint32_t next = 1;
	size_t i;

	/* UINT32_MAX: not numbered yet; the host is 0 */
	for (i = 0; i < t->n; i++)
		t->v[i].out_id = i == host ? 0 : UINT32_MAX;
	for (i = 0; i < t->n; i++) {
		struct machine *m = &t->v[i];

		if (i != host && m->raw_hint && m->raw_hint != UINT32_MAX &&
		    !id_taken(t, t->n, m->raw_hint))
			m->out_id = m->raw_hint;
	}
	for (i = 0; i < t->n; i++) {
		if (t->v[i].out_id != UINT32_MAX)
			continue;
		while (id_taken(t, t->n, next))
			next++;
		t->v[i].out_id = next++;
	}
}
