/* Test workload: two processes ping-pong a byte over two pipes N times
 * (default 2000), so each blocks and is woken once per round. Each prints
 * its pid, its name and the context switches it made from its own start
 * (main() for the parent, the fork for the child) to its report, as the
 * difference of two getrusage calls:
 *   pingpong pid=P role=parent|child nvcsw=N nivcsw=M from_ns=A to_ns=B
 * A and B are CLOCK_BOOTTIME (the trace clock) read just before the first
 * and just after the second getrusage: the recorder's tests compare the
 * counts with the switch-outs the trace has between A and B.
 * getrusage alone would also count switches made before exec (a recorder
 * that starts its command after capture is ready holds it there), which no
 * trace of the program sees. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int xfer(int rd, int wr, int rounds, int first)
{
	char b = 'x';
	int i;

	for (i = 0; i < rounds; i++) {
		if (first && write(wr, &b, 1) != 1)
			return -1;
		if (read(rd, &b, 1) != 1)
			return -1;
		if (!first && write(wr, &b, 1) != 1)
			return -1;
	}
	return 0;
}

/* Switch counts at the start of this process's own work, and when. */
static struct rusage start;
static long long start_ns;

static long long boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void mark_start(void)
{
	start_ns = boottime_ns();
	getrusage(RUSAGE_SELF, &start);
}

static void report(const char *role)
{
	struct rusage ru;

	long long end_ns;

	getrusage(RUSAGE_SELF, &ru);
	end_ns = boottime_ns();
	printf("pingpong pid=%d role=%s nvcsw=%ld nivcsw=%ld from_ns=%lld to_ns=%lld\n",
	       getpid(), role, ru.ru_nvcsw - start.ru_nvcsw,
	       ru.ru_nivcsw - start.ru_nivcsw, start_ns, end_ns);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	int a[2], b[2], status;
	pid_t pid;

	mark_start();
	if (rounds <= 0 || pipe(a) || pipe(b)) {
		fprintf(stderr, "usage: pingpong [ROUNDS > 0]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		mark_start();
		prctl(PR_SET_NAME, "pingpong-child");
		if (xfer(a[0], b[1], rounds, 0))
			_exit(1);
		report("child");
		_exit(0);
	}
	prctl(PR_SET_NAME, "pingpong-parent");
	if (xfer(b[0], a[1], rounds, 1))
		return 1;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	report("parent");
	return 0;
}
