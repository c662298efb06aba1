/* Test workload: a process whose main thread ("btr-threads") and N more
 * threads ("btr-thr-1" ... "btr-thr-N", default 3) each spin for SECONDS
 * (default 0.5) on the CPU, so a profiler samples every one of them. It
 * prints its pid, then each thread's tid and name once all are done:
 *   pid P
 *   tid T NAME
 * The perf tests check that samples of the non-main threads are put in
 * process P even when perf prints no pid.
 *
 *   threads [N [SECONDS]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct worker {
	pthread_t th;
	char name[16];
	double seconds;
	long tid;
	uint64_t sink; /* keeps the spinning from being optimised away */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(struct worker *w)
{
	uint64_t end = now_ns() + (uint64_t)(w->seconds * 1e9), x = 1;
	int i;

	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	w->tid = (long)syscall(SYS_gettid);
	while (now_ns() < end)
		for (i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	w->sink = x;
}

static void *run(void *arg)
{
	spin(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, i, started;
	double seconds = argc > 2 ? atof(argv[2]) : 0.5;
	struct worker w[MAX_THREADS + 1];

	if (n < 1 || n > MAX_THREADS || seconds <= 0 || seconds > 60) {
		fprintf(stderr, "usage: threads [N [SECONDS]] (N: 1-%d)\n",
			MAX_THREADS);
		return 64;
	}
	for (i = 0; i <= n; i++) {
		if (i)
			snprintf(w[i].name, sizeof(w[i].name), "btr-thr-%d", i);
		else
			snprintf(w[i].name, sizeof(w[i].name), "btr-threads");
		w[i].seconds = seconds;
	}
	for (started = 1; started <= n; started++)
		if (pthread_create(&w[started].th, NULL, run, &w[started]))
			break;
	spin(&w[0]);
	for (i = 1; i < started; i++)
		pthread_join(w[i].th, NULL);
	if (started <= n) {
		fprintf(stderr, "threads: cannot start thread %d\n", started);
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	for (i = 1; i <= n; i++)
		printf("tid %ld %s\n", w[i].tid, w[i].name);
	return 0;
}
