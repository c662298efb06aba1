/* The trigger watch with reader threads. A wait or sleep is made of
 * records in several rings (a waking in the waker's CPU's, the switches
 * in the thread's own), which two readers read at their own pace: paired
 * as read, a reader ahead paired a waking with a switch-in of a later
 * cycle, and counted a queue's gains before its losses. So each reader
 * notes its rings' records that the watch takes (no lock), hands the
 * notes over with its frontier, and the main thread merges them in time
 * order once every reader is past them and watches them as one reader
 * reading every ring in time order does: the same hits. Internal to
 * trigger/watch.c (tests read its bound). */
#ifndef BTR_TRIGGER_NOTES_H
#define BTR_TRIGGER_NOTES_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct trig_watch;

/* Notes handed over and not watched yet, at most, whatever the CPU count
 * (88 bytes each: 44 MiB), waiting for a reader far behind the others:
 * past it they are watched in the order they have, and that counted. */
#define NOTES_PENDING_MAX ((size_t)1 << 19)

/* One record as the watch takes it: a switch (of a SWITCH_BLOCKED, its
 * switch part), a waking, a new task's waking, a free. */
struct watch_note {
	union {
		struct btr_hdr h;
		struct btr_switch sw;
		struct btr_wakeup wk;
		struct btr_exit ex;
	} r;
	uint32_t cpu, len; /* its ring, and its bytes in r */
};

struct note_list {
	struct watch_note *v;
	size_t n, cap;
};

/* One ring's notes: those its reader wrote since it last handed them over
 * (its own), those handed over (under the watch's notes_lock), and those
 * the main thread took, watched from `head` (its own). */
struct note_journal {
	_Alignas(64) struct note_list local;
	struct note_list shared;
	struct note_list mine;
	size_t head;
};

/* Sets the notes up for the watch's ncpus rings: 0 or -ENOMEM. */
int notes_init(struct trig_watch *w);
void notes_free(struct trig_watch *w);

/* A record of CPU cpu's ring, noted by the ring's reader if the watch
 * takes it (others are let be). */
void notes_record(struct trig_watch *w, uint32_t cpu, const void *rec,
		  size_t len);

/* The notes of the rings cpus[0..n) handed over (their reader has read
 * them up to its frontier); every ring's with cpus NULL (no reader
 * running). */
void notes_hand(struct trig_watch *w, const uint32_t *cpus, uint32_t n);

/* The notes handed over that are older than `past`, watched in time order
 * (the main thread), until the hits' queue is half full. Past
 * NOTES_PENDING_MAX waiting, every note handed over is watched, and that
 * counted (notes_inexact). */
void notes_apply(struct trig_watch *w, uint64_t past);

/* Notes watched before a slow reader's older ones (forced), or lost to
 * memory. */
uint64_t notes_inexact(struct trig_watch *w);

#endif
