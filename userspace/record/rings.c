/* Creating, mapping and draining the per-CPU BPF rings (rings.h). The
 * layout is the kernel's BPF ring buffer ABI: a consumer page (ours to
 * write), a producer page, then the data pages mapped twice in a row so a
 * record that wraps reads as one piece; each record starts with a 32-bit
 * length whose top bits say busy (not committed yet) or discarded, and
 * records are 8-byte aligned after their 8-byte header. */
#include "record/rings.h"

#include "record/privileges.h"
#include "util/log.h"
#include "util/keyheap.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#define MAX_EVENTS 64

struct ring {
	unsigned long *consumer;       /* consumer page */
	const unsigned long *producer; /* producer page, then data twice */
	const uint8_t *data;
	uint64_t mask;
	size_t map_len;                /* of producer + data */
	int fd;
	int owner_epfd;                /* a reader's epoll set with it, -1 */
	uint64_t grow_to;              /* atomic: a bigger size asked, 0 */
	unsigned long prod_seen;       /* the producer position last read
					* by a merged drain (its drainer's) */
};

struct rings {
	struct ring *r;
	uint32_t n;
	int epfd;
	int outer_fd;
	size_t page;
	rings_record_fn fn;
	void *ctx;
	uint64_t grown;       /* atomic: rings grown */
	uint64_t grow_failed; /* atomic: grows that kept the old ring */
};

static int map_ring(struct rings *rs, struct ring *r, uint64_t size)
{
	void *p;

	p = mmap(NULL, rs->page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->consumer = p;
	r->map_len = rs->page + 2 * size;
	p = mmap(NULL, r->map_len, PROT_READ, MAP_SHARED, r->fd,
		 (off_t)rs->page);
	if (p == MAP_FAILED) {
		int e = -errno;

		munmap(r->consumer, rs->page);
		r->consumer = NULL;
		return e;
	}
	r->producer = p;
	r->data = (const uint8_t *)p + rs->page;
	r->mask = size - 1;
	return 0;
}

/* A ring map of `size` bytes for CPU id i, in r->fd (-1 on failure). */
static void create_ring(struct ring *r, uint32_t i, uint64_t size)
{
	char name[32];

	snprintf(name, sizeof(name), "btr_ring%u", i);
	r->fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, name, 0, 0,
			       (uint32_t)size, NULL);
}

static int add_ring(struct rings *rs, int outer_fd, uint32_t i, uint64_t size,
		    char *err, size_t errlen)
{
	struct ring *r = &rs->r[i];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
	int e;

	create_ring(r, i, size);
	if (r->fd < 0 || bpf_map_update_elem(outer_fd, &i, &r->fd, 0)) {
		e = -errno;
		snprintf(err, errlen,
			 "cannot create the ring buffer of CPU %u (%llu bytes): %s",
			 i, (unsigned long long)size, strerror(errno));
		return e;
	}
	e = map_ring(rs, r, size);
	if (!e && epoll_ctl(rs->epfd, EPOLL_CTL_ADD, r->fd, &ev))
		e = -errno;
	if (e)
		snprintf(err, errlen, "cannot map ring buffer: %s", strerror(-e));
	return e;
}

struct rings *rings_new(int outer_fd, uint32_t n, const uint64_t *sizes,
			rings_record_fn fn, void *ctx, char *err,
			size_t errlen)
{
	struct rings *rs = calloc(1, sizeof(*rs));
	uint32_t i;

	if (!rs || !(rs->r = calloc(n ? n : 1, sizeof(*rs->r)))) {
		snprintf(err, errlen, "out of memory");
		free(rs);
		return NULL;
	}
	rs->n = n;
	rs->outer_fd = outer_fd;
	rs->fn = fn;
	rs->ctx = ctx;
	rs->page = (size_t)sysconf(_SC_PAGESIZE);
	rs->epfd = -1;
	for (i = 0; i < n; i++)
		rs->r[i].fd = rs->r[i].owner_epfd = -1;
	rs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rs->epfd < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (add_ring(rs, outer_fd, i, sizes[i], err, errlen))
			goto fail;
	return rs;
fail:
	rings_free(rs);
	return NULL;
}

