/* The interned callstacks of PerfSample sequences, for `dump`: function
 * names, frames and callstacks are interned once per packet sequence (in
 * InternedData) and used by later packets, so dump keeps them per
 * sequence to print each sample's stack by function name. An iid
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

/* Takes the function names, frames and callstacks of `d` (NULL: none) as
 * the entries of sequence `seq`. Returns 0 or -ENOMEM. */
int dump_stacks_intern(struct dump_stacks *s, uint32_t seq,
		       const Perfetto__Protos__InternedData *d);

/* The function names of callstack `iid` of sequence `seq`, leaf (innermost)
 * first, in *names (valid until the next call); the number of frames, or
 * -1 when the callstack, one of its frames or names is unknown. */
long dump_stacks_names(struct dump_stacks *s, uint32_t seq, uint64_t iid,
		       char *const **names);

#endif
