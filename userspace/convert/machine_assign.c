/* Machines of the inputs and the manifest's names for them (see
 * machine_assign.h). */
#include "convert/machine_assign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* True when the manifest path `path` names input in. */
static bool names(const struct input *in, const char *path)
{
	if (in->file.member)
		return !strcmp(in->file.member, path);
	if (in->file.own_fd >= 0 || in->rd.stdin_fd >= 0)
		return false;
	return !strcmp(in->file.path, path) || !strcmp(base_name(in->file.path), path);
}

int manifest_bind(struct manifest *m, struct input **in, size_t n, char *err,
		  size_t errlen)
{
	size_t i, k;

	for (i = 0; i < m->n_files; i++) {
		struct manifest_file *f = &m->files[i];

		f->input = -1;
		for (k = 0; k < n; k++) {
			if (!names(in[k], f->path))
				continue;
			if (f->input >= 0) {
				snprintf(err, errlen, "perfetto_manifest: "
					 "files[%zu].path: '%s' names several "
					 "inputs (%s and %s)", i, f->path,
					 in[f->input]->file.name, in[k]->file.name);
				return -1;
			}
			f->input = (long)k;
		}
		if (f->input < 0) {
			snprintf(err, errlen, "perfetto_manifest: files[%zu]."
				 "path: no input is named '%s' (a trace or perf "
				 "file given, or an archive member)", i,
				 f->path);
			return -1;
		}
		if (in[f->input]->file.manifest_entry >= 0) {
			snprintf(err, errlen, "perfetto_manifest: files[%zu]."
				 "path: '%s' is the input of files[%ld] too",
				 i, f->path, in[f->input]->file.manifest_entry);
			return -1;
		}
		in[f->input]->file.manifest_entry = (long)i;
	}
	return 0;
}

static const struct manifest_file *entry_of(const struct input *in,
					    const struct manifest *m)
{
	return m && in->file.manifest_entry >= 0 ? &m->files[in->file.manifest_entry] :
					      NULL;
}

/* The manifest's name for slot s of the input: NULL when it gives none;
 * -1 (message in err) for an id its `machines` does not declare. */
static int manifest_name(const struct input *in, const struct manifest *m,
			 uint32_t s, const char **name, char *err,
			 size_t errlen)
{
	const struct manifest_file *f = entry_of(in, m);
	uint32_t raw = in->scan.fm.v[s].raw_id;

	*name = NULL;
	if (!f)
		return 0;
	if (f->machine) {
		if (in->scan.fm.n > 1) {
			snprintf(err, errlen, "perfetto_manifest: files[%ld]."
				 "machine: '%s' holds data of %zu machines; "
				 "name them with machines", in->file.manifest_entry,
				 f->path, in->scan.fm.n);
			return -1;
		}
		*name = f->machine;
		return 0;
	}
	if (!f->has_machines)
		return 0;
	*name = manifest_machine_name(f, raw);
	if (!*name && s == 0 && raw)
		*name = manifest_machine_name(f, 0);
	if (!*name && raw) {
		snprintf(err, errlen, "perfetto_manifest: files[%ld].machines: "
			 "undeclared machine id %" PRIu32 " in '%s'",
			 in->file.manifest_entry, raw, f->path);
		return -1;
	}
	return 0;
}

/* The machine of slot s of input i. */
static int slot_machine(struct input *in, const struct manifest *m,
			struct machine_table *t, uint32_t s, uint32_t *idx,
			char *err, size_t errlen)
{
	const char *name;

	if (manifest_name(in, m, s, &name, err, errlen))
		return -1;
	if (!name)
		name = in->scan.fm.v[s].name;
	if (name)
		return machine_table_named(t, name, idx);
	if (s)
		return machine_table_anon(t, idx);
	if (t->host == UINT32_MAX && machine_table_anon(t, &t->host))
		return -ENOMEM;
	*idx = t->host;
	return 0;
}

/* Slots other than 0 in ascending machine id (numbering stays stable). */
static int cmp_raw(const void *a, const void *b, void *ctx)
{
	const struct file_machines *fm = ctx;
	uint32_t x = fm->v[*(const uint32_t *)a].raw_id;
	uint32_t y = fm->v[*(const uint32_t *)b].raw_id;

	return (x > y) - (x < y);
}

static int assign_input(struct input *in, const struct manifest *m,
			struct machine_table *t, bool first, char *err,
			size_t errlen)
{
	uint32_t *order = malloc(in->scan.fm.n * sizeof(*order)), idx, k;
	int rc = 0;

	if (!order)
		return -ENOMEM;
	for (k = 0; k < in->scan.fm.n; k++)
		order[k] = k;
	qsort_r(order + 1, in->scan.fm.n - 1, sizeof(*order), cmp_raw, &in->scan.fm);
	for (k = 0; k < in->scan.fm.n && !rc; k++) {
		rc = slot_machine(in, m, t, order[k], &idx, err, errlen);
		if (rc)
			break;
		if (first && order[k] == 0)
			t->host = idx; /* the unnamed inputs' machine */
		machine_table_bind(t, &in->scan.fm, order[k], in->file.scope.file, idx);
	}
	free(order);
	return rc;
}

int machine_assign(struct input **in, size_t n, const struct manifest *m,
		   struct machine_table *t, char *err, size_t errlen)
{
	uint32_t idx;
	size_t i, j;
	int rc;

	for (i = 0; m && i < m->n_files; i++) {
		const struct manifest_file *f = &m->files[i];

		if (f->machine && machine_table_named(t, f->machine, &idx))
			return -ENOMEM;
		for (j = 0; j < f->n_machines; j++)
			if (machine_table_named(t, f->machines[j].name, &idx))
				return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		rc = assign_input(in[i], m, t, i == 0, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

long machine_slot_named(const struct input *in, const struct machine_table *t,
			const char *name, const char *what, char *err,
			size_t errlen)
{
	size_t s;

	if (!name && in->scan.fm.n > 1) {
		snprintf(err, errlen, "perfetto_manifest: %s: '%s' is a "
			 "multi-machine trace; also name the machine", what,
			 in->file.name);
		return -1;
	}
	if (!name)
		return 0;
	for (s = 0; s < in->scan.fm.n; s++) {
		const char *mn = t->v[in->scan.fm.v[s].machine].name;

		if (mn && !strcmp(mn, name))
			return (long)s;
	}
	snprintf(err, errlen, "perfetto_manifest: %s: '%s' is not a machine "
		 "of '%s'", what, name, in->file.name);
	return -1;
}
