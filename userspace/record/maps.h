/* The executable mappings of the processes whose user stacks
 * --callstacks takes, from /proc/PID/maps: read at a process's first
 * stack, kept, read again (once per drain pass) when a pc falls outside
 * them (a library loaded since), and forgotten at the end of the drain
 * pass that saw the process exec or exit (the stacks of that pass were
 * taken before). A process gone before its maps could be read has none:
 * its frames go to the unknown mapping, counted by the caller. Each
 * mapping carries its Perfetto Mapping (perf_samples.h) and module
 * (symbolize.h). Not thread-safe. */
#ifndef BTR_RECORD_MAPS_H
#define BTR_RECORD_MAPS_H

#include <stdint.h>

#include "encode/perf_samples.h"
#include "record.h"
#include "record/symbolize.h"

struct user_map {
	struct perf_mapping pm;
	struct sym_module *mod; /* NULL: not a file (anonymous) or none;
				 * [vdso]: the kernel's image (vdso.h) */
};

struct proc_maps_stats {
	uint64_t reads;    /* /proc/PID/maps files read */
	uint64_t failed;   /* of which could not be read (process gone) */
	uint64_t recorded; /* pcs found in the mappings the BPF side saw */
};

struct proc_maps;

/* Modules come from `sym`; `proc` is the /proc to read (NULL: "/proc"). */
struct proc_maps *proc_maps_new(struct symbolizer *sym, const char *proc);
void proc_maps_free(struct proc_maps *pm);

/* The executable mapping of process tgid holding pc, NULL when none is
 * known. Valid until the next call. */
const struct user_map *proc_maps_find(struct proc_maps *pm, int32_t tgid,
				      uint64_t pc);

/* tgid exec'd: its maps are read again at its next lookup. */
void proc_maps_note_exec(struct proc_maps *pm, int32_t tgid);
/* Process tgid exited: its maps go at the end of a later pass
 * (proc_maps_keep_gone). */
void proc_maps_note_gone(struct proc_maps *pm, int32_t tgid);

/* The end of a drain pass: forgets the processes noted gone `passes`
 * passes before (proc_maps_keep_gone), and lets each process's maps be
 * read again once in the next pass. */
void proc_maps_end_pass(struct proc_maps *pm);

/* A process noted gone is forgotten at the end of the passes-th pass
 * after the one that noted it (default 1: one reader's next pass reads
 * every record committed before its exit was read). */
void proc_maps_keep_gone(struct proc_maps *pm, uint32_t passes);

/* The mappings the BPF side saw of process tgid while it lived (a
 * BTR_REC_VMAS record, at ts): where its pcs are looked up when its maps cannot
 * be read, or do not hold them. Each is given the module of its file
 * (device and inode) when one is open already, is the program the process
 * exec'd, or lies in the usual library and program directories. */
void proc_maps_note_vmas(struct proc_maps *pm, int32_t tgid, uint64_t ts,
			 const struct btr_vma *v, uint32_t n);

/* Process tgid was forked by thread parent: until it execs, its pcs that
 * nothing else places are looked up in the parent's mappings. */
void proc_maps_note_fork(struct proc_maps *pm, int32_t tgid, int32_t parent);

/* Process tgid exec'd filename (a path as the exec gave it) at ts: the
 * mappings the BPF side saw before are forgotten. */
void proc_maps_note_exec_file(struct proc_maps *pm, int32_t tgid,
			      uint64_t ts, const char *filename);

/* Process tgid runs the program filename, exec'd while recorded (as a
 * mapping record taken at ts says: its exec's own record may come
 * later). */
void proc_maps_note_exe(struct proc_maps *pm, int32_t tgid, uint64_t ts,
			const char *filename);

/* fn is called at the end of a pass with each process whose maps were
 * read in it (at ts, BOOTTIME) and held every pc looked up after. */
void proc_maps_set_on_read(struct proc_maps *pm,
			   void (*fn)(void *ctx, int32_t tgid, uint64_t ts),
			   void *ctx);

const struct proc_maps_stats *proc_maps_stats(const struct proc_maps *pm);

#endif
