/* One scheduler event as the report takes it: decoded from a bundle
 * (compact or regular FtraceEvent) into a fixed 24-byte record, queued per
 * CPU (merge.h) and taken by the thread model (model.h) in timestamp
 * order. Comms are ids of the name table (names.h). */
#ifndef BTR_REPORT_EVENT_H
#define BTR_REPORT_EVENT_H

#include <stdint.h>

enum rev_kind {
	REV_SWITCH = 0,   /* compact: prev is the CPU's running task */
	REV_SWITCH_FULL,  /* regular sched_switch: pid2 is prev_pid */
	REV_WAKING,       /* compact sched_waking: waker runs on the CPU */
	REV_WAKING_FULL,  /* regular sched_waking: pid2 is the waker */
	REV_NEWTASK,      /* task_newtask: pid2 created pid */
	REV_RENAME,       /* task_rename: pid is now called name */
	REV_BLOCKED,      /* sched_blocked_reason: pid blocked in caller
			   * (aux: its symbol's name id) */
};

/* flags */
#define REV_CLONE_THREAD 1u /* REV_NEWTASK: a thread of pid2's process */

struct rev {
	int64_t ts;
	int32_t pid;      /* next_pid, wakee, new or renamed tid */
	int32_t pid2;     /* see the kinds */
	uint32_t name;    /* next_comm, wakee's or new comm */
	uint16_t state;   /* switches: prev_state (low 16 bits); wakings:
			   * common_flags (0: not known) */
	uint8_t kind;
	uint8_t flags;
};

_Static_assert(sizeof(struct rev) == 24, "struct rev is 24 bytes");

#endif
