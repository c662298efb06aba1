/* Test workload that contends on one kernel spinlock_t: THREADS threads
 * (default 4) write to one eventfd for MS milliseconds (default 1000),
 * each write taking the eventfd's wait queue lock. On a PREEMPT_RT
 * kernel spinlock_t is a sleeping lock: a writer that finds it held by a
 * preempted owner sleeps in TASK_RTLOCK_WAIT, which the kernel reports as
 * D. Elsewhere a writer spins, never sleeps. Prints, after the work:
 *   lockstorm tids=TID,TID,... writes=N
 * Usage: lockstorm [THREADS [MS]]. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static int efd;
static atomic_int stop;
static atomic_long writes;
static pid_t tids[MAX_THREADS];

static void *writer(void *arg)
{
	uint64_t one = 1, v;
	long n = 0;

	tids[(intptr_t)arg] = gettid();
	while (!atomic_load(&stop)) {
		if (write(efd, &one, sizeof(one)) == sizeof(one))
			n++;
		/* keep the counter from ever blocking a write */
		if ((n & 1023) == 0 && read(efd, &v, sizeof(v)) < 0)
			break;
	}
	atomic_fetch_add(&writes, n);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	long ms = argc > 2 ? atol(argv[2]) : 1000;
	pthread_t th[MAX_THREADS];
	struct timespec ts;
	int i;

	if (nthreads < 1 || nthreads > MAX_THREADS || ms < 1) {
		fprintf(stderr, "usage: lockstorm [THREADS (1-%d) [MS]]\n",
			MAX_THREADS);
		return 64;
	}
	efd = eventfd(0, EFD_NONBLOCK);
	if (efd < 0) {
		perror("eventfd");
		return 1;
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
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
