/* Test workload with sleeps of known cause: a thread in nanosleep, one
 * reading an empty pipe, one in FUTEX_WAIT, and (with a directory) one
 * that writes and fsyncs a file there, which blocks in D on the disk.
 * While the first three sleep, the main thread reads what the kernel
 * itself says each waits in (/proc/self/task/TID/wchan), then wakes them.
 * Prints, after the work is done:
 *   waits sleeper=TID piper=TID futexer=TID syncer=TID
 *   wchan sleeper=FUNC piper=FUNC futexer=FUNC
 * (syncer=0 without a directory). Usage: waits [ROUNDS [DIR]]. */
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SYNC_BYTES (4 << 20)

static int rounds = 5;
static const char *dir;
static int pipefd[2];
static atomic_int futex_word;
static pid_t tids[4];
static atomic_int started;

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *sleeper(void *arg)
{
	int i;

	(void)arg;
	tids[0] = gettid();
	atomic_fetch_add(&started, 1);
	for (i = 0; i < rounds; i++)
		msleep(100);
	return NULL;
}

static void *piper(void *arg)
{
	char b;
	int i;

	(void)arg;
	tids[1] = gettid();
	atomic_fetch_add(&started, 1);
	for (i = 0; i < rounds; i++)
		if (read(pipefd[0], &b, 1) != 1)
			exit(1);
	return NULL;
}

static void *futexer(void *arg)
{
	int i;

	(void)arg;
	tids[2] = gettid();
	atomic_fetch_add(&started, 1);
	for (i = 0; i < rounds; i++)
		while (atomic_load(&futex_word) == i)
			syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, i,
				NULL, NULL, 0);
	return NULL;
}

static void *syncer(void *arg)
{
	char path[4096], *buf = malloc(SYNC_BYTES);
	int i, fd;

	(void)arg;
	tids[3] = gettid();
	atomic_fetch_add(&started, 1);
	snprintf(path, sizeof(path), "%s/waits.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf)
		exit(1);
	for (i = 0; i < rounds; i++) {
		memset(buf, 'a' + i, SYNC_BYTES);
		if (pwrite(fd, buf, SYNC_BYTES, 0) != SYNC_BYTES || fsync(fd))
			exit(1);
	}
	close(fd);
	free(buf);
	return NULL;
}

/* The kernel's wchan of thread `tid` into out ("" when unreadable). */
static void wchan(pid_t tid, char *out, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	out[0] = '\0';
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
}

int main(int argc, char **argv)
{
	void *(*fn[4])(void *) = { sleeper, piper, futexer, syncer };
	char seen[3][128] = { "", "", "" };
	pthread_t t[4];
	int i, n;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		dir = argv[2];
	if (rounds <= 0 || pipe(pipefd)) {
		fprintf(stderr, "usage: waits [ROUNDS > 0 [DIR]]\n");
		return 2;
	}
	n = dir ? 4 : 3;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	while (atomic_load(&started) < n)
		msleep(1);
	for (i = 0; i < rounds; i++) {
		int k;

		msleep(50); /* all three are asleep by now */
		for (k = 0; k < 3; k++) {
			char w[128];

			wchan(tids[k], w, sizeof(w));
			if (w[0] && strcmp(w, "0"))
				strcpy(seen[k], w);
		}
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
		atomic_fetch_add(&futex_word, 1);
		syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
		msleep(50);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("waits sleeper=%d piper=%d futexer=%d syncer=%d\n", tids[0],
	       tids[1], tids[2], n > 3 ? tids[3] : 0);
	printf("wchan sleeper=%s piper=%s futexer=%s\n", seen[0], seen[1],
	       seen[2]);
	return 0;
}
