/* Test workload that contends on one kernel spinlock_t: THREADS threads
 * (default 4) write to one eventfd for MS milliseconds (default 1000),
 * each write taking the eventfd's wait queue lock, the writers spread
 * over the CPUs; and one more thread, SCHED_FIFO on CPU 0, wakes every
 * 200 us and writes too. On a PREEMPT_RT kernel spinlock_t is a sleeping
 * lock that preemption does not stop: when the FIFO thread preempts CPU
 * 0's writer inside the lock (or a writer elsewhere finds the lock held
 * by that preempted owner), it sleeps in TASK_RTLOCK_WAIT, which the
 * kernel reports as D. Elsewhere a spinlock holder cannot be preempted
 * and a waiter spins, never sleeps. Needs root (SCHED_FIFO). Prints,
 * after the work:
 *   lockstorm tids=TID,TID,... writes=N
 * (the FIFO thread's tid first). Usage: lockstorm [THREADS [MS]]. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static int efd;
static atomic_int stop;
static atomic_long writes;
static pid_t tids[MAX_THREADS];

static int ncpus;

/* Pins the calling thread to cpu. */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Writes until stopped, after a 200 us sleep each time when paced (the
 * FIFO thread), emptying the counter now and then so that no write ever
 * finds it full. */
static void write_loop(bool paced)
{
	struct timespec ts = { 0, 200000 };
	uint64_t one = 1, v;
	long n = 0;

	while (!atomic_load(&stop)) {
		if (paced)
			nanosleep(&ts, NULL);
		if (write(efd, &one, sizeof(one)) == sizeof(one))
			n++;
		if ((n & 255) == 0 && read(efd, &v, sizeof(v)) < 0)
			break;
	}
	atomic_fetch_add(&writes, n);
}

/* Thread 0: SCHED_FIFO on CPU 0, a write every 200 us. */
static void *preempter(void *arg)
{
	(void)arg;
	tids[0] = gettid();
	pin(0);
	write_loop(true);
	return NULL;
}

/* Threads 1..: writers spread over the CPUs, CPU 0 first. */
static void *writer(void *arg)
{
	int i = (int)(intptr_t)arg;

	tids[i] = gettid();
	pin((i - 1) % ncpus);
	write_loop(false);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	long ms = argc > 2 ? atol(argv[2]) : 1000;
	pthread_t th[MAX_THREADS];
	pthread_attr_t fifo;
	struct sched_param prio = { .sched_priority = 1 };
	struct timespec ts;
	int i, e;

	if (nthreads < 1 || nthreads >= MAX_THREADS || ms < 1) {
		fprintf(stderr, "usage: lockstorm [THREADS (1-%d) [MS]]\n",
			MAX_THREADS - 1);
		return 64;
	}
	efd = eventfd(0, EFD_NONBLOCK);
	if (efd < 0) {
		perror("eventfd");
		return 1;
	}
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	pthread_attr_init(&fifo);
	pthread_attr_setinheritsched(&fifo, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&fifo, SCHED_FIFO);
	pthread_attr_setschedparam(&fifo, &prio);
	e = pthread_create(&th[0], &fifo, preempter, NULL);
	if (e) {
		fprintf(stderr, "lockstorm: cannot start a SCHED_FIFO thread: %s\n",
			strerror(e));
		return 1;
	}
	for (i = 1; i <= nthreads; i++)
		if (pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	nthreads++;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("lockstorm tids=");
	for (i = 0; i < nthreads; i++)
		printf("%s%d", i ? "," : "", (int)tids[i]);
	printf(" writes=%ld\n", atomic_load(&writes));
	return 0;
}
