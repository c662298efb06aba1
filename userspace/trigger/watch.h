/* The trigger conditions (spec.h) computed from the scheduler records the
 * readers decode, at no extra BPF cost: per thread, when it became
 * runnable (a waking, or a preemption), when it went to sleep and in which
 * state, and which CPU's queue it waits on. A reader hands its rings'
 * records merged in time order (rings_drain_merged); a record committed
 * during a pass, or one of another reader's rings, may still come before
 * an earlier record of its thread, so each pairing is also made in the
 * other order, within the times the thread's own records allow.
 * Thread-safe with `locked` (reader threads): one lock per
 * stripe of thread ids. Conditions that hold are queued as hits for the
 * main thread (trig_watch_take); filters that read /proc are its job.
 * Thread state sits in a table indexed by tid: address space for every
 * tid the kernel can give (256 MiB, not committed), of which only the
 * parts that threads were seen in take memory; where that much is
 * refused, pages of 4096 threads mapped as tids of theirs are seen. */
#ifndef BTR_TRIGGER_WATCH_H
#define BTR_TRIGGER_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
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
struct trig_pre;
struct tstate;

/* The most CPUs a watch takes: a thread's queue is kept in 16 bits. */
#define TRIG_CPUS_MAX 65534u

/* Watches the condition specs among specs[0..n) (named ones are not its
 * job); NULL when out of memory, or for more than TRIG_CPUS_MAX CPUs. */
struct trig_watch *trig_watch_new(const struct trig_spec *specs, uint32_t n,
				  uint32_t ncpus, bool locked);
void trig_watch_free(struct trig_watch *w);

/* The handlers of one record with reader threads (locked), out of line;
 * with one reader the same code is inlined into the reader's path. */
void trig_watch_switch(struct trig_watch *w, uint32_t cpu,
		       const struct btr_switch *r, const struct trig_pre *p);
void trig_watch_waking(struct trig_watch *w, uint32_t cpu,
		       const struct btr_wakeup *r, struct tstate *t);
void trig_watch_freed(struct trig_watch *w, uint32_t cpu,
		      const struct btr_exit *r, struct tstate *t);

#include "trigger/watch_hot.h"

/* The states of a switch's two threads, prev's and next's: in the one
 * table (`one`, a constant), or in whichever the watch has. */
static inline __attribute__((always_inline)) void
trig_watch_switch_pre(struct trig_watch *w, const struct btr_switch *sw,
		      struct trig_pre *p, bool one)
{
	if (one) {
		p->t[0] = tstate_in(w->table, sw->prev_pid);
		p->t[1] = tstate_in(w->table, sw->next_pid);
	} else {
		p->t[0] = tstate_of(w, sw->prev_pid);
		p->t[1] = tstate_of(w, sw->next_pid);
	}
}

/* The reader's encoding of a record, around which trig_watch_around
 * watches it: `any` takes any record of len bytes; `sw` and `wk` a whole
 * BTR_REC_SWITCH and BTR_REC_WAKING, known to be that (for the encoder,
 * bundle_enc_add_switch and _waking), so that the record's type is
 * branched on once for both, not twice: on an unpredictable mix of
 * switches and wakings each such branch costs a miss. Constants: the
 * calls are direct. */
struct trig_enc {
	int (*any)(void *ctx, const void *rec, size_t len);
	int (*sw)(void *ctx, const struct btr_switch *r);
	int (*wk)(void *ctx, const struct btr_wakeup *r);
};

/* The handling of a switch (`sw`, a constant) or of a waking (its state
 * in p->t[0]) after its encoding: `fast` and `rq` as in watch_around. */
static inline __attribute__((always_inline)) int
watched(struct trig_watch *w, uint32_t cpu, const void *rec,
	const struct trig_pre *p, bool sw, bool fast, bool rq)
{
	if (!fast && w->locked) {
		if (sw)
			trig_watch_switch(w, cpu, rec, p);
		else
			trig_watch_waking(w, cpu, rec, p->t[0]);
	} else if (sw) {
		on_switch(w, cpu, rec, p, false, rq);
	} else {
		on_waking(w, cpu, rec, p->t[0], false, rq);
	}
	return 0;
}

/* trig_watch_around, compiled three times: `fast` (a constant) for the
 * one table and one reader, what the readers' path nearly always has,
 * with runqueue counts (`rq`) or without any (no runqueue spec: the
 * threads' queues are not followed at all); else for whichever table
 * and locking the watch has. */
static inline __attribute__((always_inline)) int
watch_around(struct trig_watch *w, uint32_t cpu, const void *rec, size_t len,
	     struct trig_enc enc, void *ctx, bool fast, bool rq)
{
	const struct btr_wakeup *wk = rec;
	uint16_t type = ((const struct btr_hdr *)rec)->type;
	struct trig_pre p;
	int e;

	/* the most common first, alone: a switch, then a waking */
	if (type == BTR_REC_SWITCH && len >= sizeof(struct btr_switch)) {
		trig_watch_switch_pre(w, rec, &p, fast);
		e = enc.sw(ctx, rec);
		return e ? e : watched(w, cpu, rec, &p, true, fast, rq);
	}
	if (type == BTR_REC_WAKING && len >= sizeof(*wk)) {
		p.t[0] = fast ? tstate_in(w->table, wk->pid)
			      : tstate_of(w, wk->pid);
		e = enc.wk(ctx, wk);
		return e || !p.t[0] ? e
				    : watched(w, cpu, rec, &p, false, fast, rq);
	}
	if (type == BTR_REC_SWITCH_BLOCKED &&
	    len >= sizeof(struct btr_switch)) {
		trig_watch_switch_pre(w, rec, &p, fast);
		e = enc.any(ctx, rec, len);
		return e ? e : watched(w, cpu, rec, &p, true, fast, rq);
	}
	if (type == BTR_REC_WAKEUP_NEW && len >= sizeof(*wk)) {
		p.t[0] = tstate_of(w, wk->pid);
		e = enc.any(ctx, rec, len);
		return e || !p.t[0] ? e
				    : watched(w, cpu, rec, &p, false, fast, rq);
	}
	if (type == BTR_REC_FREE && len >= sizeof(struct btr_exit)) {
		p.t[0] = tstate_of(w, ((const struct btr_exit *)rec)->pid);
		e = enc.any(ctx, rec, len);
		if (!e && p.t[0])
			trig_watch_freed(w, cpu, rec, p.t[0]);
		return e;
	}
	return enc.any(ctx, rec, len);
}

