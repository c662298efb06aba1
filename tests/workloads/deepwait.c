/* Workload of a deep off-CPU stack with no frame pointer anywhere: built
 * -O2 -fomit-frame-pointer, as the C library it calls. main calls
 * descend(DEPTH), each level a frame of about FRAME bytes of its own,
 * and the deepest one sleeps in nanosleep() ROUNDS times. Prints, when
 * done: deepwait tid=TID depth=DEPTH. Usage: deepwait [ROUNDS [DEPTH]]. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FRAME 256

static int rounds = 5;

__attribute__((noinline)) static void wait_deep(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < rounds; i++)
		nanosleep(&ts, NULL);
}

/* A frame that stays a frame: the buffer is used after the call, so the
 * call is no tail call and the level no loop. */
__attribute__((noinline)) static int descend(int n)
{
	volatile char buf[FRAME];
	int r;

	memset((char *)buf, n, sizeof(buf));
	if (n == 0)
		wait_deep();
	r = n ? descend(n - 1) : 0;
	return r + buf[n % FRAME];
}

int main(int argc, char **argv)
{
	int depth = 20;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		depth = atoi(argv[2]);
	if (rounds <= 0 || depth < 0) {
		fprintf(stderr, "usage: deepwait [ROUNDS > 0 [DEPTH]]\n");
		return 2;
	}
	descend(depth);
	printf("deepwait tid=%d depth=%d\n", gettid(), depth);
	return 0;
}
