/* Trigger conditions from scheduler records (watch.h). */
#include "trigger/watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record.h"
#include "trigger/notes.h"
#include "util/log.h"

/* The range of a queue's counts (rq_gain) in which a gain changes no
 * spec, after it found thresholds lo (the largest it passes, -1: none) and
 * hi (the smallest it does not): from lo + 2 (a gain from lo or under
 * re-arms a spec) to hi, as its base (lowest count) and width less one.
 * Empty when hi is lo + 1: every gain checks. */
static void rq_range(int32_t lo, int32_t hi, int32_t *base, uint32_t *width)
{
	if (hi < lo + 2) { /* no count but INT32_MIN */
		*base = INT32_MIN;
		*width = 0;
		return;
	}
	*base = lo + 2;
	*width = (uint32_t)(hi - (lo + 2));
}

struct trig_watch *trig_watch_new(const struct trig_spec *specs, uint32_t n,
				  uint32_t ncpus)
{
	struct trig_watch *w;
	uint32_t i;

	if (ncpus > TRIG_CPUS_MAX)
		return NULL;
	/* aligned as its type says (calloc gives 16 bytes): the fields
	 * every record reads share one cache line */
	w = aligned_alloc(_Alignof(struct trig_watch), sizeof(*w));
	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->specs = specs;
	w->nspecs = n;
	w->ncpus = ncpus;
	w->min_latency = w->min_blocked = w->min_runqueue = UINT64_MAX;
	for (i = 0; i < n; i++) {
		switch (specs[i].kind) {
		case TRIG_LATENCY:
			if (specs[i].threshold < w->min_latency)
				w->min_latency = specs[i].threshold;
			break;
		case TRIG_BLOCKED:
		case TRIG_BLOCKED_D:
			w->blocked = true;
			if (specs[i].threshold < w->min_blocked)
				w->min_blocked = specs[i].threshold;
			break;
		case TRIG_RUNQUEUE:
			w->runqueue = true;
			if (specs[i].threshold < w->min_runqueue)
				w->min_runqueue = specs[i].threshold;
			break;
		case TRIG_NAMED:
			break;
		}
	}
	/* the only latency spec, if it has no comm=: its muted hits are
	 * counted inline (hit_latency) */
	w->lat_spec = UINT32_MAX;
	for (i = 0; i < n; i++) {
		if (specs[i].kind != TRIG_LATENCY)
			continue;
		if (w->lat_spec != UINT32_MAX || specs[i].comm[0]) {
			w->lat_spec = UINT32_MAX;
			break;
		}
		w->lat_spec = i;
	}
	w->min_off = w->min_latency < w->min_blocked ? w->min_latency
						      : w->min_blocked;
	w->rq_cpus = w->runqueue ? ncpus : 0;
	pthread_mutex_init(&w->notes_lock, NULL);
	/* BTR_TEST_WATCH_PAGED=1: the paged table, as where the one table
	 * is refused (tests) */
	w->table = MAP_FAILED;
	if (!getenv("BTR_TEST_WATCH_PAGED"))
		w->table = mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
	if (w->table == MAP_FAILED)
		w->table = NULL;
	/* 4 KiB pages, as the thread lines are touched, not 2 MiB ones */
	else if (madvise(w->table, TABLE_BYTES, MADV_NOHUGEPAGE))
		log_debug("thread table: no MADV_NOHUGEPAGE: %s",
			  strerror(errno));
	w->path = !w->table    ? PATH_ANY
		  : w->runqueue ? PATH_FAST
				: PATH_LEAN;
	w->own_path = w->path;
	w->cold_off = (w->table ? TABLE_BYTES : PAGE_BYTES) / 2;
	w->rq1 = calloc((size_t)ncpus + 1, sizeof(*w->rq1));
	w->rq_base = calloc(ncpus ? ncpus : 1, sizeof(*w->rq_base));
	w->rq_over = calloc((size_t)(ncpus ? ncpus : 1) * (n ? n : 1), 1);
	w->mute_until = calloc(n ? n : 1, sizeof(*w->mute_until));
	w->mute_suppressed = calloc(n ? n : 1, 1);
	if (!w->rq1 || !w->rq_base || !w->rq_over || !w->mute_until || !w->mute_suppressed) {
		trig_watch_free(w);
		return NULL;
	}
	/* the sink's width holds every count; a CPU's counts 1 to the
	 * smallest threshold (its count 0 is m UINT32_MAX: out of it) */
	w->rq1[0].width = UINT32_MAX;
	for (i = 1; i <= ncpus; i++) {
		rq_range(-1,
			 w->min_runqueue > INT32_MAX ? INT32_MAX
						     : (int32_t)w->min_runqueue,
			 &w->rq_base[i - 1], &w->rq1[i].width);
		w->rq1[i].m = (uint32_t)0 - (uint32_t)w->rq_base[i - 1];
	}
	return w;
}

