/* The trigger watch with reader threads: the readers' notes of their
 * rings' records, merged in time order by the main thread and watched
 * there as one reader watches (see notes.h). */
#include "trigger/notes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "trigger/watch.h"
#include "util/grow.h"
#include "util/keyheap.h"

int notes_init(struct trig_watch *w)
{
	size_t n = w->ncpus ? w->ncpus : 1;

	w->notes = aligned_alloc(_Alignof(struct note_journal),
				 n * sizeof(*w->notes));
	if (w->notes) /* notes_free reads it */
		memset(w->notes, 0, n * sizeof(*w->notes));
	w->note_heap = calloc(n, sizeof(*w->note_heap));
	if (!w->notes || !w->note_heap) {
		notes_free(w);
		return -ENOMEM;
	}
	return 0;
}

void notes_free(struct trig_watch *w)
{
	uint32_t c;

	for (c = 0; w->notes && c < w->ncpus; c++) {
		free(w->notes[c].local.v);
		free(w->notes[c].shared.v);
		free(w->notes[c].mine.v);
	}
	free(w->notes);
	free(w->note_heap);
	w->notes = NULL;
	w->note_heap = NULL;
}

/* Room for k more notes in l; false: out of memory. */
static bool room(struct note_list *l, size_t k)
{
	return !grow_array((void **)&l->v, &l->cap, l->n + k, sizeof(*l->v),
			   256);
}

/* Appends from's notes to to's (emptying from): its buffer taken whole
 * when to has none. false: out of memory, from's notes not moved. */
static bool move_notes(struct note_list *to, struct note_list *from)
{
	if (!to->n) {
		struct note_list t = *to;

		*to = *from;
		*from = t;
		return true;
	}
	if (!room(to, from->n))
		return false;
	memcpy(&to->v[to->n], from->v, from->n * sizeof(*from->v));
	to->n += from->n;
	from->n = 0;
	return true;
}

void notes_record(struct trig_watch *w, uint32_t cpu, const void *rec,
		  size_t len)
{
	const struct btr_hdr *h = rec;
	struct note_list *l;
	struct watch_note *n;

	if (len < sizeof(*h) || cpu >= w->ncpus)
		return;
	switch (h->type) {
	case BTR_REC_SWITCH:
	case BTR_REC_SWITCH_BLOCKED:
	case BTR_REC_WAKING:
	case BTR_REC_WAKEUP_NEW:
	case BTR_REC_FREE:
		break;
	default: /* not the watch's */
		return;
	}
	l = &w->notes[cpu].local;
	if (!room(l, 1)) {
		__atomic_add_fetch(&w->notes_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	n = &l->v[l->n++];
	if (len > sizeof(n->r)) /* a SWITCH_BLOCKED's switch part */
		len = sizeof(n->r);
	memcpy(&n->r, rec, len);
	n->cpu = cpu;
	n->len = (uint32_t)len;
}

void notes_hand(struct trig_watch *w, const uint32_t *cpus, uint32_t n)
{
	uint32_t i;

	pthread_mutex_lock(&w->notes_lock);
	for (i = 0; i < (cpus ? n : w->ncpus); i++) {
		uint32_t c = cpus ? cpus[i] : i;
		struct note_journal *j;

		if (c >= w->ncpus)
			continue;
		j = &w->notes[c];
		if (!j->local.n)
			continue;
		if (!move_notes(&j->shared, &j->local)) {
			__atomic_add_fetch(&w->notes_lost, j->local.n,
					   __ATOMIC_RELAXED);
			j->local.n = 0;
		}
	}
	pthread_mutex_unlock(&w->notes_lock);
}

/* The notes handed over, taken into the main thread's own lists. */
static void take_shared(struct trig_watch *w)
{
	uint32_t c;

	pthread_mutex_lock(&w->notes_lock);
	for (c = 0; c < w->ncpus; c++) {
		struct note_journal *j = &w->notes[c];
		size_t k = j->shared.n;

		if (!k) /* (mine is compacted after each apply: a list
			  * watched whole is empty, head 0) */
			continue;
		if (move_notes(&j->mine, &j->shared)) {
			w->notes_pending += k;
		} else {
			__atomic_add_fetch(&w->notes_lost, k,
					   __ATOMIC_RELAXED);
			j->shared.n = 0;
		}
	}
	pthread_mutex_unlock(&w->notes_lock);
}

/* Whether ring c has a note left older than past. */
static bool next_before(const struct trig_watch *w, uint32_t c,
			uint64_t past)
{
	const struct note_journal *j = &w->notes[c];

	return j->head < j->mine.n && j->mine.v[j->head].r.h.ts < past;
}

/* ring c's next note's time */
static uint64_t next_ts(const struct trig_watch *w, uint32_t c)
{
	return w->notes[c].mine.v[w->notes[c].head].r.h.ts;
}

void notes_apply(struct trig_watch *w, uint64_t past)
{
	/* the rings by their next note's time, then CPU */
	struct keyheap_ent *h = w->note_heap;
	uint32_t n = 0, c;
	bool forced;

	take_shared(w);
	forced = w->notes_pending > NOTES_PENDING_MAX;
	if (forced) {
		past = UINT64_MAX;
		w->notes_forced += w->notes_pending;
	}
	for (c = 0; c < w->ncpus; c++)
		if (next_before(w, c, past))
			h[n++] = (struct keyheap_ent){ next_ts(w, c), c };
	keyheap_make(h, n);
	/* until the hits' queue is half full: the caller takes them, and
	 * mutes their specs, before the next call watches more (a storm's
	 * hits, a pass's at once, are muted as with one reader, not lost to
	 * the queue) */
	while (n && (forced || w->qlen < QUEUE_MAX / 2)) {
		struct note_journal *j = &w->notes[h[0].idx];
		const struct watch_note *note = &j->mine.v[j->head++];

		trig_watch_own(w, note->cpu, &note->r, note->len);
		w->notes_pending--;
		if (next_before(w, h[0].idx, past))
			h[0].key = next_ts(w, h[0].idx);
		else
			h[0] = h[--n];
		keyheap_sift(h, n, 0);
	}
	for (c = 0; c < w->ncpus; c++) {
		struct note_journal *j = &w->notes[c];

		if (j->head == j->mine.n) {
			j->head = j->mine.n = 0;
		} else if (j->head > j->mine.n / 2) {
			memmove(j->mine.v, &j->mine.v[j->head],
				(j->mine.n - j->head) * sizeof(*j->mine.v));
			j->mine.n -= j->head;
			j->head = 0;
		}
	}
}

uint64_t notes_inexact(struct trig_watch *w)
{
	return w->notes_forced +
	       __atomic_load_n(&w->notes_lost, __ATOMIC_RELAXED);
}
