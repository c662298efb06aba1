/* Workload of off-CPU stacks as a program calls its C library: four
 * threads each wait in a function of their own (wait_in_X) through the
 * libc call a program would make: nanosleep(), read() of an empty pipe,
 * pthread_cond_wait(), and (with a directory) fsync() of a file written
 * there. Built as distributions build, -O2, with frame pointers in this
 * program only: the C library of a Debian host has none. The main thread
 * sleeps in wait_in_main, called from main, then wakes the pipe and
 * futex threads, each once it sleeps (until_asleep). Prints, when done:
 *   libcwaits main=TID sleep=TID pipe=TID futex=TID fsync=TID
 * (fsync=0 without a directory). Usage: libcwaits [ROUNDS [DIR]]. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define FSYNC_BYTES (1 << 20)

static int rounds = 10;
static const char *dir;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;
static pid_t tids[5];

/* Keeps a call a call: the compiler may not turn it into a jump. */
#define KEEP() __asm__ volatile("" ::: "memory")

NOINLINE static void wait_in_nanosleep(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	KEEP();
}

NOINLINE static void wait_in_pipe_read(void)
{
	char b;

	if (read(pipefd[0], &b, 1) != 1)
		exit(1);
	KEEP();
}

NOINLINE static void wait_in_futex(int i)
{
	pthread_mutex_lock(&lock);
	while (turn <= i)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	KEEP();
}

NOINLINE static void wait_in_fsync(int fd)
{
	if (fsync(fd))
		exit(1);
	KEEP();
}

/* Until thread tids[i] sleeps (its state S in /proc), at most 2 s: a
 * thread woken before it waited would not wait that round, and a guest
 * under emulation can start or run a thread that late. */
NOINLINE static void until_asleep(int i)
{
	struct timespec ms = { 0, 1000 * 1000 };
	char path[64], buf[256], *p;

	for (int k = 0; k < 2000; k++, nanosleep(&ms, NULL)) {
		pid_t tid = __atomic_load_n(&tids[i], __ATOMIC_ACQUIRE);
		FILE *f;
		size_t n;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		f = fopen(path, "r");
		if (!f)
			return;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')'); /* the state follows the name */
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
	}
}

NOINLINE static void wait_in_main(void)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	KEEP();
}

NOINLINE static void *t_sleep(void *arg)
{
	(void)arg;
	tids[1] = gettid();
	for (int i = 0; i < rounds; i++)
		wait_in_nanosleep();
	KEEP();
	return NULL;
}

NOINLINE static void *t_pipe(void *arg)
{
	(void)arg;
	__atomic_store_n(&tids[2], gettid(), __ATOMIC_RELEASE);
	for (int i = 0; i < rounds; i++)
		wait_in_pipe_read();
	KEEP();
	return NULL;
}

NOINLINE static void *t_futex(void *arg)
{
	(void)arg;
	__atomic_store_n(&tids[3], gettid(), __ATOMIC_RELEASE);
	for (int i = 0; i < rounds; i++)
		wait_in_futex(i);
	KEEP();
	return NULL;
}

NOINLINE static void *t_fsync(void *arg)
{
	char path[256], *buf = malloc(FSYNC_BYTES);
	int fd;

	(void)arg;
	tids[4] = gettid();
	snprintf(path, sizeof(path), "%s/libcwaits.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf)
		exit(1);
	for (int i = 0; i < rounds; i++) {
		memset(buf, 'a' + i % 26, FSYNC_BYTES);
		/* new blocks each round: each fsync has them to allocate and
		 * write, and a size to commit to the journal (rewriting the
		 * same blocks, a guest under emulation saw an fsync that did
		 * not have to wait) */
		if (pwrite(fd, buf, FSYNC_BYTES, (off_t)i * FSYNC_BYTES) !=
		    FSYNC_BYTES)
			exit(1);
		wait_in_fsync(fd);
	}
	close(fd);
	unlink(path);
	free(buf);
	KEEP();
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[4])(void *) = { t_sleep, t_pipe, t_futex, t_fsync };
	pthread_t t[4];
	int i, n;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		dir = argv[2];
	if (rounds <= 0 || pipe(pipefd)) {
		fprintf(stderr, "usage: libcwaits [ROUNDS > 0 [DIR]]\n");
		return 2;
	}
	tids[0] = gettid();
	n = dir ? 4 : 3;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (i = 0; i < rounds; i++) {
		wait_in_main();
		until_asleep(2);
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
		until_asleep(3);
		pthread_mutex_lock(&lock);
		turn++;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("libcwaits main=%d sleep=%d pipe=%d futex=%d fsync=%d\n",
	       tids[0], tids[1], tids[2], tids[3], n > 3 ? tids[4] : 0);
	return 0;
}
