/* User-space symbols (see symbolize.h): modules by path (a hash map of
 * path hashes to module indexes), their ELF facts from libelf, their
 * names from one libdwfl session each, and the names found per module for
 * the ModuleSymbols packets. */
#include "record/symbolize.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "encode/packet.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* One looked-up address of a module. */
struct sym_addr {
	uint64_t rel_pc;
	char *name;       /* NULL: none found */
	bool leaf;        /* looked up as the innermost frame */
	bool lines_tried;
	const char *file; /* its source file (libdwfl's), NULL: none */
	int line;
};

struct module {
	struct sym_module m;
	char *open_path;    /* where it was found from here */
	/* the device and inode it was seen with (ino 0: told apart by
	 * path), first the one it was opened under; more than one when the
	 * same file shows several (overlayfs) */
	struct file_id { uint64_t dev, ino; } *ids;
	size_t nids;
	Dwfl *dwfl;         /* opened at the first lookup */
	Dwfl_Module *mod;   /* NULL: no symbols to be had */
	uint64_t bias;      /* dwfl's address of ELF address 0 */
	bool dwfl_tried;
	struct hmap addrs;  /* rel_pc -> index + 1 into a */
	struct sym_addr *a;
	size_t na, cap;
	size_t named;
};

struct symbolizer {
	struct hmap by_path; /* file key (key_of) -> module index + 1 */
	struct module **mods;
	size_t nmods, cap;
	struct symbolizer_stats st;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static uint64_t hash_path(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*p) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	hmap_init(&s->by_path, sizeof(uint64_t), sizeof(uint32_t),
		  hmap_random_seed());
	return s;
}

/* A file's key in by_path: its path's hash, with its device and inode
 * when known. The path counts too: two files can show the same device
 * and inode in /proc/PID/maps (a 9p mount of a host's several
 * filesystems, as kernel-check's guests have, numbers their inodes
 * apart only with multidevs=remap). */
static uint64_t key_of(const struct sym_file *f)
{
	if (!f->ino)
		return hash_path(f->path);
	return (f->ino * 0x9e3779b97f4a7c15ull) ^ (f->dev << 1 | 1) ^
	       hash_path(f->path);
}

static bool same_file(const struct module *md, const struct sym_file *f)
{
	size_t i;

	if (strcmp(md->m.path, f->path))
		return false;
	for (i = 0; i < md->nids; i++)
		if (md->ids[i].ino == f->ino &&
		    (!f->ino || md->ids[i].dev == f->dev))
			return true;
	return false;
}

/* Adds f's device and inode to md's; false when out of memory. */
static bool add_id(struct module *md, const struct sym_file *f)
{
	struct file_id *a = realloc(md->ids, (md->nids + 1) * sizeof(*a));

	if (!a)
		return false;
	md->ids = a;
	md->ids[md->nids++] = (struct file_id){ f->dev, f->ino };
	return true;
}

/* The index of the module already opened of the same path and build id
 * as md, just read: the same file seen with another device and inode
 * (overlayfs shows a program's text on the overlay's device from its mm,
 * the layer's in /proc/PID/maps; 6.8's maps show the overlay's of all
 * mappings, the BPF side the layer's). s->nmods when there is none, or
 * md has no build id to tell. */
static size_t same_content(const struct symbolizer *s,
			   const struct module *md)
{
	size_t i;

	for (i = 0; md->m.build_id_len && i < s->nmods; i++) {
		const struct module *o = s->mods[i];

		if (o->m.build_id_len == md->m.build_id_len &&
		    !memcmp(o->m.build_id, md->m.build_id,
			    md->m.build_id_len) &&
		    !strcmp(o->m.path, md->m.path))
			return i;
	}
	return s->nmods;
}

static void module_free(struct module *md);

/* Opens the file through the process's root, else by its plain path;
 * md->open_path says which worked. */
