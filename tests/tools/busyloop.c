/* Test tool: spins on one thread for SECONDS (default 1) under the comm
 * "btr-busyloop", then prints its tid. The perf tests sample it and check
 * that every sample lands inside one of its running slices. Every 10 ms of
 * spinning it sleeps 1 ms, so that its slices have many edges (and other
 * tasks run on its CPU in between).
 *
 *   busyloop [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Some work the compiler cannot drop. */
static uint64_t spin(uint64_t x)
{
	int i;

	for (i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec pause = { 0, 1000000 };
	uint64_t end, t, x = 1;

	if (seconds <= 0 || seconds > 60) {
		fprintf(stderr, "usage: busyloop [SECONDS]\n");
		return 64;
	}
	prctl(PR_SET_NAME, "btr-busyloop", 0, 0, 0);
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while ((t = now_ns()) < end) {
		while (now_ns() < t + 10000000)
			x = spin(x);
		nanosleep(&pause, NULL);
	}
	printf("%ld %llu\n", (long)syscall(SYS_gettid),
	       (unsigned long long)(x & 1));
	return 0;
}
