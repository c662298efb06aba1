/* User stacks by CFI (--stack-slice): from the registers a thread had at
 * its system call and a slice of its stack (bpf/record.h, btr_ustack),
 * each caller is found through the DWARF call frame information of the
 * binary its pc is in (.eh_frame, read with elfutils' libdw), as perf's
 * --call-graph dwarf does after the fact. The walk joins the chain of
 * frame pointers the BPF side followed (btr_stack) where a step reads its
 * return address from a slot of that chain: from there the chain's
 * frames are the stack, however deep, so the slice only has to hold the
 * frames that have no frame pointer. x86-64. */
#ifndef BTR_RECORD_UNWIND_H
#define BTR_RECORD_UNWIND_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "record.h"

/* How a walk ended. */
enum unwind_end {
	UNWIND_COMPLETE, /* the outermost frame (its return address is
			  * undefined: _start, clone3) */
	UNWIND_JOINED,   /* the frame-pointer chain took over */
	UNWIND_CUT,      /* a step needed stack past the slice */
	UNWIND_NO_CFI,   /* a pc with no CFI, and no frame pointer to go on */
	UNWIND_BAD,      /* a rule the walk cannot follow, or a loop */
	UNWIND_FULL,     /* as many frames as the output holds */
};

/* The CFI frame of pc in process tgid (leaf: pc is where the thread is;
 * else a return address, looked up at the call before it); NULL when no
 * binary or CFI covers it. The caller of unwind_user() frees it. */
typedef Dwarf_Frame *(*unwind_frame_fn)(void *ctx, int32_t tgid,
					uint64_t pc, bool leaf);

/* The user stack of the sleep whose slice is u and whose frame-pointer
 * walk gave fp[0..nfp) (fp[0] the pc, then each frame's return
 * address): its pcs, innermost first, into out[0..max). Returns their
 * number; *end says how the walk ended. */
uint32_t unwind_user(const struct btr_ustack *u, int32_t tgid,
		     const __u64 *fp, uint32_t nfp, __u64 *out,
		     uint32_t max, unwind_frame_fn fn, void *ctx,
		     enum unwind_end *end);

#endif
