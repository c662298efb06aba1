/* User stacks' mappings and symbols in the recorder (see ustacks.h). */
#include "record/ustacks.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "record/maps.h"
#include "record/symbolize.h"
#include "record/unwind.h"
#include "util/log.h"

struct ustacks {
	pthread_mutex_t lock;
	struct symbolizer *sym;
	struct proc_maps *maps;
};

struct ustacks *ustacks_new(void)
{
	struct ustacks *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	pthread_mutex_init(&u->lock, NULL);
	u->sym = symbolizer_new();
	u->maps = u->sym ? proc_maps_new(u->sym, NULL) : NULL;
	if (!u->maps) {
		ustacks_free(u);
		return NULL;
	}
	return u;
}

void ustacks_set_readers(struct ustacks *u, uint32_t n)
{
	/* pass ends are counted over all readers: 2n give each reader two
	 * (the pass under way when the exit was read, then one begun after)
	 * when they take turns evenly; one far slower than the others may
	 * still be in its first */
	proc_maps_keep_gone(u->maps, n > 1 ? 2 * n : 1);
}

void ustacks_free(struct ustacks *u)
{
	if (!u)
		return;
	proc_maps_free(u->maps);
	symbolizer_free(u->sym);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

void ustacks_lock(struct ustacks *u)
{
	pthread_mutex_lock(&u->lock);
}

void ustacks_unlock(struct ustacks *u)
{
	pthread_mutex_unlock(&u->lock);
}

/* The module and rel_pc of pc in process tgid, false when none holds it. */
static bool module_of(struct ustacks *u, int32_t tgid, uint64_t pc,
		      const struct user_map **m, uint64_t *rel_pc)
{
	*m = proc_maps_find(u->maps, tgid, pc);
	if (!*m)
		return false;
	/* trace_processor's rel_pc: an address of the ELF's own */
	*rel_pc = pc - (*m)->pm.start + (*m)->pm.exact_offset +
		  (*m)->pm.load_bias;
	return true;
}

/* unwind_frame_fn over the process's mappings and their modules' CFI. */
static Dwarf_Frame *cfi_frame(void *ctx, int32_t tgid, uint64_t pc, bool leaf)
{
	struct ustacks *u = ctx;
	const struct user_map *m;
	uint64_t rel_pc;

	if (!module_of(u, tgid, pc, &m, &rel_pc) || !m->mod || !m->mod->elf)
		return NULL;
	return symbolizer_cfi_frame(u->sym, m->mod, rel_pc, leaf);
}

uint32_t ustacks_unwind(void *ctx, int32_t tgid, const struct btr_ustack *us,
			const __u64 *fp, uint32_t nfp, __u64 *out,
			uint32_t max, enum callstack_unwound *how)
{
	static const enum callstack_unwound of[] = {
		[UNWIND_COMPLETE] = CALLSTACK_WHOLE,
		[UNWIND_JOINED] = CALLSTACK_JOINED,
		[UNWIND_CUT] = CALLSTACK_CUT,
		[UNWIND_NO_CFI] = CALLSTACK_NO_CFI,
		[UNWIND_BAD] = CALLSTACK_NO_CFI,
		[UNWIND_FULL] = CALLSTACK_FULL,
	};
	enum unwind_end end;
	uint32_t n = unwind_user(us, tgid, fp, nfp, out, max, cfi_frame, ctx,
				 &end);

	*how = of[end];
	return n;
}

bool ustacks_resolve(void *ctx, int32_t tgid, uint64_t pc, bool leaf,
		     struct perf_frame *f)
{
	struct ustacks *u = ctx;
	const struct user_map *m;

	if (!module_of(u, tgid, pc, &m, &f->rel_pc))
		return false;
	f->map = &m->pm;
	f->symbol = m->mod && m->mod->elf ?
			    symbolizer_name(u->sym, m->mod, f->rel_pc, leaf) :
			    NULL;
	return true;
}

void ustacks_note_record(struct ustacks *u, const struct btr_hdr *h,
			 size_t len)
{
	const struct btr_exit *x = (const void *)h;
	const struct btr_fork *fk = (const void *)h;
	bool exec = h->type == BTR_REC_EXEC && len >= sizeof(struct btr_exec);

	if (h->type == BTR_REC_FORK && len >= sizeof(*fk) &&
	    fk->child_pid == fk->child_tgid) {
		ustacks_lock(u);
		proc_maps_note_fork(u->maps, fk->child_tgid, fk->parent_pid);
		ustacks_unlock(u);
		return;
	}

	if (!exec && !(h->type == BTR_REC_EXIT && len >= sizeof(*x) &&
		       x->pid == x->tgid))
		return;
	ustacks_lock(u);
	if (exec) {
		const struct btr_exec *e = (const void *)h;
		char name[BTR_FILENAME_LEN + 1];

		memcpy(name, e->filename, BTR_FILENAME_LEN);
		name[BTR_FILENAME_LEN] = '\0';
		proc_maps_note_exec(u->maps, h->pid); /* pid == tgid now */
		proc_maps_note_exec_file(u->maps, h->pid, h->ts, name);
	} else
		proc_maps_note_gone(u->maps, x->tgid);
	ustacks_unlock(u);
}

int ustacks_note_vmas(struct ustacks *u, const struct btr_hdr *h, size_t len)
{
	const struct btr_vmas *v = (const void *)h;

	if (len < sizeof(*v) || h->type != BTR_REC_VMAS || v->n > BTR_VMAS_MAX)
		return -EINVAL;
	ustacks_lock(u);
	if (v->exe[0]) {
		char name[BTR_FILENAME_LEN + 1];

		memcpy(name, v->exe, BTR_FILENAME_LEN);
		name[BTR_FILENAME_LEN] = '\0';
		proc_maps_note_exe(u->maps, v->tgid, h->ts, name);
	}
	proc_maps_note_vmas(u->maps, v->tgid, h->ts, v->v, v->n);
	if (v->parent > 0)
		proc_maps_note_fork(u->maps, v->tgid, v->parent);
	ustacks_unlock(u);
	return 0;
}

void ustacks_on_maps_read(struct ustacks *u,
			  void (*fn)(void *ctx, int32_t tgid, uint64_t ts),
			  void *ctx)
{
	proc_maps_set_on_read(u->maps, fn, ctx);
}

void ustacks_end_pass(struct ustacks *u)
{
	ustacks_lock(u);
	proc_maps_end_pass(u->maps);
	ustacks_unlock(u);
}

int ustacks_emit_symbols(struct ustacks *u, struct packet_sink *sink,
			 uint32_t seq, uint64_t ts, bool lines)
{
	int e;

	ustacks_lock(u);
	e = symbolizer_emit(u->sym, sink, seq, ts, lines);
	ustacks_unlock(u);
	return e;
}

void ustacks_log(const struct ustacks *u)
{
	const struct symbolizer_stats *s = symbolizer_stats(u->sym);
	const struct proc_maps_stats *m = proc_maps_stats(u->maps);

	log_debug("user stacks: %llu maps files read (%llu could not be), "
		  "%llu pcs placed by the mappings the BPF side saw, "
		  "%llu files (%llu not ELF), %llu addresses looked up, "
		  "%llu named, %llu past the limits",
		  (unsigned long long)m->reads, (unsigned long long)m->failed,
		  (unsigned long long)m->recorded,
		  (unsigned long long)s->modules,
		  (unsigned long long)s->not_elf, (unsigned long long)s->addrs,
		  (unsigned long long)s->named,
		  (unsigned long long)s->over_limit);
}
