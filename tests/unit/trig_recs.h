/* Scheduler records as the BPF side writes them, for the trigger tests
 * (test_triggers.c, test_rec_triggers.c): a switch, a waking, and FEED
 * to hand one to a watch as read from a CPU's ring. */
#ifndef BTR_TRIG_RECS_H
#define BTR_TRIG_RECS_H

#include <stdio.h>
#include <string.h>

#include "record.h"
#include "trigger/watch.h"

static inline struct btr_switch sw(uint64_t ts, int32_t prev, int64_t state,
				   int32_t next)
{
	struct btr_switch r;

	memset(&r, 0, sizeof(r));
	r.h.ts = ts;
	r.h.type = BTR_REC_SWITCH;
	r.prev_pid = prev;
	r.prev_state = state;
	r.next_pid = next;
	snprintf(r.prev_comm, sizeof(r.prev_comm), "t%d", prev);
	snprintf(r.next_comm, sizeof(r.next_comm), "t%d", next);
	return r;
}

static inline struct btr_wakeup wk(uint64_t ts, int32_t pid, int32_t cpu)
{
	struct btr_wakeup r;

	memset(&r, 0, sizeof(r));
	r.h.ts = ts;
	r.h.type = BTR_REC_WAKING;
	r.pid = pid;
	r.target_cpu = cpu;
	snprintf(r.comm, sizeof(r.comm), "t%d", pid);
	return r;
}

/* Record r, as read from CPU cpu's ring. */
#define FEED(wt, cpu, r) trig_watch_record((wt), (cpu), &(r), sizeof(r))

#endif
