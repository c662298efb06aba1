/* The stack samples of a trace, for `stats`: how many PerfSamples it holds
 * (perf script import, or --callstacks off-CPU stacks), how many have a
 * stack cut short (unwind_error MAX_FRAMES_EXCEEDED: deeper than the
 * recorder takes) and how many have no stack at all (the stack could not
 * be taken), or the kernel part alone (a callstack with unwind_error
 * UNKNOWN: the user stack of a task that has one could not be taken);
 * and of the user stacks unwound by CFI from a slice, how many the slice
 * cut (MEMORY_INVALID: deeper than --stack-slice) and how many stopped at
 * a frame without CFI (UNWIND_INFO). */
#ifndef BTR_STATS_STACK_COUNT_H
#define BTR_STATS_STACK_COUNT_H

#include <stdint.h>

#include "perfetto/trace.pb-c.h"

struct stack_count {
	uint64_t samples;
	uint64_t truncated;
	uint64_t without_stack;
	uint64_t without_user_stack;
	uint64_t slice_cut;
	uint64_t no_cfi;
};

/* Counts the sample of one packet (any kind; only PerfSamples count). */
void stack_count_packet(struct stack_count *s,
			const Perfetto__Protos__TracePacket *p);

#endif
