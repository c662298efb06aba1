/* Benchmark load generator: scheduler events at a controlled rate. Pairs of
 * threads ping-pong through a futex, both threads of a pair pinned to one
 * CPU (pairs spread over the CPUs). A round trip is 3 scheduler events when
 * the woken ponger preempts the pinger (sched_waking, sched_switch, and the
 * ponger's sched_switch when it blocks again: the pinger is still runnable,
 * so it needs no wakeup), 4 when it does not. Each pair does its share of
 * round trips in batches, one batch per millisecond, sleeping until the next
 * millisecond in between; a pair that falls behind catches up at most 10 ms
 * of work at once.
 *
 *   bench_load [-r EVENTS_PER_S] [-d SECONDS] [-p PAIRS]
 *
 * EVENTS_PER_S 0 (the default) means as fast as possible; otherwise the
 * round trips per second are EVENTS_PER_S / 3, so the real rate may be up to
 * a third higher: measure it with the recorder (program runs / seconds).
 * PAIRS defaults to the number of CPUs. Prints:
 *   bench_load pairs=P target=R seconds=S roundtrips=N events_est=N rate_est=R
 * where events_est counts 3 events per round trip. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EVENTS_PER_ROUNDTRIP 3
#define TICK_NS 1000000ull
#define MAX_CATCHUP_TICKS 10
#define MAX_PAIRS 256

struct pair {
	_Atomic uint32_t turn; /* 0: the pinger runs, 1: the ponger runs */
	_Atomic uint32_t done;
	int cpu;
	double per_tick; /* round trips per tick, 0 for unlimited */
	uint64_t deadline_ns;
	uint64_t roundtrips;
	pthread_t ping, pong;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Hands the turn to `to` and waits until it comes back to `me`. */
static void pass_turn(struct pair *p, uint32_t me, uint32_t to)
{
	atomic_store(&p->turn, to);
	futex_wake(&p->turn);
	while (atomic_load(&p->turn) != me && !atomic_load(&p->done))
		futex_wait(&p->turn, to);
}

static void *ponger(void *arg)
{
	struct pair *p = arg;

	pin(p->cpu);
	while (!atomic_load(&p->done)) {
		while (atomic_load(&p->turn) != 1 && !atomic_load(&p->done))
			futex_wait(&p->turn, 0);
		if (atomic_load(&p->done))
			break;
		pass_turn(p, 1, 0);
	}
	return NULL;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void *pinger(void *arg)
{
	struct pair *p = arg;
	uint64_t start = now_ns(), tick = start;
	double owed = 0;

	pin(p->cpu);
	while (now_ns() < p->deadline_ns) {
		uint64_t n, i;

		if (p->per_tick > 0) {
			uint64_t now = now_ns();

			if (now < tick)
				sleep_until(tick);
			else if (now - tick > MAX_CATCHUP_TICKS * TICK_NS)
				tick = now - MAX_CATCHUP_TICKS * TICK_NS;
			owed += p->per_tick;
			tick += TICK_NS;
			n = (uint64_t)owed;
			owed -= (double)n;
		} else {
			n = 256;
		}
		for (i = 0; i < n; i++)
			pass_turn(p, 0, 1);
		p->roundtrips += n;
	}
	atomic_store(&p->done, 1);
	atomic_store(&p->turn, 1);
	futex_wake(&p->turn);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct pair pairs[MAX_PAIRS];
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	double rate = 0, seconds = 2, elapsed;
	uint64_t t0, total = 0;
	int npairs = (int)ncpus, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rate = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			npairs = atoi(argv[++i]);
		else
			npairs = -1, i = argc;
	}
	if (npairs < 1 || npairs > MAX_PAIRS || rate < 0 || seconds <= 0 ||
	    ncpus < 1) {
		fprintf(stderr, "usage: bench_load [-r EVENTS_PER_S] [-d SECONDS] [-p PAIRS]\n");
		return 64;
	}
	t0 = now_ns();
	for (i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		p->cpu = (int)(i % ncpus);
		p->per_tick = rate / EVENTS_PER_ROUNDTRIP / npairs *
			      ((double)TICK_NS / 1e9);
		p->deadline_ns = t0 + (uint64_t)(seconds * 1e9);
		if (pthread_create(&p->pong, NULL, ponger, p) ||
		    pthread_create(&p->ping, NULL, pinger, p)) {
			fprintf(stderr, "bench_load: cannot create threads\n");
			return 1;
		}
	}
	for (i = 0; i < npairs; i++) {
		pthread_join(pairs[i].ping, NULL);
		pthread_join(pairs[i].pong, NULL);
		total += pairs[i].roundtrips;
	}
	elapsed = (double)(now_ns() - t0) / 1e9;
	printf("bench_load pairs=%d target=%.0f seconds=%.3f roundtrips=%llu events_est=%llu rate_est=%.0f\n",
	       npairs, rate, elapsed, (unsigned long long)total,
	       (unsigned long long)(total * EVENTS_PER_ROUNDTRIP),
	       (double)(total * EVENTS_PER_ROUNDTRIP) / elapsed);
	return 0;
}
