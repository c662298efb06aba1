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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "record/vdso.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* A mapping the BPF side saw while the process lived (BTR_REC_VMAS),
 * its module found from its file's identity when it can be. */
struct rec_map {
	struct user_map m;
	uint64_t dev, ino;       /* as sym_file's; ino 0: no file */
	char name[BTR_VMA_NAME_LEN];
	uint64_t tried;          /* the pass its module was last looked for */
	uint64_t ts;             /* when the BPF side saw it */
	bool text;               /* the program's text (BTR_VMA_TEXT) */
	int32_t tgid;
};

struct proc {
	struct user_map *v; /* sorted by start; paths owned */
	size_t n;
	uint64_t pass; /* the pass the maps were last read in */
	uint32_t reads; /* in that pass */
	bool gone;
	struct rec_map *rec; /* the BPF side's, for when maps cannot be read */
	size_t nrec, rec_cap;
	char *exe;           /* the program it exec'd, NULL: not seen */
	uint64_t exe_ts;     /* when exe was known to be its program */
	int32_t parent;      /* the thread that forked it, 0: not seen */
	bool missed;         /* a pc fell outside the maps last read */
	uint64_t read_ts;    /* when they were read (BOOTTIME) */
};

/* A process whose exit was read in pass `pass`. */
struct gone {
	int32_t tgid;
	uint64_t pass;
};

struct proc_maps {
	struct symbolizer *sym;
	char proc[64];
	struct hmap procs; /* tgid -> struct proc */
	struct gone *gone; /* processes noted gone, oldest first */
	size_t ngone, gone_cap;
	uint64_t keep;     /* passes a gone process is kept after its own */
	struct proc *old;  /* maps read again in this pass: the frames of
			    * the stack being resolved may point into them */
	size_t nold, old_cap;
	uint64_t pass;
	struct proc_maps_stats st;
	void (*on_read)(void *ctx, int32_t tgid, uint64_t ts);
	void *on_read_ctx;
	int32_t *read;     /* tgids whose maps were read in this pass */
	size_t nread, read_cap;
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
	pm->keep = 1;
	return pm;
}

void proc_maps_keep_gone(struct proc_maps *pm, uint32_t passes)
{
	pm->keep = passes;
}

static void proc_clear(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free((char *)p->v[i].pm.path);
	free(p->v);
	p->v = NULL;
	p->n = 0;
	for (i = 0; i < p->nrec; i++)
		free((char *)p->rec[i].m.pm.path);
	free(p->rec);
	p->rec = NULL;
	p->nrec = p->rec_cap = 0;
	free(p->exe);
	p->exe = NULL;
}

/* Moves p's maps aside until the end of the pass: the frames of the
 * stack being resolved may point into them. False when out of memory
 * (p unchanged). */
static bool proc_retire(struct proc_maps *pm, struct proc *p)
{
	if (grow_array((void **)&pm->old, &pm->old_cap, pm->nold + 1,
		       sizeof(*pm->old), 8))
		return false;
	/* the maps read go aside, what the BPF side saw stays */
	pm->old[pm->nold] = (struct proc){ .v = p->v, .n = p->n };
	pm->nold++;
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
	struct timespec now;
	struct user_map m;
	FILE *f;

	cap = 0;
	clock_gettime(CLOCK_BOOTTIME, &now);
	p->read_ts = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
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
	p->missed = false;
	if (pm->on_read && !grow_array((void **)&pm->read, &pm->read_cap,
				       pm->nread + 1, sizeof(*pm->read), 16))
		pm->read[pm->nread++] = tgid;
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

/* Directories a file named in a BTR_REC_VMAS record is looked for in,
 * when no process whose maps were read has it open. */
static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
	"/lib64", "/usr/lib", "/lib", "/usr/local/lib", "/usr/bin", "/bin",
	"/usr/sbin", "/sbin", "/usr/local/bin", "/usr/libexec",
};

