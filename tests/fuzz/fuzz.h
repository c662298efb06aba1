/* Helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c): the
 * input as a file path (a memfd), quiet diagnostics and stdout, and a
 * packet sink that checks every packet an encoder emits is a TracePacket
 * protobuf-c can decode. Header-only: each target is one program. */
#ifndef BTR_FUZZ_H
#define BTR_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/sink.h"
#include "perfetto/trace.pb-c.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Stops the target on a broken invariant: libFuzzer reports it as a crash
 * and keeps the input. */
#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

/* Silences bpftrace-rec's diagnostics (even errors) and sends stdout to
 * /dev/null: the targets run the printers, but only their memory safety
 * matters. libFuzzer reports on stderr, which stays. */
static inline void fuzz_quiet(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	log_verbosity = -2;
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		perror("fuzz: /dev/null");
		abort();
	}
	close(fd);
}

/* The input as a file: a memfd holding data[0..size). Returns the fd and
 * its path (/proc/self/fd/N) in path. Aborts on failure: that is the
 * harness, not the target. */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path,
			     size_t pathlen)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("fuzz: write");
			abort();
		}
		off += (size_t)n;
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

/* A sink that decodes every packet it is given (a packet an encoder
 * emits must be a valid TracePacket) and counts them. fail_after >= 0
 * makes the write number fail_after and every later one fail with -ENOSPC,
 * to exercise the encoders' error paths. */
struct fuzz_sink {
	struct packet_sink sink;
	uint64_t packets, bytes;
	long fail_after;
};

static inline int fuzz_sink_write(struct packet_sink *s, uint32_t seq_id,
				  const uint8_t *pkt, size_t len)
{
	struct fuzz_sink *f = s->ctx;
	Perfetto__Protos__TracePacket *p;

	(void)seq_id;
	if (f->fail_after >= 0 && (long)f->packets >= f->fail_after)
		return -ENOSPC;
	p = perfetto__protos__trace_packet__unpack(NULL, len, pkt);
	FUZZ_CHECK(p != NULL);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	f->packets++;
	f->bytes += len;
	return 0;
}

static inline void fuzz_sink_init(struct fuzz_sink *f, long fail_after)
{
	memset(f, 0, sizeof(*f));
	f->sink.write = fuzz_sink_write;
	f->sink.ctx = f;
	f->fail_after = fail_after;
}

#endif
