/* What `dump` needs to reconstruct compact sched events as trace_processor
 * does: the task running on each CPU (the last switch's next_pid and
 * next_comm, in file order), and the letters of a prev_state value. */
#ifndef BTR_DUMP_SCHED_STATE_H
#define BTR_DUMP_SCHED_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct cpu_task {
	bool known;
	int64_t pid;
	char *comm;
};

struct sched_state {
	struct cpu_task *cpus;
	uint32_t n;
};

/* The task running on `cpu`, or NULL if no switch was seen there yet. */
const struct cpu_task *sched_state_current(const struct sched_state *s,
					   uint64_t cpu);

/* Records that `pid` (`comm`, copied) now runs on `cpu`. */
void sched_state_switch(struct sched_state *s, uint64_t cpu, int64_t pid,
			const char *comm);

/* A task_rename on `cpu`: if `pid` runs there (a task renames itself, by
 * exec or prctl, where it runs), it is now called `comm`, as trace_processor
 * looks the name of a compact switch's prev up afresh. Renames from other
 * CPUs are left out so that the result does not depend on how the CPUs'
 * bundles interleave in the file. */
void sched_state_rename(struct sched_state *s, uint64_t cpu, int64_t pid,
			const char *comm);

void sched_state_free(struct sched_state *s);

/* prev_state letters for kernels >= 4.14: "R", "R+", "S", "D", "I", ...
 * or "?" for a value trace_processor cannot decode. buf: 16 bytes. */
const char *sched_state_letters(int64_t prev_state, char buf[16]);

#endif
