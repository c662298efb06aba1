/* Benchmark helper: runs a command and writes the CPU time it used, from
 * wait4(), to a file, with microsecond resolution (GNU time prints
 * centiseconds). SIGINT and SIGTERM are passed on to the command, so a
 * recorder under it can be stopped through either pid.
 *
 *   bench_rusage OUTFILE COMMAND [ARG...]
 *
 * OUTFILE gets one line: "cpu_ns=N user_ns=N sys_ns=N maxrss_kb=N". The
 * exit status is the command's (128 + signal when killed), 64 on a usage
 * error. The command's own children count only if it waited for them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static unsigned long long tv_ns(struct timeval tv)
{
	return (unsigned long long)tv.tv_sec * 1000000000ull +
	       (unsigned long long)tv.tv_usec * 1000ull;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_rusage OUTFILE COMMAND [ARG...]\n");
		return 64;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pid = fork();
	if (pid < 0) {
		perror("bench_rusage: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench_rusage: cannot run %s: %s\n", argv[2],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("bench_rusage: wait4");
			return 1;
		}
	}
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "cpu_ns=%llu user_ns=%llu sys_ns=%llu maxrss_kb=%ld\n",
		tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime), tv_ns(ru.ru_utime),
		tv_ns(ru.ru_stime), ru.ru_maxrss);
	if (fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
