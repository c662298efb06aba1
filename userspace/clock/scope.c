/* Graph keys of the clocks of a scope (see scope.h). */
#include "clock/scope.h"

bool clock_scope_file_scoped(uint32_t clock_id)
{
	return clock_id == BTR_CLOCK_TRACE_FILE ||
	       (clock_id >= BTR_CLOCK_SEQ_FIRST &&
		clock_id <= BTR_CLOCK_SEQ_LAST);
}

int clock_scope_key_tag(const struct clock_scope *s, uint32_t tag,
			uint32_t clock_id, uint32_t seq,
			struct btr_clock_key *key)
{
	return btr_clock_key_make(clock_id, seq,
				  clock_scope_file_scoped(clock_id) ? s->file : tag,
				  s->machine, key);
}

int clock_scope_key(const struct clock_scope *s, uint32_t clock_id,
		    uint32_t seq, struct btr_clock_key *key)
{
	return clock_scope_key_tag(s, 0, clock_id, seq, key);
}
