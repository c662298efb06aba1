/* Sorted runs on disk for the sorter (sorter.h): an unlinked temporary file
 * holding runs one after another, each a sequence of records
 * [key: 8 bytes little-endian][length: varint][bytes]; a buffered writer of
 * runs, and the k-way merge of runs through one read buffer per run. */
#ifndef BTR_SORTER_RUNS_H
#define BTR_SORTER_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "sync/sort/sorter.h"

struct run {
	uint64_t off, end; /* bytes [off, end) of its file */
};

struct run_file {
	int fd;
	uint64_t size;
};

/* Creates the file in dir and unlinks it. Returns 0 or -errno. */
int run_file_open(struct run_file *f, const char *dir);
void run_file_close(struct run_file *f);
/* Empties the file for reuse. */
int run_file_reset(struct run_file *f);

struct run_writer {
	struct run_file *f;
	uint8_t *buf;
	size_t len, cap;
	uint64_t start;
	uint64_t written; /* bytes, for the stats */
};

/* Starts a run at the end of f, buffered through buf[0..cap) (cap >= 32). */
void run_writer_begin(struct run_writer *w, struct run_file *f, uint8_t *buf,
		      size_t cap);
/* Returns 0 or -errno. */
int run_writer_put(struct run_writer *w, int64_t key, const uint8_t *data,
		   size_t len);
/* Flushes and gives the run written. Returns 0 or -errno. */
int run_writer_end(struct run_writer *w, struct run *r);

/* Merges runs[0..n) of f, calling emit in (key, run index) order, which is
 * insertion order for equal keys when the runs were written in insertion
 * order. bufsize: read buffer per run. Returns 0, -errno or emit's
 * negative return. */
int runs_merge(const struct run_file *f, const struct run *runs, size_t n,
	       size_t bufsize, sorter_emit_fn emit, void *ctx);

#endif