void trig_watch_free(struct trig_watch *w)
{
	uint32_t i;

	if (!w)
		return;
	if (w->table)
		munmap(w->table, TABLE_BYTES);
	for (i = 0; i < TID_MAX >> PAGE_SHIFT; i++)
		if (w->pages[i])
			munmap(w->pages[i], PAGE_BYTES);
	notes_free(w);
	pthread_mutex_destroy(&w->notes_lock);
	free(w->rq1);
	free(w->rq_base);
	free(w->frontier);
	free(w->rq_over);
	free(w->mute_until);
	free(w->mute_suppressed);
	free(w);
}

/* How long after a reader's frontier a record older than it may still
 * come: one committed late (on PREEMPT_RT a BPF program can be preempted
 * between its reserve and its commit). */
#define FRONTIER_SLACK (10 * 1000000ull)

static void push(struct trig_watch *w, const struct trig_hit *h)
{
	if (w->qlen == QUEUE_MAX)
		w->overflow++;
	else
		w->queue[(w->qhead + w->qlen++) % QUEUE_MAX] = *h;
}

int trig_watch_readers(struct trig_watch *w, uint32_t n)
{
	free(w->frontier);
	notes_free(w);
	w->nreaders = 0;
	w->path = w->own_path;
	if (n < 2)
		return 0;
	w->frontier = calloc(n, sizeof(*w->frontier));
	if (!w->frontier || notes_init(w))
		return -ENOMEM;
	w->nreaders = n;
	w->path = PATH_NOTE;
	return 0;
}

void trig_watch_note(struct trig_watch *w, uint32_t cpu, const void *rec,
		     size_t len)
{
	notes_record(w, cpu, rec, len);
}

void trig_watch_frontier(struct trig_watch *w, uint32_t reader, uint64_t ts,
			 const uint32_t *cpus, uint32_t n)
{
	if (reader >= w->nreaders)
		return;
	notes_hand(w, cpus, n);
	__atomic_store_n(&w->frontier[reader], ts, __ATOMIC_RELEASE);
}

uint64_t trig_watch_inexact(struct trig_watch *w)
{
	return w->notes ? notes_inexact(w) : 0;
}

/* Whether a hit of spec ending at `end` is muted: then it is counted
 * and goes no further. */
static bool muted(struct trig_watch *w, uint32_t spec, uint64_t end)
{
	if (end >= w->mute_until[spec])
		return false;
	w->muted[w->mute_suppressed[spec]]++;
	return true;
}

void trig_watch_mute(struct trig_watch *w, uint32_t spec, uint64_t until,
		     bool suppressed)
{
	if (spec >= w->nspecs)
		return;
	w->mute_suppressed[spec] = suppressed;
	w->mute_until[spec] = until;
	if (spec == w->lat_spec)
		w->lat_mute = until;
}

void trig_watch_muted(struct trig_watch *w, uint64_t *merged,
		      uint64_t *suppressed)
{
	*merged += w->muted[0];
	*suppressed += w->muted[1];
	w->muted[0] = w->muted[1] = 0;
}

/* Moves up to max queued hits into out. */
static size_t take_queued(struct trig_watch *w, struct trig_hit *out,
			  size_t max, uint64_t *overflow)
{
	size_t n = 0;

	while (n < max && w->qlen) {
		out[n++] = w->queue[w->qhead];
		w->qhead = (w->qhead + 1) % QUEUE_MAX;
		w->qlen--;
	}
	*overflow += w->overflow;
	w->overflow = 0;
	return n;
}