/* Whether path is the file r names: its inode, and its device or its
 * name (a file on overlayfs shows the overlay's device to stat and the
 * layer's to the kernel's mapping). */
static bool is_file(const struct rec_map *r, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	struct stat st;

	if (!path || stat(path, &st) || (uint64_t)st.st_ino != r->ino)
		return false;
	base = base ? base + 1 : path;
	return ((uint64_t)major(st.st_dev) << 32 | minor(st.st_dev)) == r->dev ||
	       !strncmp(base, r->name, strlen(r->name));
}

/* The module of r through the process, while it lives: its program
 * (/proc/PID/exe) or the file of the mapping (/proc/PID/map_files/),
 * named as the link says. */
static struct sym_module *live_module(struct proc_maps *pm,
				      const struct rec_map *r)
{
	char live[128], path[4096], *del;
	ssize_t n;

	if (r->text)
		snprintf(live, sizeof(live), "%s/%" PRId32 "/exe", pm->proc,
			 r->tgid);
	else
		snprintf(live, sizeof(live),
			 "%s/%" PRId32 "/map_files/%" PRIx64 "-%" PRIx64,
			 pm->proc, r->tgid, r->m.pm.start, r->m.pm.end);
	n = readlink(live, path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	del = strstr(path, " (deleted)");
	if (del && !del[10])
		*del = '\0';
	return symbolizer_module(pm->sym, &(struct sym_file){ path, live,
							      r->dev, r->ino });
}

/* The module of r: a file a process whose maps were read has open, the
 * process's own file while it lives, the program the process exec'd, or
 * one of that name in lib_dirs. */
static struct sym_module *rec_module(struct proc_maps *pm,
				     const struct proc *p,
				     const struct rec_map *r)
{
	struct sym_module *mod = symbolizer_find(pm->sym, r->dev, r->ino,
						 r->name);
	char path[4096];
	size_t i;

	if (mod || !r->ino || !r->name[0])
		return mod;
	/* while the process lives, its own file through /proc (whatever
	 * its mount namespace) */
	mod = live_module(pm, r);
	if (mod)
		return mod;
	if (is_file(r, p->exe)) {
		snprintf(path, sizeof(path), "%s", p->exe);
	} else {
		for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", lib_dirs[i],
				 r->name);
			if (is_file(r, path))
				break;
		}
		if (i == sizeof(lib_dirs) / sizeof(lib_dirs[0]))
			return NULL;
	}
	return symbolizer_module(pm->sym, &(struct sym_file){ path, NULL,
							      r->dev, r->ino });
}

/* Gives r its module (once a pass while it has none) and what the
 * Mapping takes from it. */
static void rec_resolve(struct proc_maps *pm, const struct proc *p,
			struct rec_map *r)
{
	struct sym_module *mod;
	char *path;

	if (r->m.mod || r->tried == pm->pass)
		return;
	r->tried = pm->pass;
	mod = rec_module(pm, p, r);
	if (!mod || !(path = strdup(mod->path)))
		return;
	free((char *)r->m.pm.path);
	r->m.pm.path = path;
	r->m.mod = mod;
	if (mod->elf) {
		r->m.pm.build_id = mod->build_id;
		r->m.pm.build_id_len = mod->build_id_len;
		r->m.pm.load_bias = mod->load_bias;
		/* the program's text starts at its segment's p_vaddr: the
		 * offset that gives rel_pc = pc - start + p_vaddr */
		if (r->text)
			r->m.pm.exact_offset = mod->text_vaddr - mod->load_bias;
	}
}

/* The mapping the BPF side saw holding pc, NULL when none. */
static const struct user_map *search_rec(struct proc_maps *pm,
					 struct proc *p, uint64_t pc)
{
	size_t i;

	for (i = 0; i < p->nrec; i++) {
		struct rec_map *r = &p->rec[i];

		if (pc >= r->m.pm.start && pc < r->m.pm.end) {
			rec_resolve(pm, p, r);
			pm->st.recorded++;
			return &r->m;
		}
	}
	return NULL;
}

