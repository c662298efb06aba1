/* Test workload for user call stacks (--callstacks): a thread that blocks
 * ROUNDS times reading an empty pipe from inside outer_fn -> middle_fn ->
 * inner_fn, inner_fn making the read system call itself (no libc frame
 * without a frame pointer in between), while the main thread writes one
 * byte a round after a pause. Built with frame pointers and without
 * inlining (the Makefile's flags for this file), so that a frame-pointer
 * walk from the system call finds inner_fn, middle_fn, outer_fn and
 * reader_main in that order. Each round the main thread waits until the
 * reader sleeps (its state in /proc) before it writes, so that every
 * round blocks. It stays alive 150 ms after the work (FPSTACKS_LINGER_MS
 * if set), so that the recorder can still read its maps. Prints, after
 * the work is done:
 *   fpstacks reader=TID rounds=N depth=D
 * Modes (second argument):
 *   mixed    the reader reads, from the same call site, a pipe in four
 *            rounds, a socket in the next four, and so on: the same user
 *            pc and sp over two kernel paths (pipe_read,
 *            unix_stream_read_*), each repeated (round i reads the
 *            socket when (i / 4) is odd)
 *   garbage  inner_fn makes its system call with rbp pointing at a heap
 *            block laid out as a frame {0, 0x1234567}, as code built
 *            without frame pointers may leave it: not a frame (it is
 *            below the stack), the user stack ends at inner_fn
 *   DEPTH    (a number) reader_main reaches outer_fn through DEPTH calls
 *            of deep_fn: a user stack DEPTH + 4 frames deep, and more in
 *            libc
 * Usage: fpstacks [ROUNDS [mixed|garbage|DEPTH]]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2], sockfd[2];
static int rounds = 5, mixed, garbage, depth;
static unsigned long *fake_frame; /* garbage mode: {0, 0x1234567} */
static volatile pid_t reader_tid;

/* read(2) made here, so that the task's user pc is in this function. */
__attribute__((noinline)) static long inner_fn(int fd, char *buf)
{
#if defined(__x86_64__)
	long ret;

	if (garbage) {
		/* rbp saved in r12 (kept by the system call) */
		__asm__ volatile("mov %%rbp, %%r12\n\t"
				 "mov %[g], %%rbp\n\t"
				 "syscall\n\t"
				 "mov %%r12, %%rbp"
				 : "=a"(ret)
				 : "0"((long)SYS_read), "D"((long)fd), "S"(buf),
				   "d"(1L), [g] "r"(fake_frame)
				 : "rcx", "r11", "r12", "memory");
		return ret;
	}
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_read), "D"((long)fd), "S"(buf),
			   "d"(1L)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = 1;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2)
			 : "memory");
	return x0;
#else
	return read(fd, buf, 1);
#endif
}

__attribute__((noinline)) static long middle_fn(int fd, char *buf)
{
	long r = inner_fn(fd, buf);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

__attribute__((noinline)) static long outer_fn(int fd, char *buf)
{
	long r = middle_fn(fd, buf);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* outer_fn's read under n more frames of its own. */
__attribute__((noinline)) static long deep_fn(int n, int fd, char *buf)
{
	long r = n > 0 ? deep_fn(n - 1, fd, buf) : outer_fn(fd, buf);

	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static void *reader_main(void *arg)
{
	char c;
	int i;

	(void)arg;
	reader_tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < rounds; i++)
		if ((depth ? deep_fn(depth - 1, pipefd[0], &c)
			   : outer_fn(mixed && (i / 4) % 2 ? sockfd[0] : pipefd[0],
				      &c)) != 1)
			break;
	__asm__ volatile("" ::: "memory");
	return NULL;
}

/* Waits (up to 5 s) until the reader thread sleeps. */
static void wait_sleeping(void)
{
	struct timespec ms = { 0, 1000000 };
	char path[64], buf[256], *p;
	FILE *f;
	int i;

	for (i = 0; i < 5000; i++) {
		nanosleep(&ms, NULL);
		if (!reader_tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat",
			 (int)reader_tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		p = p ? strrchr(buf, ')') : NULL;
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
	}
}

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 20 * 1000000 };
	const char *linger;
	pthread_t t;
	long ms;
	int i;

	if (argc > 1)
		rounds = atoi(argv[1]);
	mixed = argc > 2 && !strcmp(argv[2], "mixed");
	garbage = argc > 2 && !strcmp(argv[2], "garbage");
	if (argc > 2 && !mixed && !garbage)
		depth = atoi(argv[2]);
	fake_frame = calloc(2, sizeof(*fake_frame));
	if (!fake_frame)
		return 1;
	fake_frame[1] = 0x1234567;
	if (rounds < 1 || depth < 0 || pipe(pipefd) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sockfd) ||
	    pthread_create(&t, NULL, reader_main, NULL))
		return 1;
	for (i = 0; i < rounds; i++) {
		nanosleep(&pause, NULL);
		wait_sleeping();
		if (write(mixed && (i / 4) % 2 ? sockfd[1] : pipefd[1], "x", 1) != 1)
			return 1;
	}
	pthread_join(t, NULL);
	/* a while alive after the work: the recorder reads a process's maps
	 * when it drains the process's first stacks (a drain every 50 ms) */
	linger = getenv("FPSTACKS_LINGER_MS");
	ms = linger ? atol(linger) : 150;
	pause.tv_sec = ms > 0 ? ms / 1000 : 0;
	pause.tv_nsec = ms > 0 ? ms % 1000 * 1000000 : 0;
	nanosleep(&pause, NULL);
	printf("fpstacks reader=%d rounds=%d depth=%d\n", (int)reader_tid,
	       rounds, depth);
	free(fake_frame);
	return 0;
}
