/* Where a recording's packets go and when they reach the file: writers
 * fill the central buffer; the header packets are kept apart and start
 * every file; the buffer is written into the file at the end, or
 * periodically with --stream, or into a numbered snapshot file on SIGUSR1.
 * After each write a trailer (statistics) is written straight to the file,
 * after all the data, as trace_processor wants. */
#ifndef BTR_RECORD_OUTPUT_H
#define BTR_RECORD_OUTPUT_H

#include <stdbool.h>

#include "buffer/central.h"
#include "output/file_writer.h"
#include "output/mem_sink.h"
#include "record/options.h"

/* snapshot: the file is a SIGUSR1 snapshot (whole in itself: it gets
 * what the final write alone would add, e.g. ModuleSymbols). */
typedef int (*trailer_fn)(void *ctx, struct packet_sink *to, bool snapshot);

struct trace_output {
	const struct record_opts *o;
	struct file_writer file;
	struct mem_sink header;
	struct central *buf;
	bool header_written;
	unsigned snapshots;
	char *last_snapshot;  /* the path of the last one written, or NULL */
	uint64_t last_snapshot_bytes;
	trailer_fn trailer;
	void *trailer_ctx;
};

/* Opens the output file and creates the buffer; 0 or -errno (the file
 * error is reported by the caller, the path is o->output). */
int output_open(struct trace_output *t, const struct record_opts *o,
		trailer_fn trailer, void *ctx);
struct packet_sink *output_header_sink(struct trace_output *t);
/* Writes the header packets alone into the file, at the start: from
 * then on the file is a trace, whatever stops the recorder (a second
 * SIGINT exits at once). 0 or -errno. */
int output_write_header(struct trace_output *t);
struct packet_sink *output_data_sink(struct trace_output *t);
/* Writes what the buffer holds into the file (a streaming write, or the
 * final one), then the trailer. */
int output_write(struct trace_output *t);
/* Writes the buffer's current contents into OUTPUT.N (N = 1, 2, ...) while
 * recording goes on. Reports the path on stderr. */
int output_snapshot(struct trace_output *t);
/* Flushes and closes; 0 or the first error. */
int output_close(struct trace_output *t);
/* Closes and deletes the file (nothing worth keeping was written). */
void output_discard(struct trace_output *t);

#endif