void proc_maps_note_vmas(struct proc_maps *pm, int32_t tgid, uint64_t ts,
			 const struct btr_vma *v, uint32_t n)
{
	bool added;
	struct proc *p = hmap_insert(&pm->procs, &tgid, &added);
	long page = sysconf(_SC_PAGESIZE);
	uint32_t i;
	size_t k;

	if (!p)
		return;
	for (i = 0; i < n && i < BTR_VMAS_MAX; i++) {
		struct rec_map *r;

		for (k = 0; k < p->nrec; k++)
			if (p->rec[k].m.pm.start == v[i].start)
				break;
		if (k < p->nrec || v[i].end <= v[i].start ||
		    grow_array((void **)&p->rec, &p->rec_cap, p->nrec + 1,
			       sizeof(*p->rec), 4))
			continue;
		r = &p->rec[p->nrec];
		memset(r, 0, sizeof(*r));
		r->ts = ts;
		r->tgid = tgid;
		r->m.pm.start = v[i].start;
		r->m.pm.end = v[i].end;
		r->text = v[i].pgoff == BTR_VMA_TEXT;
		r->m.pm.exact_offset = r->text ? 0 : v[i].pgoff * (uint64_t)page;
		r->ino = v[i].ino;
		/* the kernel's dev_t: major << 20 | minor */
		r->dev = (uint64_t)(v[i].dev >> 20) << 32 | (v[i].dev & 0xfffff);
		memcpy(r->name, v[i].name, sizeof(r->name));
		r->name[sizeof(r->name) - 1] = '\0';
		r->m.pm.path = strdup(r->name[0] ? r->name : "[anon]");
		if (!r->m.pm.path)
			continue;
		p->nrec++;
		rec_resolve(pm, p, r);
	}
}

void proc_maps_note_fork(struct proc_maps *pm, int32_t tgid, int32_t parent)
{
	bool added;
	struct proc *p = tgid != parent ? hmap_insert(&pm->procs, &tgid, &added)
					: NULL;

	if (p)
		p->parent = parent;
}

/* p's program is filename ("": not known) since ts. */
static void set_exe(struct proc *p, uint64_t ts, const char *filename)
{
	free(p->exe);
	p->exe = filename[0] ? strdup(filename) : NULL;
	p->exe_ts = ts;
}

void proc_maps_note_exec_file(struct proc_maps *pm, int32_t tgid,
			      uint64_t ts, const char *filename)
{
	bool added;
	struct proc *p = hmap_insert(&pm->procs, &tgid, &added);
	size_t i, k;

	if (!p)
		return;
	/* (a mapping record of a later exec, read first, named it) */
	if (ts >= p->exe_ts)
		set_exe(p, ts, filename);
	/* the mappings the BPF side saw before are the old program's (rings
	 * are drained one after the other: the new one's may be here
	 * already); the others may find their file by the new name */
	for (i = k = 0; i < p->nrec; i++) {
		if (p->rec[i].ts < ts) {
			free((char *)p->rec[i].m.pm.path);
			continue;
		}
		p->rec[i].tried = 0;
		p->rec[k++] = p->rec[i];
	}
	p->nrec = k;
}

void proc_maps_note_exe(struct proc_maps *pm, int32_t tgid, uint64_t ts,
			const char *filename)
{
	bool added;
	struct proc *p = hmap_insert(&pm->procs, &tgid, &added);

	/* A record taken after the exec the process was last known by, of
	 * another program: an exec whose own record is in a ring this pass
	 * reads later (the program it had must not name the new one's
	 * text, whose frames would be given the old file's offsets). */
	if (p && filename[0] && ts >= p->exe_ts &&
	    (!p->exe || strcmp(p->exe, filename)))
		set_exe(p, ts, filename);
}

