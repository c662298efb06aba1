/* Where a clock lives: its input (file) and machine, and the clock graph
 * key of a clock read by a packet in that scope (see clock_graph.h for
 * keys). */
#ifndef BTR_SCOPE_H
#define BTR_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "clock/clock_graph.h"

/* Where a clock of a packet lives (docs/clock-model.md, 'Clocks and their
 * scope'): its input (file) and machine. The sequence-scoped clocks
 * (64..127) get the file and the packet's sequence, TRACE_FILE (11) the
 * file (it is the input's private timeline), builtin and global clocks a
 * file tag: 0 for the machine's own clocks, the input's tag when it is
 * isolated (machines.h). */
struct clock_scope {
	uint32_t file;
	uint32_t machine;
};

/* The machine of a packet: the input's own when machine_id is 0 or the
 * id the input adopted as its own (a file recorded remotely), else
 * machine_id.
 * (The offline passes map machine ids through machines.h; this raw form
 * serves callers without a machine table.) */
static inline uint32_t clock_scope_machine(const struct clock_scope *s,
				      uint32_t adopted, uint32_t machine_id)
{
	return !machine_id || machine_id == adopted ? s->machine : machine_id;
}

/* True for the clocks whose key takes the file, not a tag: TRACE_FILE and
 * the sequence-scoped ones. */
bool clock_scope_file_scoped(uint32_t clock_id);

/* The graph key of clock_id read on sequence seq, builtin and global
 * clocks with file tag `tag`. -EINVAL for a sequence-scoped id on sequence
 * 0. */
int clock_scope_key_tag(const struct clock_scope *s, uint32_t tag,
			uint32_t clock_id, uint32_t seq,
			struct btr_clock_key *key);
/* The same with tag 0. */
int clock_scope_key(const struct clock_scope *s, uint32_t clock_id,
		    uint32_t seq, struct btr_clock_key *key);

#endif