/* The bytes a record of body bytes takes in the ring. */
static inline unsigned long rec_span(uint32_t body)
{
	return (body + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

/* The record of ring r at consumer position *cons or, past discarded ones
 * (consumed on the way, *cons moved), the first one after: its body and
 * time (the u64 it starts with; 0 for a shorter one). NULL when there is
 * none yet (empty, or the next one being written). Only r's drainer. */
static inline const uint8_t *ring_head(struct ring *r, unsigned long *cons,
				       uint32_t *body, uint64_t *ts)
{
	for (;;) {
		const uint32_t *hdr;
		uint32_t len;

		if (*cons >= r->prod_seen) {
			r->prod_seen = __atomic_load_n(r->producer,
						       __ATOMIC_ACQUIRE);
			if (*cons >= r->prod_seen)
				return NULL;
		}
		hdr = (const uint32_t *)(r->data + (*cons & r->mask));
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			return NULL;
		*body = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			const uint8_t *rec = (const uint8_t *)hdr +
					     BPF_RINGBUF_HDR_SZ;

			*ts = 0;
			if (*body >= sizeof(*ts))
				memcpy(ts, rec, sizeof(*ts));
			return rec;
		}
		*cons += rec_span(*body);
		__atomic_store_n(r->consumer, *cons, __ATOMIC_RELEASE);
	}
}

/* The ring's line PREFETCH_AHEAD bytes on from consumer position cons,
 * if written: its records are read as they come, each a line or two, and
 * the producer wrote them from another CPU. Measured on hackbench (2-CPU
 * machine, 8 rounds side by side): 0.94x of the reader's CPU without it,
 * read ring by ring or merged. */
#define PREFETCH_AHEAD 256
static inline void ring_prefetch(const struct ring *r, unsigned long cons)
{
	if (cons + PREFETCH_AHEAD < r->prod_seen)
		__builtin_prefetch(r->data + ((cons + PREFETCH_AHEAD) & r->mask));
}

/* Reads one ring to empty (records committed while it reads included),
 * keeping the callback's first error in *err. */
static int drain_ring(struct rings *rs, uint32_t idx, rings_record_fn fn,
		      void *ctx, int *err)
{
	struct ring *r = &rs->r[idx];
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	const uint8_t *rec;
	uint32_t body;
	uint64_t ts; /* not used here: its read goes with the inlining */
	int n = 0;

	while ((rec = ring_head(r, &cons, &body, &ts))) {
		int e = fn(ctx, idx, rec, body);

		if (e && !*err)
			*err = e;
		n++;
		cons += rec_span(body);
		__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
		ring_prefetch(r, cons);
	}
	return n;
}

/* The idle check: no call, no record header touched. */
static bool ring_empty(const struct ring *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) == *r->consumer;
}

static void unmap_ring(struct rings *rs, struct ring *r)
{
	if (r->producer)
		munmap((void *)r->producer, r->map_len);
	if (r->consumer)
		munmap(r->consumer, rs->page);
	if (r->fd >= 0)
		close(r->fd);
}

/* Ring idx grows (its CPU came online with a one-page ring): a new ring
 * takes the old one's place in the array of maps, so the programs reserve
 * in it from their next run; the old one is drained to its last record
 * (one being written is committed within microseconds: the program runs
 * with preemption off) before it goes, so the CPU's records keep their
 * order. On the thread that drains the ring. A failure keeps the old ring
 * (its drops are counted as before). Returns the records read. */
