/* Counting sched_blocked_reason events and those without a function. */
#include "stats/blocked_count.h"

#include <stdbool.h>

static bool named(const Perfetto__Protos__InternedData *in, uint64_t iid)
{
	size_t i;

	for (i = 0; in && i < in->n_kernel_symbols; i++)
		if (in->kernel_symbols[i]->iid == iid &&
		    in->kernel_symbols[i]->str.len)
			return true;
	return false;
}

void blocked_count_packet(struct blocked_count *b,
			  const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__FtraceEventBundle *fb;
	size_t i;

	if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS)
		return;
	fb = p->ftrace_events;
	for (i = 0; i < fb->n_event; i++) {
		const Perfetto__Protos__SchedBlockedReasonFtraceEvent *r;

		if (fb->event[i]->event_case !=
		    PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON)
			continue;
		r = fb->event[i]->sched_blocked_reason;
		b->events++;
		if (!r->has_caller || !named(p->interned_data, r->caller))
			b->unnamed++;
	}
}
