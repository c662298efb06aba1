/* Workload of short-lived processes: forks N children one after another
 * (at most 8 alive at once), each of which sleeps once in nanosleep()
 * from child_wait() and exits at once, before a reader seconds behind
 * could read its /proc/PID/maps. Built as distributions build (-O2, no
 * frame pointers). Prints, when done: shortlived children=N. Usage:
 * shortlived [N]. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void child_wait(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, i, alive = 0;

	if (n <= 0) {
		fprintf(stderr, "usage: shortlived [N > 0]\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0) {
			child_wait();
			_exit(0);
		}
		if (++alive == 8) {
			wait(NULL);
			alive--;
		}
	}
	while (alive-- > 0)
		wait(NULL);
	printf("shortlived children=%d\n", n);
	return 0;
}
