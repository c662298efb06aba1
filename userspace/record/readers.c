/* Reader threads over the sharded rings (readers.h). Each reader waits on
 * its own epoll set (its rings and an eventfd that wakes it), so a ring's
 * wakeup reaches the one thread that drains it. The shared state is small:
 * a sync generation the main thread raises and each reader acknowledges
 * after its next pass and commit, a stop flag, the first error; all under
 * one lock taken per pass, never per record. */
#include "record/readers.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "util/clock_ns.h"
#include "util/keyheap.h"

struct reader {
	struct readers *rd;
	uint32_t *rings, nrings;
	struct keyheap_ent *heap; /* rings_drain_merged's, room for all */
	void *ctx;
	int epfd, wake_fd;
	pthread_t th;
	bool started;
	uint64_t acked; /* sync generation done (under rd->lock) */
	bool ended;     /* the thread returned (under rd->lock) */
};

struct readers {
	struct rings *rs;
	struct readers_ops ops;
	struct reader *r;
	uint32_t n;
	int main_fd; /* eventfd: a reader wants the main thread */
	int drain_ms;
	bool threaded;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t sync_gen; /* atomic */
	int stop;          /* atomic */
	int err;           /* under lock */
};

uint32_t readers_default(uint32_t online, uint32_t rings)
{
	uint32_t n = (online + READERS_PER_CPUS - 1) / READERS_PER_CPUS;

	if (n > rings)
		n = rings;
	return n ? n : 1;
}

static void wake(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: a wakeup is pending anyway */
	}
}

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

/* Waits up to timeout_ms for a ring wakeup or the reader's eventfd. */
static void reader_wait(struct reader *t, int timeout_ms)
{
	struct epoll_event ev[16];
	int i, k = epoll_wait(t->epfd, ev, 16, timeout_ms);

	for (i = 0; i < k; i++)
		if (ev[i].data.u32 == UINT32_MAX)
			drain_fd(t->wake_fd);
}

static int reader_pass(struct reader *t)
{
	struct readers *rd = t->rd;
	int n, e;

	if (rd->ops.pass_begin)
		rd->ops.pass_begin(t->ctx);
	if (rd->ops.time_order)
		n = rings_drain_merged(rd->rs, t->rings, t->nrings, t->heap,
				       rd->ops.on_record, t->ctx);
	else
		n = rings_drain_list(rd->rs, t->rings, t->nrings,
				     rd->ops.on_record, t->ctx);
	e = rd->ops.pass_done(t->ctx, n < 0 ? 0 : n);

	return n < 0 ? n : e;
}

static void keep_error(struct readers *rd, int e)
{
	pthread_mutex_lock(&rd->lock);
	if (!rd->err)
		rd->err = e;
	pthread_mutex_unlock(&rd->lock);
	readers_notify_main(rd);
}

static void *reader_main(void *arg)
{
	struct reader *t = arg;
	struct readers *rd = t->rd;
	uint64_t done = 0;

	/* At a stop the thread ends at once, its pass finished: the caller
	 * drains what is left and commits every chunk once it joined. */
	while (!__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE)) {
		uint64_t want;
		int e;

		reader_wait(t, rd->drain_ms);
		if (__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE))
			break;
		want = __atomic_load_n(&rd->sync_gen, __ATOMIC_ACQUIRE);
		e = reader_pass(t);
		if (e)
			keep_error(rd, e);
		if (want != done || e) {
			rd->ops.commit(t->ctx);
			done = want;
			pthread_mutex_lock(&rd->lock);
			t->acked = want;
			pthread_cond_broadcast(&rd->cond);
			pthread_mutex_unlock(&rd->lock);
		}
		if (e)
			break;
	}
	pthread_mutex_lock(&rd->lock);
	t->ended = true;
	pthread_cond_broadcast(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

/* Contiguous ranges of rings, each reader's with about the same bytes of
 * ring (an offline CPU's ring is one page: the online CPUs are shared out
 * evenly) and at least one ring: owner[i] is the reader of ring i. */
static void shard(const struct rings *rs, uint32_t n, uint32_t *owner)
{
	uint32_t nr = rings_count(rs), i, k = 0;
	uint64_t total = 0, cum = 0;

	for (i = 0; i < nr; i++)
		total += rings_size(rs, i);
	for (i = 0; i < nr; i++) {
		owner[i] = k;
		cum += rings_size(rs, i);
		if (k + 1 < n && (cum * n >= (k + 1) * total ||
				  nr - i - 1 == n - 1 - k))
			k++;
	}
}

struct readers *readers_new(struct rings *rs, uint32_t n,
			    const struct readers_ops *ops, void *const *ctx,
			    char *err, size_t errlen)
{
	struct readers *rd = calloc(1, sizeof(*rd));
	uint32_t nr = rings_count(rs), i, k, *owner;

	if (!rd || !n || n > nr || !(rd->r = calloc(n, sizeof(*rd->r)))) {
		snprintf(err, errlen, !rd || (n && n <= nr) ? "out of memory"
			 : "%u readers for %u rings", n, nr);
		free(rd);
		return NULL;
	}
	rd->rs = rs;
	rd->ops = *ops;
	rd->n = n;
	pthread_mutex_init(&rd->lock, NULL);
	pthread_cond_init(&rd->cond, NULL);
	rd->main_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (k = 0; k < n; k++) {
		rd->r[k].epfd = rd->r[k].wake_fd = -1;
		rd->r[k].rd = rd;
		rd->r[k].ctx = ctx[k];
	}
	owner = calloc(nr, sizeof(*owner));
	if (owner)
		shard(rs, n, owner);
	for (k = 0; k < n && rd->main_fd >= 0 && owner; k++) {
		struct reader *t = &rd->r[k];

		t->rings = calloc(nr, sizeof(*t->rings));
		t->heap = calloc(nr, sizeof(*t->heap));
		if (!t->rings || !t->heap)
			break;
		for (i = 0; i < nr; i++)
			if (owner[i] == k)
				t->rings[t->nrings++] = i;
		t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->wake_fd < 0)
			break;
		t->epfd = rings_epoll_new(rs, t->rings, t->nrings, t->wake_fd);
		if (t->epfd < 0) {
			errno = -t->epfd;
			break;
		}
	}
	free(owner);
	if (k < n) {
		snprintf(err, errlen, "reader %u: %s", k, strerror(errno));
		readers_free(rd);
		return NULL;
	}
	return rd;
}

