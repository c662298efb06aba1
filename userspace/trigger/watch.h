/* The trigger conditions (spec.h) computed from the scheduler records the
 * readers decode, at no extra BPF cost: per thread, when it became
 * runnable (a waking, or a preemption), when it went to sleep and in which
 * state, and which CPU's queue it waits on. The watch is one thread's: it
 * takes the records merged in time order across the rings (one reader:
 * rings_drain_merged; reader threads: each notes its rings' records, and
 * the main thread merges the notes, trigger/notes.h). A record committed
 * late may still come before an earlier record of its thread, so each
 * pairing is also made in the other order, within the times the thread's
 * own records allow. Conditions that hold are queued as hits for the
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
				  uint32_t ncpus);
void trig_watch_free(struct trig_watch *w);

/* With reader threads: the record of CPU cpu's ring noted by its reader
 * for the main thread (notes.c), out of line. */
void trig_watch_note(struct trig_watch *w, uint32_t cpu, const void *rec,
		     size_t len);

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
 * in p->t[0]) after its encoding: `rq` as in watch_around. */
static inline __attribute__((always_inline)) int
watched(struct trig_watch *w, uint32_t cpu, const void *rec,
	const struct trig_pre *p, bool sw, bool rq)
{
	if (sw)
		on_switch(w, cpu, rec, p, rq);
	else
		on_waking(w, cpu, rec, p->t[0], rq);
	return 0;
}

/* trig_watch_around, compiled three times: `fast` (a constant) for the
 * one table, what the readers' path nearly always has, with runqueue
 * counts (`rq`) or without any (no runqueue spec: the threads' queues
 * are not followed at all); else for the paged table. */
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
		note_recent(w, ((const struct btr_switch *)rec)->next_pid,
			    fast);
		e = enc.sw(ctx, rec);
		return e ? e : watched(w, cpu, rec, &p, true, rq);
	}
	if (type == BTR_REC_WAKING && len >= sizeof(*wk)) {
		p.t[0] = fast ? tstate_in(w->table, wk->pid)
			      : tstate_of(w, wk->pid);
		note_recent(w, wk->pid, fast);
		e = enc.wk(ctx, wk);
		return e || !p.t[0] ? e
				    : watched(w, cpu, rec, &p, false, rq);
	}
	if (type == BTR_REC_SWITCH_BLOCKED &&
	    len >= sizeof(struct btr_switch)) {
		trig_watch_switch_pre(w, rec, &p, fast);
		e = enc.any(ctx, rec, len);
		return e ? e : watched(w, cpu, rec, &p, true, rq);
	}
	if (type == BTR_REC_WAKEUP_NEW && len >= sizeof(*wk)) {
		p.t[0] = tstate_of(w, wk->pid);
		e = enc.any(ctx, rec, len);
		return e || !p.t[0] ? e
				    : watched(w, cpu, rec, &p, false, rq);
	}
	if (type == BTR_REC_FREE && len >= sizeof(struct btr_exit)) {
		p.t[0] = tstate_of(w, ((const struct btr_exit *)rec)->pid);
		e = enc.any(ctx, rec, len);
		if (!e && p.t[0])
			on_free(w, p.t[0]);
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
	int e;

	if (__builtin_expect(w->path == PATH_FAST, 1))
		return watch_around(w, cpu, rec, len, enc, ctx, true, true);
	if (w->path == PATH_LEAN)
		return watch_around(w, cpu, rec, len, enc, ctx, true, false);
	if (w->path == PATH_ANY)
		return watch_around(w, cpu, rec, len, enc, ctx, false, true);
	/* PATH_NOTE: the reader's encoding, and a note for the main thread */
	e = enc.any(ctx, rec, len);
	if (!e)
		trig_watch_note(w, cpu, rec, len);
	return e;
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

/* A record noted by a reader thread, watched by the main thread
 * (notes.c) as one reader watches it: the way the watch's table has. */
static inline void trig_watch_own(struct trig_watch *w, uint32_t cpu,
				  const void *rec, size_t len)
{
	struct trig_enc none = { trig_watch_no_enc, trig_watch_no_enc_sw,
				 trig_watch_no_enc_wk };

	if (w->own_path == PATH_FAST)
		watch_around(w, cpu, rec, len, none, NULL, true, true);
	else if (w->own_path == PATH_LEAN)
		watch_around(w, cpu, rec, len, none, NULL, true, false);
	else
		watch_around(w, cpu, rec, len, none, NULL, false, true);
}

/* With n reader threads, each reading its own rings (ring by ring, one
 * reader ahead of another by up to a pass or more): a wait or sleep is
 * made of records in several rings, that different readers read at
 * different times. So the readers note the records the watch takes
 * (trig_watch_around, PATH_NOTE), and hand them over with their
 * frontier; the main thread merges them in time order once every reader
 * is past them (trig_watch_take) and watches them as one reader does:
 * the same hits. Call before the readers start; 0 or -ENOMEM. */
int trig_watch_readers(struct trig_watch *w, uint32_t n);
/* Reader `reader` has read every record of its rings, cpus[0..n), older
 * than ts: it hands over their notes. */
void trig_watch_frontier(struct trig_watch *w, uint32_t reader, uint64_t ts,
			 const uint32_t *cpus, uint32_t n);
/* Records watched out of time order (notes applied before a reader far
 * behind the others had handed over its older ones) or not at all (out
 * of memory): 0 when the hits are one reader's. */
uint64_t trig_watch_inexact(struct trig_watch *w);

/* Before a reader's pass: the state lines of the threads read of late
 * start loading (between two passes the load ran, and took them out of
 * the cache). */
void trig_watch_warm(struct trig_watch *w);

/* Moves up to max queued hits into out, oldest first; returns how many.
 * *overflow (added to) counts hits the queue had no room for. With
 * reader threads, the notes every reader is past (less a slack for a
 * record committed late) are watched first. */
size_t trig_watch_take(struct trig_watch *w, struct trig_hit *out, size_t max,
		       uint64_t *overflow);
/* The same once the readers have stopped and every record is read: every
 * note watched, whatever the frontiers. */
size_t trig_watch_take_rest(struct trig_watch *w, struct trig_hit *out,
			    size_t max, uint64_t *overflow);

/* Hits of spec that end before `until` (trace clock) are not queued but
 * counted, as suppressed or as merged into an action already due: the
 * main thread's way to keep a storm off the watch's path. */
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
 * the thread that watches. Returns the pages given back. */
size_t trig_watch_sweep(struct trig_watch *w, size_t pages);
/* Bytes of the thread table in memory (for -v), and in *paged whether it
 * is the paged table (the one table was refused). */
size_t trig_watch_resident(struct trig_watch *w, bool *paged);

#endif