size_t trig_watch_take(struct trig_watch *w, struct trig_hit *out, size_t max,
		       uint64_t *overflow)
{
	uint64_t past = UINT64_MAX;
	uint32_t i;

	/* with reader threads: the notes older than every reader's
	 * frontier, less a slack, watched first */
	for (i = 0; i < w->nreaders; i++) {
		uint64_t f = __atomic_load_n(&w->frontier[i], __ATOMIC_ACQUIRE);

		past = f < past ? f : past;
	}
	if (w->notes) {
		past = past > FRONTIER_SLACK ? past - FRONTIER_SLACK : 0;
		notes_apply(w, past);
	}
	return take_queued(w, out, max, overflow);
}

size_t trig_watch_take_rest(struct trig_watch *w, struct trig_hit *out,
			    size_t max, uint64_t *overflow)
{
	if (w->notes) { /* the readers stopped: every ring's notes */
		notes_hand(w, NULL, 0);
		notes_apply(w, UINT64_MAX);
	}
	return take_queued(w, out, max, overflow);
}

/* Whether the n bytes at p are all zero. */
static bool all_zero(const void *p, size_t n)
{
	const uint64_t *q = p;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n / sizeof(*q); i++)
		v |= q[i];
	return !v;
}

/* Byte offset off of the table (one or paged), NULL where no page is. */
static void *table_at(struct trig_watch *w, size_t off)
{
	if (w->table)
		return (char *)w->table + off;
	return w->pages[off / PAGE_BYTES]
		       ? (char *)w->pages[off / PAGE_BYTES] + off % PAGE_BYTES
		       : NULL;
}

/* Pages [at, at + n) of the table, all in one of its PAGE_BYTES blocks:
 * those in memory and all zero given back. */
static size_t sweep_block(struct trig_watch *w, size_t page, size_t at,
			  size_t n)
{
	unsigned char in[PAGE_BYTES / 4096];
	char *p;
	size_t i, done = 0;

	p = table_at(w, at * page);
	if (p && !mincore(p, n * page, in))
		for (i = 0; i < n; i++)
			if ((in[i] & 1) && all_zero(p + i * page, page) &&
			    !madvise(p + i * page, page, MADV_DONTNEED))
				done++;
	return done;
}

size_t trig_watch_sweep(struct trig_watch *w, size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t total = TABLE_BYTES / page, per = PAGE_BYTES / page, done = 0;

	if (pages > total)
		pages = total;
	while (pages) {
		size_t at = w->sweep_at;
		size_t n = per - at % per; /* to the end of its block */

		if (n > pages)
			n = pages;
		done += sweep_block(w, page, at, n);
		w->sweep_at = (at + n) % total;
		pages -= n;
	}
	return done;
}

/* The bytes of [p, p + len) (page-aligned) in memory. */
static size_t resident(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = len / page, i, k = 0;
	unsigned char *vec = malloc(n ? n : 1);

	if (!vec || mincore(p, len, vec)) {
		free(vec);
		return 0;
	}
	for (i = 0; i < n; i++)
		k += vec[i] & 1;
	free(vec);
	return k * page;
}

size_t trig_watch_resident(struct trig_watch *w, bool *paged)
{
	size_t n = 0;
	uint32_t i;

	*paged = !w->table;
	if (w->table)
		return resident(w->table, TABLE_BYTES);
	for (i = 0; i < TID_MAX >> PAGE_SHIFT; i++)
		if (w->pages[i])
			n += resident(w->pages[i], PAGE_BYTES);
	return n;
}

static bool comm_ok(const struct trig_spec *s, const char *comm)
{
	return !s->comm[0] || !strncmp(s->comm, comm, TRIG_COMM_LEN);
}

/* A wait or sleep from start to end: the specs of kind k (or k2) it
 * passes are hits. Called only past the smallest threshold. The hit is
 * made only for a spec not muted: in a storm, most are. */