static int open_file(struct module *md, const struct sym_file *f)
{
	int fd = f->open_path ? open(f->open_path, O_RDONLY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		md->open_path = strdup(f->open_path);
		if (md->open_path)
			return fd;
		close(fd);
		return -1;
	}
	return open(f->path, O_RDONLY | O_CLOEXEC);
}

/* Build id and load bias of the ELF file, when it is one. */
static void read_elf(struct module *md, const struct sym_file *f)
{
	struct sym_module *m = &md->m;
	int fd = open_file(md, f);
	Elf *e;
	const void *id;
	ssize_t n;
	size_t i, nph;

	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &nph)) {
		m->elf = true;
		n = dwelf_elf_gnu_build_id(e, &id);
		if (n > 0 && (size_t)n <= sizeof(m->build_id)) {
			memcpy(m->build_id, id, (size_t)n);
			m->build_id_len = (size_t)n;
		}
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X)) {
				m->load_bias = ph.p_vaddr - ph.p_offset;
				m->text_vaddr = ph.p_vaddr;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
}

struct sym_module *symbolizer_find(struct symbolizer *s, uint64_t dev,
				   uint64_t ino, const char *name)
{
	size_t i, n = strlen(name);
	const struct module *other = NULL;

	for (i = 0; ino && n && i < s->nmods; i++) {
		const struct module *md = s->mods[i];
		const char *base = strrchr(md->m.path, '/');
		size_t j;

		base = base ? base + 1 : md->m.path;
		if (strncmp(base, name, n))
			continue;
		for (j = 0; j < md->nids; j++) {
			if (md->ids[j].ino != ino)
				continue;
			if (md->ids[j].dev == dev)
				return (struct sym_module *)&md->m;
			/* the same inode and name on another device:
			 * overlayfs shows the process's program (mm's
			 * exe_file) on the overlay's device, its mappings
			 * on the layer's */
			other = md;
		}
	}
	return (struct sym_module *)(other ? &other->m : NULL);
}

struct sym_module *symbolizer_module(struct symbolizer *s,
				     const struct sym_file *f)
{
	uint64_t h = key_of(f);
	uint32_t *slot;
	struct module *md;
	size_t idx;
	bool added;

	slot = hmap_find(&s->by_path, &h);
	if (slot) {
		md = s->mods[*slot - 1];
		/* A key shared by two files: the second goes unresolved. */
		return same_file(md, f) ? &md->m : NULL;
	}
	if (s->nmods >= SYM_MAX_MODULES ||
	    grow_array((void **)&s->mods, &s->cap, s->nmods + 1,
		       sizeof(*s->mods), 64))
		return NULL;
	md = calloc(1, sizeof(*md));
	if (!md || !(md->m.path = strdup(f->path))) {
		free(md);
		return NULL;
	}
	hmap_init(&md->addrs, sizeof(uint64_t), sizeof(uint32_t),
		  hmap_random_seed());
	read_elf(md, f);
	idx = same_content(s, md);
	if (idx < s->nmods) {
		/* one module, so one ModuleSymbols, under both ids */
		module_free(md);
		md = s->mods[idx];
	} else {
		s->mods[s->nmods++] = md;
		s->st.modules++;
		s->st.not_elf += !md->m.elf;
	}
	if (!add_id(md, f))
		return NULL; /* asked again, looked for again */
	slot = hmap_insert(&s->by_path, &h, &added);
	if (slot)
		*slot = (uint32_t)idx + 1;
	return &md->m;
}

/* Whether md's libdwfl module has the build id read from its file when
 * it was found (both none counts as the same). */
static bool same_build_id(struct module *md)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(md->mod, &bits, &vaddr);

	if (n <= 0)
		return !md->m.build_id_len;
	return (size_t)n == md->m.build_id_len &&
	       !memcmp(bits, md->m.build_id, (size_t)n);
}

