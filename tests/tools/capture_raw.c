/* Benchmark helper: records the recorder's real ring records (the capture
 * API of userspace/record/capture.h, the same BPF programs and rings) into a
 * file for a while, so the encoder can be benchmarked on them without the
 * kernel (tests/tools/bench_encode.c). Needs root.
 *
 *   capture_raw -o FILE [-d SECONDS] [-n MAX_RECORDS] [-- COMMAND [ARG...]]
 *
 * Stops after SECONDS (default 3), MAX_RECORDS (default 2000000) or when the
 * command exits. File format, native endianness: the 8 bytes "BTRRAW01",
 * then per record a header {uint32 cpu, uint32 len} and the record's len
 * bytes, zero-padded to a multiple of 8. Prints on stderr:
 *   capture_raw: records=N dropped=N bytes=N */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/capture.h"

#define RAW_MAGIC "BTRRAW01"

struct raw_out {
	FILE *f;
	uint64_t records, max, bytes;
	int err;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_record(void *ctx, uint32_t cpu, const void *rec, size_t len)
{
	static const uint8_t zeros[8];
	struct raw_out *o = ctx;
	uint32_t hdr[2] = { cpu, (uint32_t)len };
	size_t pad = (8 - len % 8) % 8;

	if (o->records >= o->max || o->err)
		return 0;
	if (fwrite(hdr, sizeof(hdr), 1, o->f) != 1 ||
	    fwrite(rec, 1, len, o->f) != len ||
	    fwrite(zeros, 1, pad, o->f) != pad) {
		o->err = -EIO;
		return o->err;
	}
	o->records++;
	o->bytes += sizeof(hdr) + len + pad;
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
	fprintf(stderr, "usage: capture_raw -o FILE [-d SECONDS] [-n MAX_RECORDS] [-- COMMAND [ARG...]]\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct raw_out out = { NULL, 0, 2000000, 0, 0 };
	struct kfeatures kf = { 0 };
	struct capture_opts co = { .ringbuf_size = 4ull << 20, .kf = &kf,
				   .on_record = on_record, .ctx = &out };
	struct btr_cpu_acct *acct = NULL;
	struct capture *c = NULL;
	const char *path = NULL;
	double duration = 3, t0;
	char **cmd = NULL, errbuf[256];
	uint64_t dropped = 0;
	pid_t child = -1;
	int i, err = 1, status = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") && i + 1 < argc) {
			cmd = argv + i + 1;
			break;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			duration = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			out.max = strtoull(argv[++i], NULL, 10);
		} else {
			return usage();
		}
	}
	if (!path || duration <= 0 || !out.max)
		return usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	out.f = fopen(path, "wb");
	if (!out.f || fwrite(RAW_MAGIC, 8, 1, out.f) != 1) {
		perror(path);
		goto cleanup;
	}
	if (kfeatures_probe(&kf)) {
		fprintf(stderr, "capture_raw: cannot probe the kernel's features (no BTF?)\n");
		goto cleanup;
	}
	c = capture_open(&co, errbuf, sizeof(errbuf));
	if (!c) {
		fprintf(stderr, "capture_raw: %s\n", errbuf);
		goto cleanup;
	}
	acct = calloc(capture_ncpus(c), sizeof(*acct));
	if (!acct || capture_attach(c, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "capture_raw: cannot attach: %s\n", errbuf);
		goto cleanup;
	}
	if (cmd) {
		child = fork();
		if (child == 0) {
			execvp(cmd[0], cmd);
			_exit(127);
		}
	}
	t0 = now_s();
	while (!stop && now_s() - t0 < duration && out.records < out.max) {
		if (capture_poll(c, 50) < 0)
			goto cleanup;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child)
			child = -1;
		if (cmd && child < 0)
			break;
	}
	capture_detach(c);
	if (capture_drain(c) < 0 || capture_read_acct(c, acct))
		goto cleanup;
	for (i = 0; i < (int)capture_ncpus(c); i++)
		dropped += acct[i].lost_total;
	fprintf(stderr, "capture_raw: records=%llu dropped=%llu bytes=%llu\n",
		(unsigned long long)out.records, (unsigned long long)dropped,
		(unsigned long long)out.bytes);
	err = out.err ? 1 : 0;
cleanup:
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	capture_close(c);
	free(acct);
	if (out.f && fclose(out.f)) {
		perror(path);
		err = 1;
	}
	return err;
}