void trig_watch_hit(struct trig_watch *w, enum trig_kind k, enum trig_kind k2,
		    int32_t tid, uint32_t cpu, uint64_t start, uint64_t end,
		    char state, const char *comm)
{
	uint64_t value = end - start;
	uint32_t i;

	for (i = 0; i < w->nspecs; i++) {
		const struct trig_spec *s = &w->specs[i];
		struct trig_hit h;

		if ((s->kind != k && s->kind != k2) || value < s->threshold ||
		    !comm_ok(s, comm) || muted(w, i, end))
			continue;
		h = (struct trig_hit){ .spec = i, .tid = tid, .cpu = cpu,
				       .start = start, .end = end,
				       .value = value, .state = state };
		memcpy(h.comm, comm, TRIG_COMM_LEN);
		push(w, &h);
	}
}

/* The queue of cpu gained a thread, tid: its count left the range in
 * which a gain changes no spec (rq_gain, rq_range). A spec the count went
 * under since (it was at most n - 1 before this gain) re-arms; one it now
 * passes fires, once until then. The range is set anew, and the count
 * rebased on it. */
void trig_watch_rq_check(struct trig_watch *w, int32_t cpu, int32_t tid,
			 uint64_t ts, const char *comm)
{
	struct rq *q = &w->rq1[cpu + 1];
	int32_t lo = -1, hi = INT32_MAX, base, nbase;
	int32_t n, was;
	uint32_t i, width;

	base = w->rq_base[cpu];
	was = n = (int32_t)(q->m + (uint32_t)base);
	if (n < 1) /* losses of threads it never gained */
		n = 1;
	for (i = 0; i < w->nspecs; i++) {
		const struct trig_spec *s = &w->specs[i];
		uint8_t *over = &w->rq_over[(size_t)cpu * w->nspecs + i];
		struct trig_hit h;
		int32_t thr = (int32_t)s->threshold;
		uint8_t was_over;

		if (s->kind != TRIG_RUNQUEUE)
			continue;
		if (n - 1 <= thr)
			*over = 0;
		if (n <= thr) {
			hi = thr < hi ? thr : hi;
			continue;
		}
		lo = thr > lo ? thr : lo;
		was_over = *over;
		*over = 1;
		if (was_over || !comm_ok(s, comm) || muted(w, i, ts))
			continue;
		h = (struct trig_hit){ .spec = i, .tid = tid,
				       .cpu = (uint32_t)cpu, .start = ts,
				       .end = ts, .value = (uint64_t)n,
				       .state = 'R' };
		memcpy(h.comm, comm, TRIG_COMM_LEN);
		push(w, &h);
	}
	rq_range(lo, hi, &nbase, &width);
	q->m += (uint32_t)n - (uint32_t)was + (uint32_t)base - (uint32_t)nbase;
	w->rq_base[cpu] = nbase;
	q->width = width;
}

/* Page p of the paged table, mapped on first sight (NULL: out of
 * memory). */
static struct tstate *map_page(struct trig_watch *w, uint32_t p)
{
	void *m = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	w->pages[p] = m;
	return m;
}

/* tstate_of without the one table: its line prefetched too. */
struct tstate *trig_watch_paged(struct trig_watch *w, int32_t tid)
{
	uint32_t p = (uint32_t)tid >> PAGE_SHIFT;
	struct tstate *page = w->pages[p];
	struct tstate *t;

	if (!page && !(page = map_page(w, p)))
		return NULL;
	t = &page[(uint32_t)tid & ((1u << PAGE_SHIFT) - 1)];
	__builtin_prefetch(t, 1);
	return t;
}

/* t's cold part to read, NULL when it holds nothing (all zero): most
 * slow paths need not load its line then (on hackbench, a preempted
 * thread's long wait stalled on it). */
static struct tcold *cold_of(const struct trig_watch *w, struct tstate *t)
{
	return t->cold ? COLD(w, t) : NULL;
}

/* t's cold part to write: marked as holding what (COLD_*). */
static struct tcold *cold_set(const struct trig_watch *w, struct tstate *t,
			      uint16_t what)
{
	t->cold |= what;
	return COLD(w, t);
}

/* The marks after a change: the cold part is given up where it holds
 * nothing any more. */
static void cold_check(struct tstate *t, const struct tcold *c)
{
	t->cold = (uint16_t)((c->p_in ? COLD_EPISODE : 0) |
			     (c->ahead ? COLD_AHEAD : 0));
}

/* The episode kept apart is over: checked, or given up for a newer. */
static void episode_done(struct tstate *t, struct tcold *c)
{
	c->p_out = c->p_in = 0;
	c->p_st = c->p_lat = 0;
	cold_check(t, c);
}

