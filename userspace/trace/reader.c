/* Streaming Perfetto trace reader. The file (or stdin) goes through zlib's
 * gzread, which passes plain files through and inflates gzip by content.
 * Records are parsed from a window buffer that only grows as far as the
 * bytes actually read, so hostile lengths cannot force huge allocations. */
#include "trace/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/log.h"

/* The window's first size: reads of at least twice gzbuffer's 128 KiB go
 * straight into it (zlib copies smaller ones through its own buffer). */
#define READ_CHUNK (512u << 10)
#define VARINT_MAX 10

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* Internal results of fill() and varint_at(). */
enum {
	GOT = 0,
	AT_EOF = 1,
	READ_FAILED = -1,
	VARINT_LONG = -2,      /* more than 10 bytes */
	VARINT_OVERFLOW = -3,  /* 10 bytes holding more than 64 bits */
};

struct trace_reader {
	gzFile gz;
	int fd;                  /* owned by gz; kept for fstat() */
	char *name;
	uint8_t *buf;
	size_t cap, start, end;  /* unread bytes are buf[start, end) */
	uint64_t base;           /* stream offset of buf[0] */
	int64_t size;            /* stream size if known (plain file), else -1 */
	bool eof;
	bool gz_truncated;       /* gzip stream ended without its trailer */
	bool done;               /* later calls return `final` */
	int final;
	char msg[512];
	char why[160];           /* reason of a READ_FAILED */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A reader on fd (owned from now on), from its current position; `sized`
 * when that is the start of a plain file whose size bounds the records. */
static struct trace_reader *open_fd(int fd, const char *name, bool sized,
				    char *err, size_t errlen)
{
	struct trace_reader *r = NULL;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		set_err(err, errlen, "%s: %s", name, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "%s: %s", name, strerror(EISDIR));
		goto fail;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(name))) {
		set_err(err, errlen, "%s: %s", name, strerror(ENOMEM));
		goto fail;
	}
	r->gz = gzdopen(fd, "rb");
	if (!r->gz) {
		set_err(err, errlen, "%s: %s", name, strerror(ENOMEM));
		goto fail;
	}
	r->fd = fd;
	fd = -1; /* owned by r->gz now */
	gzbuffer(r->gz, 128u << 10);
	/* gzdirect() looks at the first bytes: plain data keeps its size. */
	r->size = (sized && S_ISREG(st.st_mode) && gzdirect(r->gz)) ?
		(int64_t)st.st_size : -1;
	return r;

fail:
	if (fd >= 0)
		close(fd);
	trace_reader_close(r);
	return NULL;
}

struct trace_reader *trace_reader_open(const char *path, char *err,
				       size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		set_err(err, errlen, "%s: %s", is_stdin ? "<stdin>" : path,
			strerror(errno));
		return NULL;
	}
	return open_fd(fd, is_stdin ? "<stdin>" : path, !is_stdin, err,
		       errlen);
}

struct trace_reader *trace_reader_open_fd(int fd, const char *name,
					  char *err, size_t errlen)
{
	return open_fd(fd, name, lseek(fd, 0, SEEK_CUR) == 0, err, errlen);
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	free(r->name);
	free(r);
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->msg;
}

const char *trace_reader_name(const struct trace_reader *r)
{
	return r->name;
}

/* Makes `need` unread bytes available at buf + start. Returns GOT,
 * AT_EOF (fewer are left) or READ_FAILED (reason in *why). */
static int fill(struct trace_reader *r, size_t need, const char **why)
{
	while (r->end - r->start < need) {
		size_t room;
		int n;

		if (r->eof)
			return AT_EOF;
		if (r->start == r->end) {
			r->base += r->start;
			r->start = r->end = 0;
		}
		if (r->end == r->cap && r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->base += r->start;
			r->end -= r->start;
			r->start = 0;
		}
		if (r->end == r->cap) {
			/* Grow by doubling, never past what is needed. */
			size_t ncap = r->cap ? r->cap * 2 : READ_CHUNK;
			uint8_t *nbuf;

			if (ncap > need)
				ncap = need < READ_CHUNK ? READ_CHUNK : need;
			nbuf = realloc(r->buf, ncap);
			if (!nbuf) {
				*why = strerror(ENOMEM);
				return READ_FAILED;
			}
			r->buf = nbuf;
			r->cap = ncap;
		}
		room = r->cap - r->end;
		if (room > (1u << 30))
			room = 1u << 30;
		n = gzread(r->gz, r->buf + r->end, (unsigned)room);
		if (n < 0) {
			int errnum;
			const char *m = gzerror(r->gz, &errnum);
			const char *sep = strstr(m, ": ");

			if (strncmp(m, "<fd:", 4) == 0 && sep)
				m = sep + 2; /* zlib prefixes "<fd:N>: " */

			if (errnum == Z_ERRNO)
				snprintf(r->why, sizeof(r->why), "%s",
					 strerror(errno));
			else
				snprintf(r->why, sizeof(r->why),
					 "corrupt gzip data (%s)", m);
			*why = r->why;
			return READ_FAILED;
		}
		if (n == 0) {
			int errnum;

			gzerror(r->gz, &errnum);
			r->gz_truncated = errnum == Z_BUF_ERROR;
			r->eof = true;
		}
		r->end += (size_t)n;
	}
	return GOT;
}

/* Decodes a varint at buf + start + pos into *v, its size into *n. */
static int varint_at(struct trace_reader *r, size_t pos, uint64_t *v,
		     size_t *n, const char **why)
{
	uint64_t val = 0;
	size_t i;

	for (i = 0; i < VARINT_MAX; i++) {
		int rc = fill(r, pos + i + 1, why);
		uint8_t b;

		if (rc != GOT)
			return rc;
		b = r->buf[r->start + pos + i];
		val |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (i == VARINT_MAX - 1 && b > 1)
				return VARINT_OVERFLOW;
			*v = val;
			*n = i + 1;
			return GOT;
		}
	}
	return VARINT_LONG;
}

