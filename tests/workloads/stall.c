/* Workload of the rare stall a trigger is for, among thousands of short
 * waits. Built as distributions build (-O2, no frame pointers), calling
 * libc as programs do.
 *
 *   stall run CPU MS    a thread ("sleeper") pinned to CPU beside a CPU
 *                       hog ("hog"), that blocks in read() on a pipe over
 *                       and over, woken each time by a SCHED_FIFO thread
 *                       on the same CPU ("ticker") that writes to it
 *                       every 1 ms: short runnable waits; halfway the hog
 *                       turns SCHED_FIFO (below the ticker) for MS and
 *                       spins, so that the sleeper waits runnable that
 *                       long once. The sleeper does not time its own
 *                       naps: on PREEMPT_RT a SCHED_OTHER thread's timers
 *                       expire in a softirq thread of its CPU (SCHED_FIFO
 *                       priority 1), which the hog holds off, and it
 *                       would sleep through the stall instead; an RT
 *                       thread's timers expire in the hard interrupt.
 *                       All of it on one CPU, so in one ring: with reader
 *                       threads one reader reads the whole stall
 *   stall dwait MS      a thread ("fsyncer") that writes and fsync()s a
 *                       file in the current folder over and over (short D
 *                       sleeps), and once a vfork() whose child sleeps MS:
 *                       the parent ("dwaiter") sleeps in D that long
 *
 * Prints when done: stall tid=TID from=NS to=NS (the thread that waited,
 * and CLOCK_BOOTTIME around the stall). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP_MS 1500
#define AFTER_MS 1500

static volatile int done;
static int cpu, stall_ms;
static int wake_pipe[2];
static pid_t waiter_tid;
static unsigned long long from_ns, to_ns;

static unsigned long long boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

static void pin(const char *name)
{
	cpu_set_t set;

	prctl(PR_SET_NAME, name);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

static void spin_until(unsigned long long end)
{
	while (boottime() < end && !done)
		;
}

static void *sleeper(void *arg)
{
	char buf[64];

	(void)arg;
	pin("sleeper");
	waiter_tid = gettid();
	while (!done)
		if (read(wake_pipe[0], buf, sizeof(buf)) <= 0)
			break;
	return NULL;
}

/* Wakes the sleeper every 1 ms, preempting the hog even while that is
 * SCHED_FIFO, and once more at the end so that the sleeper sees
 * `done`. */
static void *ticker(void *arg)
{
	struct sched_param fifo = { .sched_priority = 20 };
	struct timespec ms = { 0, 1000000 };
	char c = 0;

	(void)arg;
	pin("ticker");
	if (sched_setscheduler(0, SCHED_FIFO, &fifo))
		perror("sched_setscheduler");
	while (!done) {
		nanosleep(&ms, NULL);
		if (write(wake_pipe[1], &c, 1) < 0)
			break;
	}
	if (write(wake_pipe[1], &c, 1) < 0)
		perror("write");
	return NULL;
}

static void *hog(void *arg)
{
	struct sched_param fifo = { .sched_priority = 10 }, other = { 0 };

	(void)arg;
	pin("hog");
	spin_until(boottime() + WARMUP_MS * 1000000ull);
	if (sched_setscheduler(0, SCHED_FIFO, &fifo))
		perror("sched_setscheduler");
	from_ns = boottime();
	spin_until(from_ns + (unsigned long long)stall_ms * 1000000ull);
	to_ns = boottime();
	sched_setscheduler(0, SCHED_OTHER, &other);
	spin_until(boottime() + AFTER_MS * 1000000ull);
	done = 1;
	return NULL;
}

static void *fsyncer(void *arg)
{
	char buf[4096];
	int fd = open("stall.data", O_WRONLY | O_CREAT | O_TRUNC, 0600);

	(void)arg;
	prctl(PR_SET_NAME, "fsyncer");
	memset(buf, 'x', sizeof(buf));
	while (fd >= 0 && !done) {
		if (write(fd, buf, sizeof(buf)) < 0 || fsync(fd))
			break;
	}
	if (fd >= 0)
		close(fd);
	unlink("stall.data");
	return NULL;
}

/* Sleeps ms in naps of 100 ms: no long sleep but the one measured. */
static void naps(int ms)
{
	struct timespec nap = { 0, 100000000L };

	for (; ms > 0; ms -= 100)
		nanosleep(&nap, NULL);
}

/* The parent of a vfork() waits in D (killable) until the child exits. */
static void dwait(void)
{
	struct timespec t = { stall_ms / 1000, (stall_ms % 1000) * 1000000L };
	pid_t child;

	prctl(PR_SET_NAME, "dwaiter");
	naps(WARMUP_MS);
	waiter_tid = gettid();
	from_ns = boottime();
	child = vfork();
	if (child == 0) {
		/* the child sleeps in S under a name of its own */
		prctl(PR_SET_NAME, "vchild");
		nanosleep(&t, NULL);
		_exit(0);
	}
	to_ns = boottime();
	if (child > 0)
		waitpid(child, NULL, 0);
	naps(AFTER_MS);
	done = 1;
}

int main(int argc, char **argv)
{
	pthread_t a, b, t;

	if (argc != 4 && argc != 3) {
		fprintf(stderr, "usage: stall run CPU MS | stall dwait MS\n");
		return 2;
	}
	if (!strcmp(argv[1], "run") && argc == 4) {
		cpu = atoi(argv[2]);
		stall_ms = atoi(argv[3]);
		if (pipe(wake_pipe)) {
			perror("pipe");
			return 1;
		}
		pthread_create(&a, NULL, sleeper, NULL);
		pthread_create(&b, NULL, hog, NULL);
		pthread_create(&t, NULL, ticker, NULL);
		pthread_join(b, NULL);
		pthread_join(a, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(argv[1], "dwait") && argc == 3) {
		stall_ms = atoi(argv[2]);
		pthread_create(&a, NULL, fsyncer, NULL);
		dwait();
		pthread_join(a, NULL);
	} else {
		fprintf(stderr, "usage: stall run CPU MS | stall dwait MS\n");
		return 2;
	}
	printf("stall tid=%d from=%llu to=%llu\n", (int)waiter_tid, from_ns,
	       to_ns);
	return 0;
}
