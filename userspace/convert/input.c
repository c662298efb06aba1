/* One input of the offline tools (see input.h): opening and spooling, and
 * the packet walk with compressed_packets expanded. The first pass over
 * the packets is scan.c. */
#include "convert/input.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/wire.h"
#include "trace/reader.h"
#include "util/fd_io.h"
#include "util/log.h"
#include "util/tempfile.h"

#define TRACE_FIELD_PACKET 1

int input_fail_at(struct input *in, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vat(in->err, sizeof(in->err), in->file.name, off, fmt, ap);
	va_end(ap);
	return -1;
}

static int fail(struct input *in, const char *what, int errnum)
{
	snprintf(in->err, sizeof(in->err), "%s: %s%s%s", in->file.name, what,
		 errnum ? ": " : "", errnum ? strerror(errnum) : "");
	return -1;
}

/* Copies standard input into an unlinked temporary file. */
static int spool_stdin(struct input *in)
{
	uint8_t buf[1 << 16];
	ssize_t n;
	int fd = temp_file(temp_dir(), "stdin");

	if (fd < 0)
		return fail(in, "cannot spool standard input", errno);
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(in, "read error", errno);
			close(fd);
			return -1;
		}
		err = fd_write_all(fd, buf, (size_t)n, -1, NULL);
		if (err) {
			fail(in, "cannot spool standard input", -err);
			close(fd);
			return -1;
		}
	}
	in->rd.stdin_fd = fd;
	in->rd.stdin_start = 0;
	return 0;
}

static void input_init(struct input *in, uint32_t file_id)
{
	memset(in, 0, sizeof(*in));
	in->rd.stdin_fd = -1;
	in->file.own_fd = -1;
	in->scan.scan_fail_index = UINT64_MAX;
	in->scan.bundle_clock = BTR_CLOCK_BOOTTIME;
	in->file.perf_clock = BTR_CLOCK_MONOTONIC;
	in->file.manifest_entry = -1;
	in->file.scope.file = file_id;
}

int input_open(struct input *in, const char *path, uint32_t file_id)
{
	struct stat st;

	input_init(in, file_id);
	in->file.path = strdup(path);
	if (!in->file.path || file_machines_init(&in->scan.fm)) {
		in->file.name = path;
		return fail(in, "out of memory", 0);
	}
	in->file.name = in->file.path;
	if (strcmp(path, "-") != 0)
		return 0;
	in->file.name = "<stdin>";
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(STDIN_FILENO, 0, SEEK_CUR);

		if (pos >= 0) {
			in->rd.stdin_fd = STDIN_FILENO;
			in->rd.stdin_start = pos;
			return 0;
		}
	}
	return spool_stdin(in);
}

int input_open_fd(struct input *in, const char *label, int fd,
		  uint32_t file_id)
{
	input_init(in, file_id);
	in->file.own_fd = fd;
	in->file.name = label;
	in->file.label = strdup(label);
	in->file.path = strdup(label);
	if (!in->file.label || !in->file.path ||
	    file_machines_init(&in->scan.fm))
		return fail(in, "out of memory", 0);
	in->file.name = in->file.label;
	return 0;
}

void input_close(struct input *in)
{
	trace_reader_close(in->rd.r);
	in->rd.r = NULL;
	if (in->rd.stdin_fd > STDIN_FILENO)
		close(in->rd.stdin_fd);
	in->rd.stdin_fd = -1;
	if (in->file.own_fd >= 0)
		close(in->file.own_fd);
	in->file.own_fd = -1;
	snap_list_free(&in->scan.snaps);
	file_machines_free(&in->scan.fm);
	seq_map_free(&in->scan.seqs);
	remote_sync_free(&in->scan.rsync);
	free(in->rd.unpacked);
	free(in->file.path);
	free(in->file.label);
	free(in->file.member);
	in->rd.unpacked = NULL;
	in->file.path = in->file.label = in->file.member = NULL;
}

/* The descriptor an input reads (its spooled or regular standard input,
 * or the temporary file it owns) and where its data starts in it; -1 for
 * an input read by path. */
static int input_fd(const struct input *in, off_t *start)
{
	*start = in->rd.stdin_fd >= 0 ? (off_t)in->rd.stdin_start : 0;
	return in->rd.stdin_fd >= 0 ? in->rd.stdin_fd : in->file.own_fd;
}

/* A descriptor of its own on the input's file, at the start of its data;
 * -1 with in->err set. */