/* The libdwfl session of a module, opened once. */
static Dwfl_Module *dwfl_of(struct module *md)
{
	GElf_Addr bias = 0;

	if (md->dwfl_tried)
		return md->mod;
	md->dwfl_tried = true;
	if (!md->m.elf)
		return NULL;
	md->dwfl = dwfl_begin(&offline_callbacks);
	if (!md->dwfl)
		return NULL;
	/* through the root of the process it was found in, which may be
	 * gone by now (the session opens at the first look-up): then by
	 * its plain path */
	md->mod = md->open_path ? dwfl_report_offline(md->dwfl, md->m.path,
						      md->open_path, -1)
				: NULL;
	if (!md->mod) {
		md->mod = dwfl_report_offline(md->dwfl, md->m.path, md->m.path,
					      -1);
		/* the same file only if it has the same build id (the same
		 * path in our root may be another file) */
		if (md->mod && !same_build_id(md))
			md->mod = NULL;
	}
	dwfl_report_end(md->dwfl, NULL, NULL);
	if (md->mod && !dwfl_module_getelf(md->mod, &bias))
		md->mod = NULL;
	md->bias = bias;
	return md->mod;
}

/* libdwfl's address of rel_pc: a return address (not the leaf) is
 * looked up one byte back, in its call. */
static uint64_t dwfl_addr(const struct module *md, uint64_t rel_pc, bool leaf)
{
	return rel_pc + md->bias - (leaf || !rel_pc ? 0 : 1);
}

static const char *lookup(struct module *md, uint64_t rel_pc, bool leaf)
{
	Dwfl_Module *mod = dwfl_of(md);

	return mod ? dwfl_module_addrname(mod, dwfl_addr(md, rel_pc, leaf))
		   : NULL;
}

/* The line of addr through the compile units themselves, for a module
 * without .debug_aranges (clang emits none), where libdwfl's lookup
 * finds no unit. */
static void line_by_units(Dwfl_Module *mod, uint64_t addr,
			  struct sym_addr *a)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die die;
	Dwarf_Line *l;

	while (dw && dwarf_get_units(dw, cu, &cu, NULL, NULL, &die, NULL) == 0)
		if (dwarf_haspc(&die, addr - bias) == 1) {
			l = dwarf_getsrc_die(&die, addr - bias);
			a->file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
			if (!l || dwarf_lineno(l, &a->line))
				a->file = NULL;
			return;
		}
}

/* The source file and line of a named address, when the module has line
 * tables (built with -g, or its debug file installed). Loading them can
 * take a while for a large program: done once, when the ModuleSymbols
 * are written at the end, never while the rings are drained. */
static void lookup_line(struct module *md, struct sym_addr *a)
{
	uint64_t addr = dwfl_addr(md, a->rel_pc, a->leaf);
	Dwfl_Line *l;

	if (a->lines_tried)
		return;
	a->lines_tried = true;
	if (!md->mod)
		return;
	l = dwfl_module_getsrc(md->mod, addr);
	a->file = l ? dwfl_lineinfo(l, NULL, &a->line, NULL, NULL, NULL)
		    : NULL;
	if (!l)
		line_by_units(md->mod, addr, a);
	if (a->line <= 0)
		a->file = NULL;
}

Dwarf_Frame *symbolizer_cfi_frame(struct symbolizer *s, struct sym_module *m,
				  uint64_t rel_pc, bool leaf)
{
	struct module *md = (struct module *)m; /* m is its first member */
	Dwfl_Module *mod = dwfl_of(md);
	Dwarf_Frame *f;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	(void)s;
	if (!mod)
		return NULL;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, dwfl_addr(md, rel_pc, leaf) - bias,
					&f))
		return f;
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, dwfl_addr(md, rel_pc, leaf) - bias,
					&f))
		return f;
	return NULL;
}

