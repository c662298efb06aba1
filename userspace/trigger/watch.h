/* The trigger conditions (spec.h) computed from the scheduler records the
 * readers decode, at no extra BPF cost: per thread, when it became
 * runnable (a waking, or a preemption), when it went to sleep and in which
 * state, and which CPU's queue it waits on. A record of one thread may
 * come from another CPU's ring before an earlier record of it (each ring
 * is in time order, the rings are read one after another), so each pairing
 * is also made in the other order, within the times the thread's own
 * records allow. Thread-safe with `locked` (reader threads): one lock per
 * stripe of thread ids. Conditions that hold are queued as hits for the
 * main thread (trig_watch_take); filters that read /proc are its job. */
#ifndef BTR_TRIGGER_WATCH_H
#define BTR_TRIGGER_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trigger/spec.h"

struct trig_hit {
	uint32_t spec;       /* index of the spec that held */
	int32_t tid;
	uint32_t cpu;        /* runqueue: the CPU; else where it was seen */
	uint64_t start, end; /* the interval (runqueue: end = when it held) */
	uint64_t value;      /* ns, or runnable threads */
	char state;          /* blocked: 'S' or 'D'; else 'R' */
	char comm[TRIG_COMM_LEN];
};

struct trig_watch;

/* Watches the condition specs among specs[0..n) (named ones are not its
 * job); NULL when out of memory. */
struct trig_watch *trig_watch_new(const struct trig_spec *specs, uint32_t n,
				  uint32_t ncpus, bool locked);
void trig_watch_free(struct trig_watch *w);

/* One record, as a reader took it from CPU cpu's ring. */
void trig_watch_record(struct trig_watch *w, uint32_t cpu, const void *rec,
		       size_t len);

/* Moves up to max queued hits into out, oldest first; returns how many.
 * *overflow (added to) counts hits the queue had no room for. */
size_t trig_watch_take(struct trig_watch *w, struct trig_hit *out, size_t max,
		       uint64_t *overflow);

/* Threads the watch keeps state of (for tests and -v). */
size_t trig_watch_threads(struct trig_watch *w);

#endif