uint32_t readers_count(const struct readers *rd)
{
	return rd->n;
}

const uint32_t *readers_rings(const struct readers *rd, uint32_t k,
			      uint32_t *n)
{
	*n = k < rd->n ? rd->r[k].nrings : 0;
	return k < rd->n ? rd->r[k].rings : NULL;
}

uint64_t readers_cpu_ns(const struct readers *rd)
{
	uint64_t n = 0;
	clockid_t id;
	uint32_t k;

	if (!rd->threaded)
		return clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (k = 0; k < rd->n; k++)
		if (rd->r[k].started &&
		    !pthread_getcpuclockid(rd->r[k].th, &id))
			n += clock_ns(id);
	return n;
}

bool readers_threaded(const struct readers *rd)
{
	return rd->threaded;
}

int readers_start(struct readers *rd, int drain_ms)
{
	sigset_t all, old;
	uint32_t k;
	int e = 0;

	if (rd->n < 2)
		return 0;
	rd->drain_ms = drain_ms;
	rd->threaded = true; /* before the threads: they read it */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (k = 0; k < rd->n && !e; k++) {
		e = -pthread_create(&rd->r[k].th, NULL, reader_main, &rd->r[k]);
		rd->r[k].started = !e;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		readers_stop(rd);
	return e;
}

int readers_poll(struct readers *rd, int timeout_ms)
{
	reader_wait(&rd->r[0], timeout_ms);
	return reader_pass(&rd->r[0]);
}

void readers_wait_main(struct readers *rd, int timeout_ms)
{
	struct pollfd p = { .fd = rd->main_fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) > 0)
		drain_fd(rd->main_fd);
}

void readers_notify_main(struct readers *rd)
{
	wake(rd->main_fd);
}

static void wake_all(struct readers *rd)
{
	uint32_t k;

	for (k = 0; k < rd->n; k++)
		wake(rd->r[k].wake_fd);
}

int readers_sync(struct readers *rd)
{
	uint64_t gen;
	uint32_t k;
	int e;

	if (!rd->threaded)
		return 0;
	gen = __atomic_add_fetch(&rd->sync_gen, 1, __ATOMIC_ACQ_REL);
	wake_all(rd);
	pthread_mutex_lock(&rd->lock);
	for (k = 0; k < rd->n; k++)
		while (rd->r[k].started && !rd->r[k].ended &&
		       rd->r[k].acked < gen)
			pthread_cond_wait(&rd->cond, &rd->lock);
	e = rd->err;
	pthread_mutex_unlock(&rd->lock);
	return e;
}

int readers_error(struct readers *rd)
{
	int e;

	pthread_mutex_lock(&rd->lock);
	e = rd->err;
	pthread_mutex_unlock(&rd->lock);
	return e;
}

int readers_stop(struct readers *rd)
{
	uint32_t k;

	if (!rd->threaded)
		return readers_error(rd);
	__atomic_store_n(&rd->stop, 1, __ATOMIC_RELEASE);
	wake_all(rd);
	for (k = 0; k < rd->n; k++)
		if (rd->r[k].started)
			pthread_join(rd->r[k].th, NULL);
	rd->threaded = false;
	return readers_error(rd);
}

void readers_free(struct readers *rd)
{
	uint32_t k;

	if (!rd)
		return;
	readers_stop(rd);
	for (k = 0; k < rd->n; k++) {
		if (rd->r[k].epfd >= 0)
			close(rd->r[k].epfd);
		if (rd->r[k].wake_fd >= 0)
			close(rd->r[k].wake_fd);
		free(rd->r[k].rings);
		free(rd->r[k].heap);
	}
	if (rd->main_fd >= 0)
		close(rd->main_fd);
	pthread_cond_destroy(&rd->cond);
	pthread_mutex_destroy(&rd->lock);
	free(rd->r);
	free(rd);
}