/* One record, as a reader took it from CPU cpu's ring, watched around
 * its encoding by enc (its context ctx): the state of the threads it
 * names is looked up and starts loading before, so that it is in the
 * cache by the time the record is handled, after (with many threads, the
 * misses on their state were most of the watch's cost). For a switch or
 * a waking, one dispatch on the record's type serves the look-ups, the
 * encoding and the handling (other types the encoder dispatches again).
 * Returns what the encoding returned; a record it refused is not
 * watched. */
static inline __attribute__((always_inline)) int
trig_watch_around(struct trig_watch *w, uint32_t cpu, const void *rec,
		  size_t len, struct trig_enc enc, void *ctx)
{
	if (__builtin_expect(w->path == PATH_FAST, 1))
		return watch_around(w, cpu, rec, len, enc, ctx, true, true);
	if (w->path == PATH_LEAN)
		return watch_around(w, cpu, rec, len, enc, ctx, true, false);
	return watch_around(w, cpu, rec, len, enc, ctx, false, true);
}

static inline int trig_watch_no_enc(void *ctx, const void *rec, size_t len)
{
	(void)ctx;
	(void)rec;
	(void)len;
	return 0;
}

static inline int trig_watch_no_enc_sw(void *ctx, const struct btr_switch *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static inline int trig_watch_no_enc_wk(void *ctx, const struct btr_wakeup *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

/* One record, as a reader took it from CPU cpu's ring, with no encoding
 * around it (tests). */
static inline void trig_watch_record(struct trig_watch *w, uint32_t cpu,
				     const void *rec, size_t len)
{
	trig_watch_around(w, cpu, rec, len,
			  (struct trig_enc){ trig_watch_no_enc,
					     trig_watch_no_enc_sw,
					     trig_watch_no_enc_wk },
			  NULL);
}

/* With n reader threads (each reading its own rings, in time order, one
 * ahead of another by up to a pass or more), a wait or sleep is made of
 * records that different readers read at different times: a waking read
 * early can pair with a switch-in of a later cycle whose earlier
 * records another reader has not read yet. So each hit is held until
 * every reader has read past its end (trig_watch_frontier), and dropped
 * if a record of its thread from inside it was read meanwhile: such a
 * record shows the pairing was not one wait or sleep. Call before the
 * readers start, on a watch made `locked`; 0 or -ENOMEM. */
int trig_watch_readers(struct trig_watch *w, uint32_t n);
/* Reader `reader` has read every record of its rings, cpus[0..n),
 * older than ts. With a runqueue spec the counts are kept from notes of
 * the rings' records, applied in time order once every reader is past
 * them (trigger/rqnotes.h): the rings are what it hands over. */
void trig_watch_frontier(struct trig_watch *w, uint32_t reader, uint64_t ts,
			 const uint32_t *cpus, uint32_t n);
/* Hits dropped so far because a record inside them was read late. */
uint64_t trig_watch_cancelled(struct trig_watch *w);
/* Records applied to the runqueue counts out of time order (a reader
 * far behind the others) or not at all (out of memory). */
uint64_t trig_watch_rq_inexact(struct trig_watch *w);

/* Moves up to max queued hits into out, oldest first; returns how many.
 * *overflow (added to) counts hits the queue had no room for. With
 * reader threads, only hits every reader has read past (a record
 * committed up to FRONTIER_SLACK late still cancels one). */
size_t trig_watch_take(struct trig_watch *w, struct trig_hit *out, size_t max,
		       uint64_t *overflow);
/* The same once the readers have stopped and every record is read: every
 * hit still queued, whatever the frontiers. */
size_t trig_watch_take_rest(struct trig_watch *w, struct trig_hit *out,
			    size_t max, uint64_t *overflow);

/* Hits of spec that end before `until` (trace clock) are not queued but
 * counted, as suppressed or as merged into an action already due: the
 * main thread's way to keep a storm off the readers' path. */
void trig_watch_mute(struct trig_watch *w, uint32_t spec, uint64_t until,
		     bool suppressed);
/* Adds the hits muted since the last call to *merged and *suppressed. */
void trig_watch_muted(struct trig_watch *w, uint64_t *merged,
		      uint64_t *suppressed);

/* Gives the memory of pages of the thread table whose lines are all zero
 * (their threads freed, or never seen) back to the kernel: the next
 * `pages` pages from where the last call ended, round the table (a tid
 * is reused only after the kernel went round all of them, so without it
 * a long recording would come to hold the whole table, 256 MiB). From
 * the main thread: with reader threads it holds every stripe meanwhile.
 * Returns the pages given back. */
size_t trig_watch_sweep(struct trig_watch *w, size_t pages);
/* Bytes of the thread table in memory (for -v), and in *paged whether it
 * is the paged table (the one table was refused). */
size_t trig_watch_resident(struct trig_watch *w, bool *paged);

#endif
