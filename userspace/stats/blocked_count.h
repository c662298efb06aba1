/* The blocked reasons of a trace, for `stats`: how many sched_blocked_reason
 * events its bundles hold, and how many of them name no function (the
 * recorder could not take the stack, found no frame past the scheduler,
 * or could not symbolize it; or the iid is not in the packet's
 * InternedData.kernel_symbols). */
#ifndef BTR_STATS_BLOCKED_COUNT_H
#define BTR_STATS_BLOCKED_COUNT_H

#include <stdint.h>

#include "perfetto/trace.pb-c.h"

struct blocked_count {
	uint64_t events;
	uint64_t unnamed;
};

/* Counts the blocked reasons of one packet (any kind; only bundles have
 * them). */
void blocked_count_packet(struct blocked_count *b,
			  const Perfetto__Protos__TracePacket *p);

#endif
