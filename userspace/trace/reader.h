/* Streaming reader of Perfetto trace files: yields each TracePacket's bytes
 * (Trace field 1 records) and the record's offset, skipping other top-level
 * fields, reading gzip input transparently, and never holding more than one
 * packet in memory. */
#ifndef BTR_TRACE_READER_H
#define BTR_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

/* Largest record length accepted; a longer one is reported as corrupt. */
#define TRACE_READER_MAX_PACKET (256u << 20)

/* Results of trace_reader_next(). */
enum {
	TRACE_READ_ERROR = -1,     /* corrupt or unreadable: see the message */
	TRACE_READ_END = 0,        /* clean end of the trace */
	TRACE_READ_PACKET = 1,     /* *pkt, *len, *offset are set */
	TRACE_READ_TRUNCATED = 2,  /* last record cut short (a warning) */
};

struct trace_reader;

/* Opens `path` ("-" is stdin). On failure returns NULL with a one-line
 * message "PATH: reason" in err (errlen bytes). */
struct trace_reader *trace_reader_open(const char *path, char *err,
				       size_t errlen);
/* The same on fd, which the reader owns from now on (closed even on
 * failure), read from its current position; name is for messages. */
struct trace_reader *trace_reader_open_fd(int fd, const char *name,
					  char *err, size_t errlen);

/* Reads the next packet. On TRACE_READ_PACKET, *pkt points at *len bytes
 * that stay valid until the next call and *offset is the byte offset of
 * the record (its 0x0A tag) in the decompressed stream. On
 * TRACE_READ_ERROR and TRACE_READ_TRUNCATED, trace_reader_error() holds
 * "PATH: offset N: what", N being the offset of the bad record; later
 * calls return the same error, or TRACE_READ_END after a truncated tail. */
int trace_reader_next(struct trace_reader *r, const uint8_t **pkt,
		      size_t *len, uint64_t *offset);

/* The last error or truncation message ("" if none). */
const char *trace_reader_error(const struct trace_reader *r);

/* The name used in messages: the path, or "<stdin>". */
const char *trace_reader_name(const struct trace_reader *r);

/* Closes the file and frees the reader; NULL is allowed. */
void trace_reader_close(struct trace_reader *r);

#endif
