/* Process mappings for user stacks (see maps.h): a hash map of tgid to
 * the process's executable mappings, sorted by start, searched by
 * bisection. */
#include "record/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/vdso.h"
#include "util/grow.h"
#include "util/hashmap.h"

struct proc {
	struct user_map *v; /* sorted by start; paths owned */
	size_t n;
	uint64_t pass; /* the pass the maps were last read in */
	uint32_t reads; /* in that pass */
	bool gone;
};

struct proc_maps {
	struct symbolizer *sym;
	char proc[64];
	struct hmap procs; /* tgid -> struct proc */
	int32_t *gone;     /* tgids noted gone in this pass */
	size_t ngone, gone_cap;
	struct proc *old;  /* maps read again in this pass: the frames of
			    * the stack being resolved may point into them */
	size_t nold, old_cap;
	uint64_t pass;
	struct proc_maps_stats st;
};

struct proc_maps *proc_maps_new(struct symbolizer *sym, const char *proc)
{
	struct proc_maps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->sym = sym;
	snprintf(pm->proc, sizeof(pm->proc), "%s", proc ? proc : "/proc");
	hmap_init(&pm->procs, sizeof(int32_t), sizeof(struct proc),
		  hmap_random_seed());
	pm->pass = 1;
	return pm;
}

static void proc_clear(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free((char *)p->v[i].pm.path);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* Moves p's maps aside until the end of the pass: the frames of the
 * stack being resolved may point into them. False when out of memory
 * (p unchanged). */
static bool proc_retire(struct proc_maps *pm, struct proc *p)
{
	if (grow_array((void **)&pm->old, &pm->old_cap, pm->nold + 1,
		       sizeof(*pm->old), 8))
		return false;
	pm->old[pm->nold++] = *p;
	p->v = NULL;
	p->n = 0;
	return true;
}

/* One line of a maps file into *m when it is an executable mapping. */
/* The process's root as this process sees it (readlink of /proc/PID/root:
 * "/" unless the process is chrooted or its root is out of our reach, then
 * printed as maps prints paths), into root; "" when it cannot be read. */
static void root_of(const struct proc_maps *pm, int32_t tgid, char *root,
		    size_t len)
{
	char link[96];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%" PRId32 "/root", pm->proc, tgid);
	n = readlink(link, root, len - 1);
	root[n > 0 ? n : 0] = '\0';
}

/* The path of a maps line inside the process's root: maps prints a path
 * as seen from our root, so a file out of our reach comes with the
 * process root's own printed path in front (a chroot in another mount
 * namespace): that part goes. */
static const char *inside_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n > 1 && !strncmp(path, root, n) && path[n] == '/')
		return path + n;
	return path;
}

static bool parse_line(struct proc_maps *pm, int32_t tgid, const char *root,
		       char *line, struct user_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned int major, minor;
	char perms[8], root_path[4200];
	struct sym_file f;
	int pos = 0;
	char *path, *nl;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
		   perms, &off, &major, &minor, &ino, &pos) < 7 || !pos ||
	    perms[2] != 'x' || end <= start)
		return false;
	path = line + pos;
	nl = strchr(path, '\n');
	if (nl)
		*nl = '\0';
	path = (char *)inside_root(path, root); /* as the process sees it */
	memset(m, 0, sizeof(*m));
	m->pm.start = start;
	m->pm.end = end;
	m->pm.exact_offset = off;
	if (path[0] == '/') {
		/* through the process's root: its mount namespace's file */
		f = (struct sym_file){ path, root_path,
				       (uint64_t)major << 32 | minor, ino };
		if (snprintf(root_path, sizeof(root_path), "%s/%" PRId32 "/root%s",
			     pm->proc, tgid, path) >=
		    (int)sizeof(root_path))
			f.open_path = NULL;
		m->mod = symbolizer_module(pm->sym, &f);
	} else if (!strcmp(path, "[vdso]") && vdso_image_path()) {
		/* this kernel's, the same in every 64-bit process */
		f = (struct sym_file){ path, vdso_image_path(), 0, 0 };
		m->mod = symbolizer_module(pm->sym, &f);
	}
	if (m->mod && m->mod->elf) {
		m->pm.build_id = m->mod->build_id;
		m->pm.build_id_len = m->mod->build_id_len;
		m->pm.load_bias = m->mod->load_bias;
	}
	m->pm.path = strdup(path[0] ? path : "[anon]");
	return m->pm.path != NULL;
}

