/* The check trace_processor makes of sched_switch events, for `stats`: per
 * CPU, once a scheduling slice is open there, a full switch whose prev_pid
 * is not the task the CPU's last switch put on it counts as
 * mismatched_sched_switch_tids. Compact switches carry no prev_pid: they
 * only set the running task, and a CPU's first one opens no slice. */
#ifndef BTR_STATS_SWITCH_CHECK_H
#define BTR_STATS_SWITCH_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfetto/trace.pb-c.h"

struct switch_cpu {
	int64_t running; /* next_pid of the last switch, once known */
	bool known;      /* some switch was seen: running is set */
	bool open;       /* a slice is open (trace_processor's pending one) */
};

struct switch_check {
	struct switch_cpu *cpu; /* by cpu */
	size_t ncpu;
	bool seen;          /* some bundle held a switch */
	uint64_t mismatched;
};

/* Takes the switches of one bundle, in timestamp order. Bundles of a CPU
 * must come in file order. Returns 0 or -ENOMEM. */
int switch_check_bundle(struct switch_check *s,
			const Perfetto__Protos__FtraceEventBundle *b);

/* The same for a bundle of CPU cpu holding n compact switches and no full
 * one, the last switching to last_next. */
int switch_check_compact(struct switch_check *s, uint32_t cpu, uint64_t n,
			 int64_t last_next);

void switch_check_free(struct switch_check *s);

#endif
