/* The trace file: a packet sink that frames each TracePacket as Trace field
 * 1 (0x0A, varint length, bytes) and writes whole records through a buffer.
 * On a write error (a full disk) it truncates the file back to the last
 * whole record, so what was written still decodes, and keeps the error. */
#ifndef BTR_FILE_WRITER_H
#define BTR_FILE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "output/sink.h"

struct file_writer {
	struct packet_sink sink;
	int fd;
	bool is_stdout;
	bool created; /* we created the file: remove it if nothing is wanted */
	char *path;
	uint8_t *buf;
	size_t len, cap;
	uint64_t committed; /* bytes of whole records in the file */
	uint64_t packets;
	uint64_t max_bytes;  /* 0: no limit; past it writes fail with -EFBIG */
	bool limit_reached;
	int err; /* first error, negative errno */
};

/* Opens PATH ("-" for stdout) for writing: created 0600, not following a
 * symlink, owned by the invoking user under sudo. Returns 0 or -errno. */
int file_writer_open(struct file_writer *w, const char *path);
/* Writes out the buffer. Returns 0 or the first error. */
int file_writer_flush(struct file_writer *w);
/* Flushes, fsyncs and closes. Returns 0 or the first error. */
int file_writer_close(struct file_writer *w);
/* Closes and deletes a file this writer created. */
void file_writer_discard(struct file_writer *w);
uint64_t file_writer_bytes(const struct file_writer *w);

#endif
