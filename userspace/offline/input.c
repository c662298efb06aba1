/* One input of the offline tools (see input.h): opening and spooling, the
 * packet walk with compressed_packets expanded, and the first pass. */
#include "offline/input.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "offline/rewrite.h"
#include "offline/sync_info.h"
#include "offline/wire.h"
#include "trace/reader.h"

#define TRACE_FIELD_PACKET 1

static int fail_at(struct input *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "NAME: offset N: ..." into in->err; returns -1. */
static int fail_at(struct input *in, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(in->err, sizeof(in->err), "%s: offset %" PRIu64 ": ",
			 in->name, off);

	if (n < 0 || (size_t)n >= sizeof(in->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(in->err + n, sizeof(in->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int fail(struct input *in, const char *what, int errnum)
{
	snprintf(in->err, sizeof(in->err), "%s: %s%s%s", in->name, what,
		 errnum ? ": " : "", errnum ? strerror(errnum) : "");
	return -1;
}

/* Copies standard input into an unlinked temporary file. */
static int spool_stdin(struct input *in)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	uint8_t buf[1 << 16];
	ssize_t n;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/bpftrace-rec-stdin.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return fail(in, "cannot spool standard input", errno);
	unlink(path);
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		size_t done = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(in, "read error", errno);
			close(fd);
			return -1;
		}
		while (done < (size_t)n) {
			ssize_t w = write(fd, buf + done, (size_t)n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				fail(in, "cannot spool standard input",
				     w < 0 ? errno : ENOSPC);
				close(fd);
				return -1;
			}
			done += (size_t)w;
		}
	}
	in->stdin_fd = fd;
	in->stdin_start = 0;
	return 0;
}

int input_open(struct input *in, const char *path, uint32_t file_id)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->stdin_fd = -1;
	in->scan_fail_index = UINT64_MAX;
	in->bundle_clock = BTR_CLOCK_BOOTTIME;
	in->scope.file = file_id;
	in->path = strdup(path);
	if (!in->path) {
		in->name = path;
		return fail(in, "out of memory", 0);
	}
	in->name = in->path;
	if (strcmp(path, "-") != 0)
		return 0;
	in->name = "<stdin>";
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(STDIN_FILENO, 0, SEEK_CUR);

		if (pos >= 0) {
			in->stdin_fd = STDIN_FILENO;
			in->stdin_start = pos;
			return 0;
		}
	}
	return spool_stdin(in);
}

void input_close(struct input *in)
{
	trace_reader_close(in->r);
	in->r = NULL;
	if (in->stdin_fd > STDIN_FILENO)
		close(in->stdin_fd);
	in->stdin_fd = -1;
	snap_list_free(&in->snaps);
	free(in->unpacked);
	free(in->path);
	in->unpacked = NULL;
	in->path = NULL;
}

/* Opens a reader on the (spooled) standard input from its start, leaving
 * the process's own standard input as it was. */
static struct trace_reader *open_stdin(struct input *in, char *err,
				       size_t errlen)
{
	struct trace_reader *r;
	int saved = -1;

	if (in->stdin_fd != STDIN_FILENO) {
		saved = dup(STDIN_FILENO);
		if (dup2(in->stdin_fd, STDIN_FILENO) < 0) {
			snprintf(err, errlen, "%s: %s", in->name,
				 strerror(errno));
			if (saved >= 0)
				close(saved);
			return NULL;
		}
	}
	if (lseek(STDIN_FILENO, (off_t)in->stdin_start, SEEK_SET) < 0) {
		snprintf(err, errlen, "%s: %s", in->name, strerror(errno));
		r = NULL;
	} else {
		r = trace_reader_open("-", err, errlen);
	}
	if (saved >= 0) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	} else if (in->stdin_fd != STDIN_FILENO) {
		close(STDIN_FILENO);
	}
	return r;
}

int input_rewind(struct input *in)
{
	trace_reader_close(in->r);
	in->unpacked_len = in->unpacked_pos = 0;
	in->next_index = 0;
	in->warning[0] = '\0';
	in->err[0] = '\0';
	if (in->stdin_fd >= 0)
		in->r = open_stdin(in, in->err, sizeof(in->err));
	else
		in->r = trace_reader_open(in->path, in->err, sizeof(in->err));
	return in->r ? 0 : -1;
}