static int grow_ring(struct rings *rs, uint32_t idx, rings_record_fn fn,
		     void *ctx, int *err)
{
	struct ring *r = &rs->r[idx], nr = { .fd = -1 };
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = idx };
	uint64_t size = __atomic_exchange_n(&r->grow_to, 0, __ATOMIC_ACQ_REL);
	int n = 0, tries;

	/* CAP_BPF for the moment of the creation (kept permitted for it) */
	privileges_bpf(true);
	create_ring(&nr, idx, size);
	privileges_bpf(false);
	if (nr.fd < 0 || map_ring(rs, &nr, size) ||
	    bpf_map_update_elem(rs->outer_fd, &idx, &nr.fd, 0)) {
		unmap_ring(rs, &nr);
		__atomic_add_fetch(&rs->grow_failed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	for (tries = 0; tries < 1000000; tries++) {
		n += drain_ring(rs, idx, fn, ctx, err);
		if (ring_empty(r))
			break;
		sched_yield();
	}
	nr.owner_epfd = r->owner_epfd;
	epoll_ctl(rs->epfd, EPOLL_CTL_DEL, r->fd, NULL);
	epoll_ctl(rs->epfd, EPOLL_CTL_ADD, nr.fd, &ev);
	if (r->owner_epfd >= 0) {
		epoll_ctl(r->owner_epfd, EPOLL_CTL_DEL, r->fd, NULL);
		epoll_ctl(r->owner_epfd, EPOLL_CTL_ADD, nr.fd, &ev);
	}
	unmap_ring(rs, r);
	*r = nr;
	__atomic_add_fetch(&rs->grown, 1, __ATOMIC_RELAXED);
	log_debug("ring %u grown to %llu bytes", idx, (unsigned long long)size);
	return n;
}

/* Ring idx: a grow asked for, then what it holds. */
static int drain_one(struct rings *rs, uint32_t idx, rings_record_fn fn,
		     void *ctx, int *err)
{
	struct ring *r = &rs->r[idx];
	int n = 0;

	if (__atomic_load_n(&r->grow_to, __ATOMIC_RELAXED))
		n = grow_ring(rs, idx, fn, ctx, err);
	if (!ring_empty(r))
		n += drain_ring(rs, idx, fn, ctx, err);
	return n;
}

void rings_request_grow(struct rings *rs, uint32_t i, uint64_t size)
{
	if (i < rs->n)
		__atomic_store_n(&rs->r[i].grow_to, size, __ATOMIC_RELEASE);
}

uint64_t rings_grown(const struct rings *rs, uint64_t *failed)
{
	*failed = __atomic_load_n(&rs->grow_failed, __ATOMIC_RELAXED);
	return __atomic_load_n(&rs->grown, __ATOMIC_RELAXED);
}

int rings_drain_range(struct rings *rs, uint32_t first, uint32_t n)
{
	uint32_t i, end = first + n > rs->n ? rs->n : first + n;
	int total = 0, e = 0;

	for (i = first; i < end; i++)
		total += drain_one(rs, i, rs->fn, rs->ctx, &e);
	return e ? e : total;
}

int rings_drain_list(struct rings *rs, const uint32_t *idx, uint32_t n,
		     rings_record_fn fn, void *ctx)
{
	uint32_t i;
	int total = 0, e = 0;

	for (i = 0; i < n; i++)
		if (idx[i] < rs->n)
			total += drain_one(rs, idx[i], fn, ctx, &e);
	return e ? e : total;
}

/* The time of ring r's next record to hand out in *ts; false when there
 * is none yet. */
static bool ring_peek(struct ring *r, uint64_t *ts)
{
	unsigned long cons = *r->consumer; /* its drainer's own */
	uint32_t body;

	return ring_head(r, &cons, &body, ts) != NULL;
}

/* A ring in a merged drain: where it is read to, and its next record
 * (NULL: none to give now), its header read. */
struct cursor {
	struct ring *r;
	unsigned long cons;
	const uint8_t *rec;
	uint32_t body, idx;
	uint64_t ts;
};

/* Ring idx from its consumer position. */
static void cursor_open(struct rings *rs, struct cursor *c, uint32_t idx)
{
	c->r = &rs->r[idx];
	c->idx = idx;
	c->cons = *c->r->consumer; /* its drainer's own */
	c->rec = ring_head(c->r, &c->cons, &c->body, &c->ts);
}

/* Hands out c's records in a row, from its next one (the oldest, by the
 * caller), while their times are at most `until`: one read of each
 * header, as drain_ring. true when it stopped on a later record, then
 * c's next; false when the ring has none to give now.
 * Inlined: in a busy merge the rings take turns every few records, so
 * what a turn costs besides its records counts as much as they do. */
static inline __attribute__((always_inline)) bool
ring_run(struct cursor *c, uint64_t until, rings_record_fn fn, void *ctx,
	 int *err, int *total)
{
	struct ring *r = c->r;
	unsigned long cons = c->cons;
	const uint8_t *rec = c->rec;
	uint32_t body = c->body, idx = c->idx;
	uint64_t ts = 0;
	int n = 0;

	while (rec) {
		int e = fn(ctx, idx, rec, body);

		if (__builtin_expect(e != 0, 0) && !*err)
			*err = e;
		n++;
		cons += rec_span(body);
		__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
		ring_prefetch(r, cons);
		rec = ring_head(r, &cons, &body, &ts);
		if (rec && ts > until)
			break;
	}
	*c = (struct cursor){ r, cons, rec, body, idx, ts };
	*total += n;
	return rec != NULL;
}

/* Two rings with records (a small machine, or what is left of more):
 * the one whose next record is older hands its records out until one is
 * later than the other's next, whose turn it then is; a turn is a swap
 * of cursors (under hackbench the turns come every few records). Stops
 * when a ring has nothing more to give now: the other one's index in
 * *rest, its next record not consumed. */
static void merge_two(struct rings *rs, uint32_t i0, uint32_t i1,
		      rings_record_fn fn, void *ctx, int *err, int *total,
		      uint32_t *rest)
{
	struct cursor c[2], *x = &c[0], *y = &c[1], *t;

	cursor_open(rs, &c[0], i0);
	cursor_open(rs, &c[1], i1);
	if (!x->rec || (y->rec && y->ts < x->ts)) {
		x = &c[1];
		y = &c[0];
	}
	while (y->rec && ring_run(x, y->ts, fn, ctx, err, total)) {
		t = x;
		x = y;
		y = t;
	}
	*rest = x->rec ? x->idx : y->idx;
}

int rings_drain_merged(struct rings *rs, const uint32_t *idx, uint32_t n,
		       struct keyheap_ent *h, rings_record_fn fn, void *ctx)
{
	uint32_t i, k = 0;
	int total = 0, e = 0;
	uint64_t ts;

	for (i = 0; i < n; i++) {
		struct ring *r;

		if (idx[i] >= rs->n)
			continue;
		r = &rs->r[idx[i]];
		if (__atomic_load_n(&r->grow_to, __ATOMIC_RELAXED))
			total += grow_ring(rs, idx[i], fn, ctx, &e);
		if (!ring_empty(r) && ring_peek(r, &ts))
			h[k++] = (struct keyheap_ent){ ts, idx[i] };
	}
	keyheap_make(h, k);
	while (k > 2) {
		struct cursor c;
		uint64_t until = h[1].key < h[2].key ? h[1].key : h[2].key;

		/* the oldest ring's records up to the next ring's head go in
		 * a row: rings mostly take turns in long stretches */
		cursor_open(rs, &c, h[0].idx);
		if (ring_run(&c, until, fn, ctx, &e, &total))
			h[0].key = c.ts;
		else
			h[0] = h[--k];
		keyheap_sift(h, k, 0);
	}
	if (k == 2) /* no heap: the two take turns, then one is left */
		merge_two(rs, h[0].idx, h[1].idx, fn, ctx, &e, &total,
			  &h[0].idx);
	if (k) /* the last ring with records: as it is */
		total += drain_ring(rs, h[0].idx, fn, ctx, &e);
	return e ? e : total;
}

int rings_drain(struct rings *rs)
{
	return rings_drain_range(rs, 0, rs->n);
}

int rings_epoll_new(struct rings *rs, const uint32_t *idx, uint32_t n,
		    int extra_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = epoll_create1(EPOLL_CLOEXEC), e;
	uint32_t i;

	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		ev.data.u32 = idx[i];
		if (idx[i] >= rs->n ||
		    epoll_ctl(fd, EPOLL_CTL_ADD, rs->r[idx[i]].fd, &ev))
			goto fail;
		rs->r[idx[i]].owner_epfd = fd;
	}
	ev.data.u32 = UINT32_MAX;
	if (extra_fd >= 0 && epoll_ctl(fd, EPOLL_CTL_ADD, extra_fd, &ev))
		goto fail;
	return fd;
fail:
	e = idx[i] >= rs->n ? -EINVAL : -errno;
	close(fd);
	return e;
}

int rings_poll(struct rings *rs, int timeout_ms)
{
	struct epoll_event ev[MAX_EVENTS];
	int n = epoll_wait(rs->epfd, ev, MAX_EVENTS, timeout_ms);

	if (n < 0 && errno != EINTR)
		return -errno;
	return rings_drain(rs);
}

uint32_t rings_count(const struct rings *rs)
{
	return rs->n;
}

uint64_t rings_size(const struct rings *rs, uint32_t i)
{
	return i < rs->n ? rs->r[i].mask + 1 : 0;
}

int rings_fd(const struct rings *rs, uint32_t i)
{
	return i < rs->n ? rs->r[i].fd : -1;
}

void rings_free(struct rings *rs)
{
	uint32_t i;

	if (!rs)
		return;
	for (i = 0; rs->r && i < rs->n; i++)
		unmap_ring(rs, &rs->r[i]);
	if (rs->epfd >= 0)
		close(rs->epfd);
	free(rs->r);
	free(rs);
}