static int reopen_fd(struct input *in)
{
	off_t start;
	int fd = dup(input_fd(in, &start));

	if (fd >= 0 && lseek(fd, start, SEEK_SET) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		fail(in, "cannot read", errno);
	return fd;
}

long input_head(struct input *in, uint8_t *buf, size_t n)
{
	off_t start;
	int fd = input_fd(in, &start);
	size_t got = 0;
	ssize_t r;
	int err = 0;

	if (fd < 0 && (fd = open(in->file.path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(in->err, sizeof(in->err), "%s: %s", in->file.name,
			 strerror(errno));
		return -1;
	}
	while (got < n) {
		r = pread(fd, buf + got, n - got, start + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (input_fd(in, &start) < 0)
		close(fd);
	if (err)
		return input_fail_at(in, got, "read error: %s", strerror(err));
	return (long)got;
}

FILE *input_fopen(struct input *in)
{
	FILE *f;
	int fd;

	if (input_fd(in, &(off_t){ 0 }) < 0) {
		f = fopen(in->file.path, "r");
		if (!f)
			snprintf(in->err, sizeof(in->err), "%s: %s",
				 in->file.name, strerror(errno));
		return f;
	}
	fd = reopen_fd(in);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		fail(in, "cannot read", errno);
		close(fd);
	}
	return f;
}

int input_rewind(struct input *in)
{
	int fd;

	trace_reader_close(in->rd.r);
	in->rd.r = NULL;
	in->rd.unpacked_len = in->rd.unpacked_pos = 0;
	in->rd.next_index = 0;
	in->rd.warning[0] = '\0';
	in->err[0] = '\0';
	if (input_fd(in, &(off_t){ 0 }) < 0)
		in->rd.r = trace_reader_open(in->file.path, in->err,
					     sizeof(in->err));
	else if ((fd = reopen_fd(in)) >= 0)
		in->rd.r = trace_reader_open_fd(fd, in->file.name, in->err,
						sizeof(in->err));
	return in->rd.r ? 0 : -1;
}

/* Inflates a compressed_packets payload into in->rd.unpacked. */
static int inflate_packets(struct input *in, const uint8_t *p, size_t n,
			   uint64_t off)
{
	z_stream z = { 0 };
	int rc;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return input_fail_at(in, off, "cannot inflate compressed_packets");
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	in->rd.unpacked_len = in->rd.unpacked_pos = 0;
	in->rd.unpacked_offset = off;
	do {
		if (in->rd.unpacked_len == in->rd.unpacked_cap) {
			size_t cap = in->rd.unpacked_cap ? in->rd.unpacked_cap * 2 :
							1u << 20;
			uint8_t *b;

			if (cap > TRACE_READER_MAX_PACKET) {
				inflateEnd(&z);
				return input_fail_at(in, off, "compressed_packets "
					       "inflate to more than %u bytes",
					       TRACE_READER_MAX_PACKET);
			}
			b = realloc(in->rd.unpacked, cap);
			if (!b) {
				inflateEnd(&z);
				return input_fail_at(in, off, "out of memory");
			}
			in->rd.unpacked = b;
			in->rd.unpacked_cap = cap;
		}
		z.next_out = in->rd.unpacked + in->rd.unpacked_len;
		z.avail_out = (uInt)(in->rd.unpacked_cap - in->rd.unpacked_len);
		rc = inflate(&z, Z_NO_FLUSH);
		in->rd.unpacked_len = in->rd.unpacked_cap - z.avail_out;
	} while (rc == Z_OK);
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		in->rd.unpacked_len = 0;
		return input_fail_at(in, off, "corrupt compressed_packets (%s)",
			       z.msg ? z.msg : "truncated");
	}
	return 0;
}

/* The next packet inside the inflated compressed_packets: 1, or 0 when
 * none is left. */
static int next_unpacked(struct input *in, const uint8_t **pkt, size_t *len)
{
	struct wire_reader r;
	struct wire_field f;
	int rc;

	wire_reader_init(&r, in->rd.unpacked + in->rd.unpacked_pos,
			 in->rd.unpacked_len - in->rd.unpacked_pos);
	while ((rc = wire_next(&r, &f)) > 0) {
		in->rd.unpacked_pos = (size_t)(f.end - in->rd.unpacked);
		if (f.num == TRACE_FIELD_PACKET && f.type == WIRE_LEN &&
		    f.val) {
			*pkt = f.data;
			*len = (size_t)f.val;
			return 1;
		}
	}
	in->rd.unpacked_len = in->rd.unpacked_pos = 0;
	if (rc < 0)
		return input_fail_at(in, in->rd.unpacked_offset,
			       "malformed compressed_packets: %s", r.err);
	return 0;
}

int input_next(struct input *in, struct input_packet *p)
{
	const char *why = NULL;
	int rc;

	for (;;) {
		if (in->rd.unpacked_len) {
			rc = next_unpacked(in, &p->data, &p->len);
			if (rc < 0)
				return -1;
			p->offset = in->rd.unpacked_offset;
		} else {
			rc = trace_reader_next(in->rd.r, &p->data, &p->len,
					       &p->offset);
			if (rc == TRACE_READ_ERROR) {
				snprintf(in->err, sizeof(in->err), "%s",
					 trace_reader_error(in->rd.r));
				return -1;
			}
			if (rc == TRACE_READ_TRUNCATED) {
				snprintf(in->rd.warning, sizeof(in->rd.warning),
					 "%s", trace_reader_error(in->rd.r));
				return 0;
			}
			if (rc == TRACE_READ_END)
				return 0;
		}
		if (rc == 0)
			continue; /* the compressed packets are done */
		if (packet_info_read(p->data, p->len, &p->info, &why))
			return input_fail_at(in, p->offset,
				       "malformed TracePacket: %s", why);
		if (p->info.zstd)
			return input_fail_at(in, p->offset, "zstd_compressed_packets "
				       "are not supported");
		if (p->info.compressed) {
			if (in->rd.unpacked_len)
				return input_fail_at(in, p->offset, "nested "
					       "compressed_packets");
			if (inflate_packets(in, p->info.compressed,
					    p->info.compressed_len, p->offset))
				return -1;
			continue;
		}
		p->index = in->rd.next_index++;
		return 1;
	}
}