/* Drops n bytes from the stream without keeping them. */
static int skip(struct trace_reader *r, uint64_t n, const char **why)
{
	while (n > 0) {
		size_t avail = r->end - r->start;
		int rc;

		if (avail == 0) {
			rc = fill(r, 1, why);
			if (rc != GOT)
				return rc;
			avail = r->end - r->start;
		}
		if (avail > n)
			avail = (size_t)n;
		r->start += avail;
		n -= avail;
	}
	return GOT;
}

static int finish(struct trace_reader *r, int result, uint64_t off,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Records the message "NAME: offset OFF: ..." and the sticky result. */
static int finish(struct trace_reader *r, int result, uint64_t off,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vat(r->msg, sizeof(r->msg), r->name, off, fmt, ap);
	va_end(ap);
	r->done = true;
	r->final = result == TRACE_READ_TRUNCATED ? TRACE_READ_END : result;
	return result;
}

/* Turns a fill/varint failure inside a record into the reader's result. */
static int record_failed(struct trace_reader *r, int rc, uint64_t off,
			 const char *what, const char *why)
{
	if (rc == READ_FAILED)
		return finish(r, TRACE_READ_ERROR, off, "read error: %s", why);
	if (rc == VARINT_LONG)
		return finish(r, TRACE_READ_ERROR, off,
			      "%s varint longer than 10 bytes", what);
	if (rc == VARINT_OVERFLOW)
		return finish(r, TRACE_READ_ERROR, off,
			      "%s varint overflows 64 bits", what);
	return finish(r, TRACE_READ_TRUNCATED, off,
		      "truncated record at end of %s (%s cut short)",
		      r->gz_truncated ? "gzip stream" : "file", what);
}

/* A plain file's size tells a torn tail without reading (or allocating
 * for) it. The size is read again first, in case the file is growing. */
static bool past_known_size(struct trace_reader *r, uint64_t record_end)
{
	struct stat st;

	if (r->size < 0 || record_end <= (uint64_t)r->size)
		return false;
	if (fstat(r->fd, &st) == 0)
		r->size = st.st_size;
	/* A file that shrank below what was read is left to fill(). */
	return record_end > (uint64_t)r->size &&
	       (uint64_t)r->size >= r->base + r->end;
}

int trace_reader_next(struct trace_reader *r, const uint8_t **pkt,
		      size_t *len, uint64_t *offset)
{
	const char *why = "";

	if (r->done)
		return r->final;
	for (;;) {
		uint64_t off = r->base + r->start, tag, field, val;
		size_t tag_n, len_n;
		unsigned wt;
		int rc;

		rc = varint_at(r, 0, &tag, &tag_n, &why);
		if (rc == AT_EOF && r->end == r->start) {
			if (r->gz_truncated)
				return finish(r, TRACE_READ_TRUNCATED, off,
					      "gzip stream ends without its "
					      "trailer");
			if (off == 0)
				return finish(r, TRACE_READ_ERROR, 0,
					      "empty file, not a trace (no "
					      "packets)");
			r->done = true;
			r->final = TRACE_READ_END;
			return TRACE_READ_END;
		}
		if (rc != GOT)
			return record_failed(r, rc, off, "field tag", why);
		field = tag >> 3;
		wt = tag & 7;
		if (field == 0 || field > 0x1fffffff)
			return finish(r, TRACE_READ_ERROR, off,
				      "invalid field number %" PRIu64, field);

		switch (wt) {
		case WT_VARINT:
			rc = varint_at(r, tag_n, &val, &len_n, &why);
			if (rc != GOT)
				return record_failed(r, rc, off, "value", why);
			r->start += tag_n + len_n;
			continue;
		case WT_I64:
		case WT_I32:
			rc = skip(r, tag_n + (wt == WT_I64 ? 8 : 4), &why);
			if (rc != GOT)
				return record_failed(r, rc, off, "value", why);
			continue;
		case WT_LEN:
			break;
		default:
			return finish(r, TRACE_READ_ERROR, off,
				      "field %" PRIu64 " has invalid wire "
				      "type %u", field, wt);
		}

		rc = varint_at(r, tag_n, &val, &len_n, &why);
		if (rc != GOT)
			return record_failed(r, rc, off, "length", why);
		if (val > TRACE_READER_MAX_PACKET)
			return finish(r, TRACE_READ_ERROR, off,
				      "record length %" PRIu64 " exceeds the "
				      "limit of %u bytes", val,
				      TRACE_READER_MAX_PACKET);
		if (field != 1) {
			rc = skip(r, tag_n + len_n + val, &why);
			if (rc != GOT)
				return record_failed(r, rc, off, "payload",
						     why);
			continue;
		}
		if (val == 0) {
			r->start += tag_n + len_n;
			continue;
		}
		if (past_known_size(r, off + tag_n + len_n + val)) {
			uint64_t left = (uint64_t)r->size - off - tag_n - len_n;

			return finish(r, TRACE_READ_TRUNCATED, off,
				      "truncated record at end of file "
				      "(%" PRIu64 " bytes declared, %" PRIu64
				      " left)", val, left);
		}
		rc = fill(r, tag_n + len_n + (size_t)val, &why);
		if (rc != GOT)
			return record_failed(r, rc, off, "payload", why);
		*pkt = r->buf + r->start + tag_n + len_n;
		*len = (size_t)val;
		*offset = off;
		r->start += tag_n + len_n + (size_t)val;
		return TRACE_READ_PACKET;
	}
}