/* Keeps the episode from out (0: its switch-out unread) to in apart until
 * its other records are read; lat: its latency was checked already. */
static void episode_keep(const struct trig_watch *w, struct tstate *t,
			 uint64_t out, uint8_t st, uint64_t in, bool lat)
{
	struct tcold *c = cold_set(w, t, COLD_EPISODE);

	c->p_out = out;
	c->p_st = st;
	c->p_in = in;
	c->p_lat = lat;
}

/* The kept episode has its switch-out and a waking at ts (0: none, a
 * preempted thread): both checks, then it is done. */
static void episode_check(struct trig_watch *w, struct tstate *t,
			  struct tcold *c, int32_t tid, uint32_t cpu,
			  uint64_t ts, const char *comm)
{
	uint64_t start = c->p_st == 'R' ? c->p_out : ts;

	if (c->p_st == 'S' || c->p_st == 'D')
		hit_blocked(w, tid, cpu, c->p_out, ts, (char)c->p_st, comm);
	if (!c->p_lat)
		hit_latency(w, tid, cpu, start, c->p_in, comm);
	episode_done(t, c);
}

/* A waking not in order after its thread's switch-out: of a thread
 * running (or whose sleep's switch-out is unread), or read after the
 * switch-in it led to, or older than the switch-out read. */
void trig_watch_slow_wake(struct trig_watch *w, struct tstate *t,
			  int32_t tid, uint32_t cpu, int32_t qcpu, uint64_t ts,
			  const char *comm)
{
	struct tcold *c = cold_of(w, t);

	if (c && c->p_in && ts <= c->p_in && ts >= c->p_out) {
		if (c->p_out && c->p_st != P_AFTER) { /* the kept episode's waking */
			episode_check(w, t, c, tid, cpu, ts, comm);
			return;
		}
		/* its switch-out is unread yet: it pairs the waking */
		if (ts > t->wake)
			t->wake = ts;
		return;
	}
	if (ts >= t->in && t->in > t->out) {
		/* running, as read: woken before its switch-out is read (or
		 * before it slept at all); that switch-out pairs it */
		if (ts > t->wake)
			t->wake = ts;
		runnable(w, t, tid, qcpu, ts, comm);
	} else if (ts > t->wake && t->wake > t->out && t->out >= t->in &&
		   (!c || c->ahead <= t->out)) {
		/* woken again while, as read, still off the CPU after its
		 * last waking: the switch-in that ended that wait, and the
		 * switch-out of the sleep this waking ends, are still unread
		 * (committed late, or notes watched out of order). Kept for that sleep (the
		 * first such: one sleep ahead at most), checked at its
		 * switch-in */
		cold_set(w, t, COLD_AHEAD)->ahead = ts;
	}
	/* else a waking of this thread read already, or one older than a
	 * switch-in or switch-out read (it woke the thread before it ran
	 * or while it still ran): it starts nothing */
}

/* A switch-out read after a later switch-in of its thread, or after the
 * waking that ended its sleep. */
void trig_watch_slow_out(struct trig_watch *w, struct tstate *t, int32_t tid,
			 uint32_t cpu, uint64_t ts, uint32_t raw,
			 const char *comm)
{
	uint8_t st = out_state(raw);
	struct tcold *c = cold_of(w, t);

	if (ts >= t->in) { /* in order, its waking read first */
		t->out = ts;
		t->out_raw = raw;
		if (st == 'S' || st == 'D')
			hit_blocked(w, tid, cpu, ts, t->wake, (char)st, comm);
		return;
	}
	if (ts > t->out) { /* the thread runs again: older than t->in */
		t->out = ts;
		t->out_raw = raw;
	}
	if (!c || !c->p_in || ts >= c->p_in || ts <= c->p_out)
		return; /* no episode kept that this one ends */
	/* the kept episode ends at p_in and begins at its last switch-out
	 * before that: this one, or one read before it if later (a
	 * switch-out inside the episode as kept shows that the thread ran
	 * after p_out: paired with p_out, a waking would make a sleep of the
	 * run in between) */
	c->p_out = ts;
	c->p_st = st;
	if (c->p_in - ts < w->min_off) {
		episode_done(t, c); /* too short to pass any threshold */
		return;
	}
	if (st == 'R') {
		episode_check(w, t, c, tid, cpu, 0, comm);
	} else if (t->wake >= ts && t->wake <= c->p_in) {
		episode_check(w, t, c, tid, cpu, t->wake, comm);
	} else if (c->ahead >= ts && c->ahead <= c->p_in) {
		/* its waking was read ahead, kept for the sleep after the one
		 * the last waking ended: this one */
		uint64_t a = c->ahead;

		c->ahead = 0;
		if (a > t->wake)
			t->wake = a;
		episode_check(w, t, c, tid, cpu, a, comm);
	}
	/* else its waking is still unread */
}

