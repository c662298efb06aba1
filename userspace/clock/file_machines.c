/* The machine slots of an input (see file_machines.h). */
#include "clock/file_machines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	return grow_array(p, cap, need, size, 4);
}

int file_machines_init(struct file_machines *fm)
{
	memset(fm, 0, sizeof(*fm));
	if (grow((void **)&fm->v, &fm->cap, 1, sizeof(*fm->v)))
		return -ENOMEM;
	memset(&fm->v[0], 0, sizeof(fm->v[0]));
	fm->n = 1;
	return 0;
}

void file_machines_free(struct file_machines *fm)
{
	size_t i;

	for (i = 0; i < fm->n; i++)
		free(fm->v[i].name);
	free(fm->v);
	memset(fm, 0, sizeof(*fm));
}

static bool is_own(const struct file_machines *fm, uint32_t machine_id)
{
	return !machine_id || machine_id == fm->adopted;
}

uint32_t file_machines_find(const struct file_machines *fm,
			    uint32_t machine_id)
{
	size_t i;

	if (is_own(fm, machine_id))
		return 0;
	for (i = 1; i < fm->n; i++)
		if (fm->v[i].raw_id == machine_id)
			return (uint32_t)i;
	return 0;
}

int file_machines_add(struct file_machines *fm, uint32_t machine_id)
{
	uint32_t slot = file_machines_find(fm, machine_id);

	if (slot || is_own(fm, machine_id))
		return (int)slot;
	if (fm->n >= MACHINES_MAX_PER_INPUT)
		return -E2BIG;
	if (grow((void **)&fm->v, &fm->cap, fm->n + 1, sizeof(*fm->v)))
		return -ENOMEM;
	fm->v[fm->n] = (struct file_machine){ .raw_id = machine_id };
	return (int)fm->n++;
}

int file_machines_name(struct file_machines *fm, uint32_t slot,
		       const char *name, size_t len)
{
	struct file_machine *m = &fm->v[slot];

	if (m->name || !len)
		return 0;
	m->name = strndup(name, len);
	return m->name ? 0 : -ENOMEM;
}