void proc_maps_set_on_read(struct proc_maps *pm,
			   void (*fn)(void *ctx, int32_t tgid, uint64_t ts),
			   void *ctx)
{
	pm->on_read = fn;
	pm->on_read_ctx = ctx;
}

static const struct user_map *find(struct proc_maps *pm, int32_t tgid,
				   uint64_t pc, int depth);

/* The last resorts for a pc of p: the mappings the BPF side saw, else
 * (a process that forked and did not exec has the mappings its parent
 * had) its parent's, else a mapping the BPF side saw whose file is not
 * known. */
static const struct user_map *find_elsewhere(struct proc_maps *pm,
					     struct proc *p, uint64_t pc,
					     int depth)
{
	const struct user_map *m = search_rec(pm, p, pc), *pm_;

	if ((m && m->mod) || p->exe || !p->parent || depth >= 4)
		return m;
	pm_ = find(pm, p->parent, pc, depth + 1);
	return pm_ && pm_->mod ? pm_ : m;
}

const struct user_map *proc_maps_find(struct proc_maps *pm, int32_t tgid,
				      uint64_t pc)
{
	return find(pm, tgid, pc, 0);
}

static const struct user_map *find(struct proc_maps *pm, int32_t tgid,
				   uint64_t pc, int depth)
{
	bool added;
	struct proc *p = hmap_insert(&pm->procs, &tgid, &added);
	const struct user_map *m;

	if (!p)
		return NULL;
	if (added) {
		read_maps(pm, tgid, p);
		m = search(p, pc);
		p->missed |= !m;
		return m ? m : find_elsewhere(pm, p, pc, depth);
	}
	m = search(p, pc);
	p->missed |= !m;
	/* A pc outside the known maps: a library mapped since, or a new
	 * program (an exec whose record this pass has not reached yet: rings
	 * are drained one after the other); twice a pass at most. Not for a
	 * process that is gone: its maps are the ones it had. */
	if (!m && !p->gone && (p->pass != pm->pass || p->reads < 2) &&
	    proc_retire(pm, p)) {
		if (read_maps(pm, tgid, p)) {
			m = search(p, pc);
			p->missed |= !m;
		} else {
			/* gone meanwhile: the maps it had stay its maps */
			pm->nold--;
			p->v = pm->old[pm->nold].v;
			p->n = pm->old[pm->nold].n;
		}
	}
	return m ? m : find_elsewhere(pm, p, pc, depth);
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
	pm->gone[pm->ngone++] = (struct gone){ tgid, pm->pass };
}

void proc_maps_end_pass(struct proc_maps *pm)
{
	size_t i;

	/* the maps read in this pass that held every pc looked up after:
	 * their processes' later samples need no mapping records (a read
	 * in a program's loader, before its libraries, missed some) */
	for (i = 0; i < pm->nread; i++) {
		struct proc *p = hmap_find(&pm->procs, &pm->read[i]);

		if (p && p->n && !p->missed)
			pm->on_read(pm->on_read_ctx, pm->read[i], p->read_ts);
	}
	pm->nread = 0;

	/* The processes gone `keep` passes ago: records of theirs in rings
	 * read before their exit's, in the pass that read it, may have been
	 * committed after those rings were read, and come in the next pass
	 * (a pass that opens new files can be long); a process is forgotten
	 * once every reader has read such records. */
	for (i = 0; i < pm->ngone && pm->pass - pm->gone[i].pass >= pm->keep;
	     i++) {
		struct proc *p = hmap_find(&pm->procs, &pm->gone[i].tgid);

		if (p && p->gone) {
			proc_clear(p);
			hmap_remove(&pm->procs, &pm->gone[i].tgid);
		}
	}
	if (i) {
		memmove(pm->gone, pm->gone + i,
			(pm->ngone - i) * sizeof(*pm->gone));
		pm->ngone -= i;
	}
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
	free(pm->read);
	for (i = 0; i < pm->nold; i++)
		proc_clear(&pm->old[i]);
	free(pm->old);
	free(pm->gone);
	free(pm);
}