/* Inflates a compressed_packets payload into in->unpacked. */
static int inflate_packets(struct input *in, const uint8_t *p, size_t n,
			   uint64_t off)
{
	z_stream z = { 0 };
	int rc;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return fail_at(in, off, "cannot inflate compressed_packets");
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	in->unpacked_len = in->unpacked_pos = 0;
	in->unpacked_offset = off;
	do {
		if (in->unpacked_len == in->unpacked_cap) {
			size_t cap = in->unpacked_cap ? in->unpacked_cap * 2 :
							1u << 20;
			uint8_t *b;

			if (cap > TRACE_READER_MAX_PACKET) {
				inflateEnd(&z);
				return fail_at(in, off, "compressed_packets "
					       "inflate to more than %u bytes",
					       TRACE_READER_MAX_PACKET);
			}
			b = realloc(in->unpacked, cap);
			if (!b) {
				inflateEnd(&z);
				return fail_at(in, off, "out of memory");
			}
			in->unpacked = b;
			in->unpacked_cap = cap;
		}
		z.next_out = in->unpacked + in->unpacked_len;
		z.avail_out = (uInt)(in->unpacked_cap - in->unpacked_len);
		rc = inflate(&z, Z_NO_FLUSH);
		in->unpacked_len = in->unpacked_cap - z.avail_out;
	} while (rc == Z_OK);
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		in->unpacked_len = 0;
		return fail_at(in, off, "corrupt compressed_packets (%s)",
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

	wire_reader_init(&r, in->unpacked + in->unpacked_pos,
			 in->unpacked_len - in->unpacked_pos);
	while ((rc = wire_next(&r, &f)) > 0) {
		in->unpacked_pos = (size_t)(f.end - in->unpacked);
		if (f.num == TRACE_FIELD_PACKET && f.type == WIRE_LEN &&
		    f.val) {
			*pkt = f.data;
			*len = (size_t)f.val;
			return 1;
		}
	}
	in->unpacked_len = in->unpacked_pos = 0;
	if (rc < 0)
		return fail_at(in, in->unpacked_offset,
			       "malformed compressed_packets: %s", r.err);
	return 0;
}

int input_next(struct input *in, struct input_packet *p)
{
	const char *why = NULL;
	int rc;

	for (;;) {
		if (in->unpacked_len) {
			rc = next_unpacked(in, &p->data, &p->len);
			if (rc < 0)
				return -1;
			p->offset = in->unpacked_offset;
		} else {
			rc = trace_reader_next(in->r, &p->data, &p->len,
					       &p->offset);
			if (rc == TRACE_READ_ERROR) {
				snprintf(in->err, sizeof(in->err), "%s",
					 trace_reader_error(in->r));
				return -1;
			}
			if (rc == TRACE_READ_TRUNCATED) {
				snprintf(in->warning, sizeof(in->warning),
					 "%s", trace_reader_error(in->r));
				return 0;
			}
			if (rc == TRACE_READ_END)
				return 0;
		}
		if (rc == 0)
			continue; /* the compressed packets are done */
		if (packet_info_read(p->data, p->len, &p->info, &why))
			return fail_at(in, p->offset,
				       "malformed TracePacket: %s", why);
		if (p->info.zstd)
			return fail_at(in, p->offset, "zstd_compressed_packets "
				       "are not supported");
		if (p->info.compressed) {
			if (in->unpacked_len)
				return fail_at(in, p->offset, "nested "
					       "compressed_packets");
			if (inflate_packets(in, p->info.compressed,
					    p->info.compressed_len, p->offset))
				return -1;
			continue;
		}
		p->index = in->next_index++;
		return 1;
	}
}

/* Adds what a packet tells the clock graph. */
static int scan_packet(struct input *in, const struct input_packet *p)
{
	const struct packet_info *info = &p->info;
	struct clock_scope s = in->scope;
	const char *why = NULL;
	int64_t fts, bts;
	uint32_t clock;
	int err;

	s.machine = packet_machine(&in->scope, in->adopted_machine,
				   info->machine_id);
	if (info->snapshot) {
		err = snap_list_add_snapshot(&in->snaps, &s, p->index,
					     info->seq_id, info->snapshot,
					     info->snapshot_len, &why);
		if (err == -1)
			return fail_at(in, p->offset, "%s", why);
		if (err)
			return err;
		if (s.machine == in->scope.machine && !in->has_declared &&
		    snapshot_declared_clock(info->snapshot, info->snapshot_len,
					    &clock)) {
			in->has_declared = true;
			in->declared = clock;
		}
	}
	if (info->sync_info &&
	    sync_info_read(info->sync_info, info->sync_info_len, &clock,
			   &in->prior))
		in->bundle_clock = clock;
	if (info->bundle &&
	    bundle_ftrace_pair(info->bundle, info->bundle_len, &fts, &bts))
		return snap_list_add_ftrace_pair(&in->snaps, &s, p->index,
						 info->seq_id, fts, bts);
	return 0;
}

int input_scan(struct input *in)
{
	struct input_packet p;
	bool decided = false;
	int rc, err = 0;

	in->scan_fail_index = UINT64_MAX;
	snap_list_free(&in->snaps);
	in->has_declared = false;
	in->adopted_machine = 0;
	in->bundle_clock = BTR_CLOCK_BOOTTIME;
	memset(&in->prior, 0, sizeof(in->prior));
	if (input_rewind(in))
		return -1;
	while (!err && (rc = input_next(in, &p)) > 0) {
		/* A file whose first packet is on a remote machine was
		 * recorded there: that machine is the file's own. */
		if (!decided && !p.info.sync_marker) {
			decided = true;
			in->adopted_machine = p.info.machine_id;
		}
		err = scan_packet(in, &p);
	}
	if (err == -1) {
		in->scan_fail_index = p.index;
		snprintf(in->scan_err, sizeof(in->scan_err), "%s", in->err);
	}
	if (err)
		return err;
	if (rc < 0)
		return -1;
	in->packets = in->next_index;
	return 0;
}

uint32_t input_default_clock(const struct input *in)
{
	return in->has_declared ? in->declared : BTR_CLOCK_BOOTTIME;
}
