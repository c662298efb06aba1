/* Benchmark floor, userspace half: loads scripts/bench/floor.bpf.c, gives it
 * one ring buffer per CPU, attaches, and drains the rings on a timer with a
 * callback that only counts. It is the cheapest recorder of the same events,
 * the reference of `make bench`. The BPF side never wakes the reader, so
 * the rings are larger than the recorder's (32 MiB, not 4) and drained more
 * often (every 10 ms, not 50): a CPU switching a million times a second
 * fills 4 MiB in 50 ms, and a busy machine may not run the reader on time.
 * Ring size costs nothing per event on the BPF side.
 *
 *   floor [-w] [-d SECONDS] [-r RING_BYTES] [-p DRAIN_MS] [-- COMMAND [ARG...]]
 *
 * -w submits every record with BPF_RB_FORCE_WAKEUP (the BPF side's price of
 * a wakeup per record; the reader then wakes on every record too).
 *
 * Runs until SIGINT/SIGTERM, the duration, or the command's exit (the
 * command starts once the programs are attached). Prints on stderr:
 *   floor: records=N dropped=N cpus=N
 * Exit status: 0, 1 on a failure, 64 on a usage error. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_sample(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	(*(uint64_t *)ctx)++;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: floor [-w] [-d SECONDS] [-r RING_BYTES] [-p DRAIN_MS] [-- COMMAND [ARG...]]\n");
	return 64;
}

/* Forks the command held at a pipe until the programs are attached. */
static pid_t spawn(char **argv, int *gate)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		close(p[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "floor: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*gate = p[1];
	return pid;
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	uint64_t ring_size = 32ull << 20, *counts = NULL, records = 0, dropped = 0;
	double duration = 0, t0;
	char **cmd = NULL;
	int i, ncpus, err = 1, gate = -1, status = 0, drain_ms = 10;
	int *fds = NULL;
	bool wake_every = false;
	pid_t child = -1;
	uint32_t cpu, zero = 0;
	__u64 *drops = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cmd = argv + i + 1;
			if (!*cmd)
				return usage();
			break;
		} else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			duration = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "-w")) {
			wake_every = true;
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			drain_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			ring_size = strtoull(argv[++i], NULL, 0);
		} else {
			return usage();
		}
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0 || ring_size < 4096 || (ring_size & (ring_size - 1)) ||
	    drain_ms <= 0)
		return usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	counts = calloc((size_t)ncpus, sizeof(*counts));
	drops = calloc((size_t)ncpus, sizeof(*drops));
	fds = malloc((size_t)ncpus * sizeof(*fds));
	skel = floor_bpf__open();
	if (fds)
		memset(fds, 0xff, (size_t)ncpus * sizeof(*fds)); /* all -1 */
	if (!counts || !drops || !fds || !skel) {
		fprintf(stderr, "floor: cannot open the BPF object\n");
		goto cleanup;
	}
	skel->rodata->wake_every = wake_every;
	if (bpf_map__set_max_entries(skel->maps.rings, (uint32_t)ncpus) ||
	    floor_bpf__load(skel)) {
		fprintf(stderr, "floor: cannot load the BPF programs\n");
		goto cleanup;
	}
	for (cpu = 0; cpu < (uint32_t)ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "floor_ring", 0, 0,
					(uint32_t)ring_size, NULL);

		fds[cpu] = fd;
		if (fd < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.rings),
						  &cpu, &fd, 0)) {
			fprintf(stderr, "floor: cannot create ring %u: %s\n",
				cpu, strerror(errno));
			goto cleanup;
		}
		if (!rb)
			rb = ring_buffer__new(fd, on_sample, &counts[cpu], NULL);
		else if (ring_buffer__add(rb, fd, on_sample, &counts[cpu]))
			goto cleanup;
		if (!rb)
			goto cleanup;
	}
	if (cmd && (child = spawn(cmd, &gate)) < 0) {
		fprintf(stderr, "floor: cannot fork: %s\n", strerror(errno));
		goto cleanup;
	}
	if (floor_bpf__attach(skel)) {
		fprintf(stderr, "floor: cannot attach: %s\n", strerror(errno));
		goto cleanup;
	}
	if (gate >= 0) {
		if (write(gate, "x", 1) != 1)
			goto cleanup;
		close(gate);
		gate = -1;
	}
	t0 = now_s();
	while (!stop) {
		int n = ring_buffer__poll(rb, drain_ms);

		if (n < 0 && n != -EINTR)
			goto cleanup;
		ring_buffer__consume(rb);
		if (duration > 0 && now_s() - t0 >= duration)
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child = -1;
			break;
		}
	}
	floor_bpf__detach(skel);
	ring_buffer__consume(rb);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &zero, drops))
		goto cleanup;
	for (i = 0; i < ncpus; i++) {
		records += counts[i];
		dropped += drops[i];
	}
	fprintf(stderr, "floor: records=%llu dropped=%llu cpus=%d\n",
		(unsigned long long)records, (unsigned long long)dropped, ncpus);
	err = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status))
		err = 1;
cleanup:
	if (gate >= 0)
		close(gate);
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	ring_buffer__free(rb);
	floor_bpf__destroy(skel);
	for (i = 0; fds && i < ncpus; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(counts);
	free(drops);
	return err;
}
