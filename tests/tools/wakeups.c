/* Test workload with wakeups of known origin: a sleeper thread that sleeps
 * N times in nanosleep (each wakeup comes from the hrtimer interrupt), and
 * two threads that ping-pong a byte over pipes N times (each wakeup comes
 * from the other thread, in task context). Prints the thread ids:
 *   wakeups sleeper=TID reader=TID writer=TID
 * after the work is done. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int rounds = 200;
static int ab[2], ba[2];
static pid_t tids[3];

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000000 }; /* 1 ms */
	int i;

	(void)arg;
	tids[0] = gettid();
	for (i = 0; i < rounds; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

static void *reader(void *arg)
{
	char b;
	int i;

	(void)arg;
	tids[1] = gettid();
	for (i = 0; i < rounds; i++) {
		if (read(ab[0], &b, 1) != 1 || write(ba[1], &b, 1) != 1)
			exit(1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	char b = 'x';
	int i;

	(void)arg;
	tids[2] = gettid();
	for (i = 0; i < rounds; i++) {
		if (write(ab[1], &b, 1) != 1 || read(ba[0], &b, 1) != 1)
			exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[3])(void *) = { sleeper, reader, writer };
	pthread_t t[3];
	int i;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds <= 0 || pipe(ab) || pipe(ba)) {
		fprintf(stderr, "usage: wakeups [ROUNDS > 0]\n");
		return 2;
	}
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("wakeups sleeper=%d reader=%d writer=%d\n", tids[0], tids[1],
	       tids[2]);
	return 0;
}
