/* The interned callstacks of PerfSample sequences, for `dump` and the
 * report's off-CPU stacks (report/samples.h): function
 * names, frames, mappings and callstacks are interned once per packet
 * sequence (in InternedData) and used by later packets, so they are kept
 * per sequence to name each sample's stack. An iid
 * interned again (after the sequence cleared its state) replaces the old
 * entry. */
#ifndef BTR_DUMP_STACKS_H
#define BTR_DUMP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto/trace.pb-c.h"

struct dump_stacks;

struct dump_stacks *dump_stacks_new(void);
void dump_stacks_free(struct dump_stacks *s);

/* Takes the function names, mapping paths, mappings, frames and
 * callstacks of `d` (NULL: none) as the entries of sequence `seq`.
 * Returns 0 or -ENOMEM. */
int dump_stacks_intern(struct dump_stacks *s, uint32_t seq,
		       const Perfetto__Protos__InternedData *d);

/* The function names of callstack `iid` of sequence `seq`, leaf (innermost)
 * first, in *names (valid until the next call); the number of frames, or
 * -1 when the callstack, one of its frames or names is unknown. */
long dump_stacks_names(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names);

/* dump_stacks_names, and in *nkernel (NULL: not wanted) how many of the
 * frames, from the leaf, are in the kernel (their mapping is "/kernel"
 * or "[kernel.kallsyms]"): the kernel part of an off-CPU stack, the user
 * part after it. */
long dump_stacks_split(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names, size_t *nkernel);

#endif
