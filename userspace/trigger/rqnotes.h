/* The runqueue counts of `runqueue>` specs with reader threads. A CPU's
 * count gains a woken thread from the waker's ring and loses it from its
 * own, two rings that two readers read at their own pace: counted as
 * read, a reader ahead made the count pass N when the queue never did.
 * So with reader threads each ring's records that move a thread onto or
 * off a queue are noted (by its reader, no lock), handed over with the
 * reader's frontier, and applied by the main thread once every reader is
 * past them, merged in time order: the counts one reader reading every
 * ring in time order keeps. Internal to trigger/watch.c. */
#ifndef BTR_TRIGGER_RQNOTES_H
#define BTR_TRIGGER_RQNOTES_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "trigger/spec.h"

struct trig_watch;

enum { RQ_NOTE_SWITCH = 1, RQ_NOTE_WAKING, RQ_NOTE_FREE };

/* One record, as the counts need it. */
struct rq_note {
	uint64_t ts;
	int32_t tid;  /* a switch's prev (0: the idle task); a waking's or a
		       * free's thread */
	int32_t next; /* a switch's next */
	uint32_t cpu; /* a switch's CPU; a waking's target */
	uint8_t kind;
	uint8_t preempted; /* a switch's prev: still runnable */
	char comm[TRIG_COMM_LEN]; /* of the thread that may join a queue */
};

struct rq_notes {
	struct rq_note *v;
	size_t n, cap;
};

/* One ring's notes: those its reader wrote since it last handed them
 * over (its own), and those handed over, applied from `head` (the
 * main thread's, under the watch's notes_lock). */
struct rq_journal {
	_Alignas(64) struct rq_notes local;
	struct rq_notes shared;
	size_t head;
};

/* Sets the notes up on a watch with a runqueue spec: 0 or -ENOMEM. */
int rqnotes_init(struct trig_watch *w);
void rqnotes_free(struct trig_watch *w);

/* A record of CPU cpu's ring, noted by the ring's reader. */
void rqnotes_switch(struct trig_watch *w, uint32_t cpu,
		    const struct btr_switch *r);
void rqnotes_waking(struct trig_watch *w, uint32_t cpu,
		    const struct btr_wakeup *r);
void rqnotes_exit(struct trig_watch *w, uint32_t cpu, int32_t tid,
		  uint64_t ts);

/* The notes of the rings cpus[0..n) handed over (their reader has read
 * them up to its frontier); every ring's with cpus NULL (no reader
 * running). */
void rqnotes_hand(struct trig_watch *w, const uint32_t *cpus, uint32_t n);

/* The notes handed over that are older than `past`, applied to the
 * counts in time order (the main thread). Past a bound of notes waiting
 * (a reader far behind the others) every note handed over is applied,
 * and that counted (rqnotes_inexact). */
void rqnotes_apply(struct trig_watch *w, uint64_t past);

/* Notes applied before a slow reader's (forced) or lost to memory. */
uint64_t rqnotes_inexact(struct trig_watch *w);

#endif