static int cmp_start(const void *a, const void *b)
{
	const struct user_map *x = a, *y = b;

	return x->pm.start < y->pm.start ? -1 : x->pm.start > y->pm.start;
}

/* Reads the maps of tgid into p (empty); false when they cannot be read. */
static bool read_maps(struct proc_maps *pm, int32_t tgid, struct proc *p)
{
	char path[96], root[4096], *line = NULL;
	size_t len = 0, cap;
	struct user_map m;
	FILE *f;

	cap = 0;
	p->reads = p->pass == pm->pass ? p->reads + 1 : 1;
	p->pass = pm->pass;
	pm->st.reads++;
	root_of(pm, tgid, root, sizeof(root));
	snprintf(path, sizeof(path), "%s/%" PRId32 "/maps", pm->proc, tgid);
	f = fopen(path, "re");
	if (!f) {
		pm->st.failed++;
		return false;
	}
	while (getline(&line, &len, f) > 0) {
		if (!parse_line(pm, tgid, root, line, &m))
			continue;
		if (grow_array((void **)&p->v, &cap, p->n + 1, sizeof(*p->v),
			       16)) {
			free((char *)m.pm.path);
			break;
		}
		p->v[p->n++] = m;
	}
	free(line);
	fclose(f);
	if (!p->n) {
		pm->st.failed++; /* e.g. an exited process's empty maps */
		return false;
	}
	qsort(p->v, p->n, sizeof(*p->v), cmp_start);
	return true;
}

static const struct user_map *search(const struct proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < p->v[mid].pm.start)
			hi = mid;
		else if (pc >= p->v[mid].pm.end)
			lo = mid + 1;
		else
			return &p->v[mid];
	}
	return NULL;
}

const struct user_map *proc_maps_find(struct proc_maps *pm, int32_t tgid,
				      uint64_t pc)
{
	bool added;
	struct proc *p = hmap_insert(&pm->procs, &tgid, &added);
	const struct user_map *m;

	if (!p)
		return NULL;
	if (added) {
		read_maps(pm, tgid, p);
		return search(p, pc);
	}
	m = search(p, pc);
	/* A pc outside the known maps: a library mapped since, or a new
	 * program (an exec whose record this pass has not reached yet: rings
	 * are drained one after the other); twice a pass at most. Not for a
	 * process that is gone: its maps are the ones it had. */
	if (!m && !p->gone && (p->pass != pm->pass || p->reads < 2) &&
	    proc_retire(pm, p) && read_maps(pm, tgid, p))
		m = search(p, pc);
	return m;
}

void proc_maps_note_exec(struct proc_maps *pm, int32_t tgid)
{
	struct proc *p = hmap_find(&pm->procs, &tgid);

	/* a new program: its maps are read again at its next stack (the old
	 * ones stay to the end of the pass, frames may point into them) */
	if (p && !p->gone && proc_retire(pm, p))
		p->pass = UINT64_MAX;
}

void proc_maps_note_gone(struct proc_maps *pm, int32_t tgid)
{
	struct proc *p = hmap_find(&pm->procs, &tgid);

	if (!p || p->gone ||
	    grow_array((void **)&pm->gone, &pm->gone_cap, pm->ngone + 1,
		       sizeof(*pm->gone), 16))
		return;
	p->gone = true;
	pm->gone[pm->ngone++] = tgid;
}

void proc_maps_end_pass(struct proc_maps *pm)
{
	size_t i;

	for (i = 0; i < pm->ngone; i++) {
		struct proc *p = hmap_find(&pm->procs, &pm->gone[i]);

		if (p) {
			proc_clear(p);
			hmap_remove(&pm->procs, &pm->gone[i]);
		}
	}
	pm->ngone = 0;
	for (i = 0; i < pm->nold; i++)
		proc_clear(&pm->old[i]);
	pm->nold = 0;
	pm->pass++;
}

const struct proc_maps_stats *proc_maps_stats(const struct proc_maps *pm)
{
	return &pm->st;
}

void proc_maps_free(struct proc_maps *pm)
{
	const void *k;
	void *v;
	size_t i;

	if (!pm)
		return;
	for (i = 0; hmap_next(&pm->procs, &i, &k, &v);)
		proc_clear(v);
	hmap_free(&pm->procs);
	for (i = 0; i < pm->nold; i++)
		proc_clear(&pm->old[i]);
	free(pm->old);
	free(pm->gone);
	free(pm);
}
