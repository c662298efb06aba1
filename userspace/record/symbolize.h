/* User-space symbols of the off-CPU call stacks (--callstacks): each
 * executable file seen in a stack is a module, opened once: its GNU build
 * id and load bias read with libelf, its function names with elfutils'
 * libdwfl (the file's .symtab or .dynsym, or its separate debug info),
 * each distinct rel_pc looked up once and kept. At the end the names
 * found are written as Perfetto ModuleSymbols packets (path, build id,
 * rel_pc -> function), so that a trace moved to another machine keeps
 * them. Costs are bounded: at most SYM_MAX_MODULES modules and
 * SYM_MAX_ADDRS looked-up addresses; past either, frames stay unnamed
 * (counted). Not thread-safe. */
#ifndef BTR_RECORD_SYMBOLIZE_H
#define BTR_RECORD_SYMBOLIZE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sink.h"

#define SYM_MAX_MODULES 1024
#define SYM_MAX_ADDRS (1u << 20)

/* One executable file: what its mappings need. */
struct sym_module {
	char *path;
	bool elf;            /* an ELF file that could be read */
	uint8_t build_id[64];
	size_t build_id_len; /* 0: none */
	uint64_t load_bias;  /* p_vaddr - p_offset of the executable PT_LOAD */
	uint64_t text_vaddr; /* p_vaddr of the executable PT_LOAD */
};

struct symbolizer_stats {
	uint64_t modules;    /* files opened */
	uint64_t not_elf;    /* of which not readable as ELF */
	uint64_t addrs;      /* distinct (module, rel_pc) looked up */
	uint64_t named;      /* of which with a function name */
	uint64_t over_limit; /* lookups refused past the limits */
};

struct symbolizer;

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/* Where a mapped file is: its path as the process sees it, the path to
 * open it by from here (through the process's root, /proc/PID/root/...,
 * so that files of other mount namespaces, e.g. containers, are found;
 * the plain path is tried when that fails), and its device and inode from
 * the maps line (inode 0: unknown). */
struct sym_file {
	const char *path;
	const char *open_path;
	uint64_t dev, ino;
};

/* The module of file f, opened the first time; NULL when out of memory or
 * past SYM_MAX_MODULES. Modules are told apart by path, and by device
 * and inode when known (the same path in two containers can be two
 * files; two files on a 9p mount can show the same device and inode),
 * but a file of the same path and build id as a module's is that module
 * whatever its device and inode (overlayfs shows a file under two).
 * A file that cannot be read is a module too (elf false): asked again, it
 * is not reopened. */
struct sym_module *symbolizer_module(struct symbolizer *s,
				     const struct sym_file *f);

/* The module already opened of the file with inode ino whose name starts
 * with `name` (a file name without its directory, as the kernel keeps
 * it, maybe cut), on device dev (as sym_file's) or else on another one
 * (overlayfs); NULL when there is none. A scan of the modules. */
struct sym_module *symbolizer_find(struct symbolizer *s, uint64_t dev,
				   uint64_t ino, const char *name);

/* The function at rel_pc (an address of the ELF's own, as Frame.rel_pc)
 * in module m, NULL when none is known. `leaf`: rel_pc is where the task
 * is, else a return address (the call is the byte before). The string
 * lives as long as s. */
const char *symbolizer_name(struct symbolizer *s, struct sym_module *m,
			    uint64_t rel_pc, bool leaf);

/* The CFI frame (.eh_frame, else .debug_frame) of rel_pc in module m,
 * `leaf` as symbolizer_name()'s; NULL when it has none. The caller frees
 * it. */
Dwarf_Frame *symbolizer_cfi_frame(struct symbolizer *s, struct sym_module *m,
				  uint64_t rel_pc, bool leaf);

/* One ModuleSymbols packet per module with names, on sequence seq at
 * timestamp ts (after every sample: trace_processor symbolizes the
 * frames it already has); with `lines`, each name with its source file
 * and line where the module has line tables (loaded then: slow for a
 * large program, so for the final packets only). Returns 0 or the sink's
 * negative errno. */
int symbolizer_emit(struct symbolizer *s, struct packet_sink *sink,
		    uint32_t seq, uint64_t ts, bool lines);

const struct symbolizer_stats *symbolizer_stats(const struct symbolizer *s);

#endif