const char *symbolizer_name(struct symbolizer *s, struct sym_module *m,
			    uint64_t rel_pc, bool leaf)
{
	struct module *md = (struct module *)m; /* m is its first member */
	const char *name;
	uint32_t *slot;
	bool added;

	slot = hmap_find(&md->addrs, &rel_pc);
	if (slot)
		return md->a[*slot - 1].name;
	if (s->st.addrs >= SYM_MAX_ADDRS ||
	    grow_array((void **)&md->a, &md->cap, md->na + 1, sizeof(*md->a),
		       64) ||
	    !(slot = hmap_insert(&md->addrs, &rel_pc, &added))) {
		s->st.over_limit++;
		return NULL;
	}
	memset(&md->a[md->na], 0, sizeof(md->a[md->na]));
	name = lookup(md, rel_pc, leaf);
	md->a[md->na].rel_pc = rel_pc;
	md->a[md->na].leaf = leaf;
	/* without a symbol version (clock_nanosleep@GLIBC_2.2.5), as
	 * Perfetto's own symbolizer names functions */
	md->a[md->na].name = !name ? NULL
			     : strcspn(name, "@") ? strndup(name, strcspn(name, "@"))
						  : strdup(name);
	*slot = (uint32_t)++md->na;
	s->st.addrs++;
	if (md->a[md->na - 1].name) {
		s->st.named++;
		md->named++;
	}
	return md->a[md->na - 1].name;
}

/* ---- ModuleSymbols ---- */

typedef Perfetto__Protos__AddressSymbols AddrSyms;
typedef Perfetto__Protos__Line Line;

static int emit_module(struct module *md, struct packet_sink *sink,
		       uint32_t seq, uint64_t ts, bool lines)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ModuleSymbols ms =
		PERFETTO__PROTOS__MODULE_SYMBOLS__INIT;
	AddrSyms *as = calloc(md->named, sizeof(*as));
	AddrSyms **pas = calloc(md->named, sizeof(*pas));
	Line *ln = calloc(md->named, sizeof(*ln));
	Line **pln = calloc(md->named, sizeof(*pln));
	size_t i, k = 0;
	int e = -ENOMEM;

	if (!as || !pas || !ln || !pln)
		goto out;
	for (i = 0; i < md->na; i++) {
		if (!md->a[i].name)
			continue;
		perfetto__protos__line__init(&ln[k]);
		ln[k].function_name = md->a[i].name;
		if (lines)
			lookup_line(md, &md->a[i]);
		if (lines && md->a[i].file) {
			ln[k].source_file_name = (char *)md->a[i].file;
			ln[k].has_line_number = 1;
			ln[k].line_number = (uint32_t)md->a[i].line;
		}
		pln[k] = &ln[k];
		perfetto__protos__address_symbols__init(&as[k]);
		as[k].has_address = 1;
		as[k].address = md->a[i].rel_pc;
		as[k].n_lines = 1;
		as[k].lines = &pln[k];
		pas[k] = &as[k];
		k++;
	}
	ms.path = md->m.path;
	/* raw bytes, as the mapping's build_ids entry (none: no field) */
	ms.has_build_id = md->m.build_id_len > 0;
	ms.build_id.len = md->m.build_id_len;
	ms.build_id.data = md->m.build_id;
	ms.n_address_symbols = k;
	ms.address_symbols = pas;
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_MODULE_SYMBOLS;
	p.module_symbols = &ms;
	e = packet_emit(sink, seq, &p);
out:
	free(as);
	free(pas);
	free(ln);
	free(pln);
	return e;
}

int symbolizer_emit(struct symbolizer *s, struct packet_sink *sink,
		    uint32_t seq, uint64_t ts, bool lines)
{
	size_t i;
	int e = 0;

	for (i = 0; i < s->nmods && !e; i++)
		if (s->mods[i]->named)
			e = emit_module(s->mods[i], sink, seq, ts, lines);
	return e;
}

const struct symbolizer_stats *symbolizer_stats(const struct symbolizer *s)
{
	return &s->st;
}

static void module_free(struct module *md)
{
	size_t j;

	for (j = 0; j < md->na; j++)
		free(md->a[j].name);
	free(md->a);
	hmap_free(&md->addrs);
	if (md->dwfl)
		dwfl_end(md->dwfl);
	free(md->m.path);
	free(md->open_path);
	free(md->ids);
	free(md);
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	hmap_free(&s->by_path);
	free(s);
}
