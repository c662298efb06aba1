/* Test workload with wakeups of known origin: a sleeper thread that sleeps
 * N times in nanosleep (each wakeup comes from the hrtimer interrupt), and
 * two threads that ping-pong a byte over pipes N times (each wakeup comes
 * from the other thread, in task context: each writes only once the other
 * is asleep in its read, so every round wakes it). Prints the thread ids:
 *   wakeups sleeper=TID reader=TID writer=TID
 * after the work is done. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Waits (at most about a second) until thread tid sleeps: its state in
 * /proc is S. */
static void wait_asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (i = 0; i < 100000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')'); /* the state follows the comm */
		if (!p || (p[1] == ' ' && p[2] == 'S'))
			return;
		sched_yield();
	}
}

static void *reader(void *arg)
{
	char b;
	int i;

	(void)arg;
	__atomic_store_n(&tids[1], gettid(), __ATOMIC_RELEASE);
	for (i = 0; i < rounds; i++) {
		if (read(ab[0], &b, 1) != 1)
			exit(1);
		wait_asleep(__atomic_load_n(&tids[2], __ATOMIC_ACQUIRE));
		if (write(ba[1], &b, 1) != 1)
			exit(1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	char b = 'x';
	int i;

	(void)arg;
	__atomic_store_n(&tids[2], gettid(), __ATOMIC_RELEASE);
	for (i = 0; i < rounds; i++) {
		while (!__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE))
			sched_yield();
		wait_asleep(tids[1]);
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