/* A switch-in with a long off-CPU time before it, in order after its
 * switch-out; or one with no switch-out read since the thread's last
 * switch-in (a new thread, or its switch-out in a ring read later). */
void trig_watch_slow_in(struct trig_watch *w, struct tstate *t, int32_t tid,
			uint32_t cpu, uint64_t ts, uint64_t prev_in,
			const char *comm)
{
	struct tcold *c = cold_of(w, t);

	/* its first case (in order) is inlined in switch_in too, for the
	 * waits that need no look at the cold part: the two must agree */
	if (t->out >= prev_in && t->out && ts >= t->out) {
		uint8_t st = out_state(t->out_raw);

		if (c && c->ahead && c->ahead < t->out) {
			/* a waking kept for a sleep whose switch-out came
			 * before it: of none (this episode began after it),
			 * and no later one can use it. Given up, or the cold
			 * part would stay marked and every long wait of the
			 * thread come this way (on hackbench, nearly all did) */
			c->ahead = 0;
			cold_check(t, c);
			c = cold_of(w, t);
		}

		if (!(t->wake >= t->out && t->wake <= ts) &&
		    c && c->ahead >= t->out && c->ahead <= ts) {
			/* its waking was read ahead of its switch-out */
			t->wake = c->ahead;
			c->ahead = 0;
			cold_check(t, c);
			if (st == 'S' || st == 'D')
				hit_blocked(w, tid, cpu, t->out, t->wake,
					    (char)st, comm);
		}
		if (st == 'R') {
			hit_latency(w, tid, cpu, t->out, ts, comm);
		} else if (t->wake >= t->out && t->wake <= ts) {
			hit_latency(w, tid, cpu, t->wake, ts, comm);
		} else { /* its waking is unread */
			episode_keep(w, t, t->out, st, ts, false);
		}
		return;
	}
	if (ts < prev_in) {
		/* older than a switch-in read: nothing to pair. If inside the
		 * episode kept, the thread ran in it (its end was read
		 * first): from a switch-out read, the episode ends here,
		 * and is checked at its waking if still long enough; from
		 * one unread, it begins after ts (P_AFTER: a switch-out older
		 * than ts would otherwise pair as its start, and a waking make
		 * a sleep of the run at ts) */
		if (c && c->p_in && ts < c->p_in && ts > c->p_out) {
			if (c->p_out && c->p_st != P_AFTER) {
				/* its switch-out read: the episode ends here */
				c->p_in = ts;
				c->p_lat = 0;
				if (ts - c->p_out < w->min_off)
					episode_done(t, c);
			} else if (c->p_in - ts >= w->min_off) {
				/* unread: it begins after ts (and the wait checked
				 * for it, if any, began before: not its own) */
				c->p_out = ts;
				c->p_st = P_AFTER;
				c->p_lat = 0;
			} else {
				episode_done(t, c);
			}
		}
		return;
	}
	if (t->wake > prev_in && t->wake <= ts) /* woken since it last ran */
		hit_latency(w, tid, cpu, t->wake, ts, comm);
	/* the switch-out of this episode may come: kept if long enough */
	if (prev_in && ts - prev_in >= w->min_off)
		episode_keep(w, t, 0, 0, ts, t->wake > prev_in && t->wake <= ts);
}

void trig_watch_warm(struct trig_watch *w)
{
	uint32_t i;

	if (!w || !w->table)
		return;
	for (i = 0; i < RECENT_SET; i++)
		if (tid_tabled(w->recent[i]))
			__builtin_prefetch(&w->table[w->recent[i]], 1);
}
