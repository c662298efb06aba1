/* One input of the offline tools (see input.h): opening and spooling, the
 * packet walk with compressed_packets expanded, and the first pass. */
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

#include "convert/bundle_rewrite.h"
#include "trace/sync_info.h"
#include "util/wire.h"
#include "trace/reader.h"
#include "util/fd_io.h"
#include "util/log.h"
#include "util/tempfile.h"

#define TRACE_FIELD_PACKET 1

static int fail_at(struct input *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "NAME: offset N: ..." into in->err; returns -1. */
static int fail_at(struct input *in, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vat(in->err, sizeof(in->err), in->name, off, fmt, ap);
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
	in->stdin_fd = fd;
	in->stdin_start = 0;
	return 0;
}

static void input_init(struct input *in, uint32_t file_id)
{
	memset(in, 0, sizeof(*in));
	in->stdin_fd = -1;
	in->own_fd = -1;
	in->scan_fail_index = UINT64_MAX;
	in->bundle_clock = BTR_CLOCK_BOOTTIME;
	in->perf_clock = BTR_CLOCK_MONOTONIC;
	in->manifest_entry = -1;
	in->scope.file = file_id;
}

int input_open(struct input *in, const char *path, uint32_t file_id)
{
	struct stat st;

	input_init(in, file_id);
	in->path = strdup(path);
	if (!in->path || file_machines_init(&in->fm)) {
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

int input_open_fd(struct input *in, const char *label, int fd,
		  uint32_t file_id)
{
	char buf[64];

	input_init(in, file_id);
	in->own_fd = fd;
	in->name = label;
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);
	in->label = strdup(label);
	in->fd_path = strdup(buf);
	in->path = strdup(buf);
	if (!in->label || !in->fd_path || !in->path ||
	    file_machines_init(&in->fm))
		return fail(in, "out of memory", 0);
	in->name = in->label;
	return 0;
}

void input_close(struct input *in)
{
	trace_reader_close(in->r);
	in->r = NULL;
	if (in->stdin_fd > STDIN_FILENO)
		close(in->stdin_fd);
	in->stdin_fd = -1;
	if (in->own_fd >= 0)
		close(in->own_fd);
	in->own_fd = -1;
	snap_list_free(&in->snaps);
	file_machines_free(&in->fm);
	seq_map_free(&in->seqs);
	remote_sync_free(&in->rsync);
	free(in->unpacked);
	free(in->path);
	free(in->label);
	free(in->member);
	free(in->fd_path);
	in->unpacked = NULL;
	in->path = in->label = in->member = in->fd_path = NULL;
}

long input_head(struct input *in, uint8_t *buf, size_t n)
{
	int fd = in->stdin_fd >= 0 ? in->stdin_fd : in->own_fd;
	off_t start = in->stdin_fd >= 0 ? (off_t)in->stdin_start : 0;
	size_t got = 0;
	ssize_t r;
	int err = 0;

	if (fd < 0 && (fd = open(in->path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(in->err, sizeof(in->err), "%s: %s", in->name,
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
	if (fd != in->stdin_fd && fd != in->own_fd)
		close(fd);
	if (err)
		return fail_at(in, got, "read error: %s", strerror(err));
	return (long)got;
}

FILE *input_fopen(struct input *in)
{
	FILE *f;
	int fd;

	if (in->stdin_fd < 0) {
		f = fopen(in->path, "r");
		if (!f)
			snprintf(in->err, sizeof(in->err), "%s: %s", in->name,
				 strerror(errno));
		return f;
	}
	fd = dup(in->stdin_fd);
	if (fd < 0 || lseek(fd, (off_t)in->stdin_start, SEEK_SET) < 0 ||
	    !(f = fdopen(fd, "r"))) {
		fail(in, "cannot read", errno);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

/* A reader message names the input, not the /proc path it opened. */
static void name_message(const struct input *in, char *msg, size_t n)
{
	size_t plen = in->fd_path ? strlen(in->fd_path) : 0;
	char tmp[512];

	if (!plen || strncmp(msg, in->fd_path, plen))
		return;
	snprintf(tmp, sizeof(tmp), "%s%s", in->name, msg + plen);
	snprintf(msg, n, "%s", tmp);
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
	name_message(in, in->err, sizeof(in->err));
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
				name_message(in, in->err, sizeof(in->err));
				return -1;
			}
			if (rc == TRACE_READ_TRUNCATED) {
				snprintf(in->warning, sizeof(in->warning),
					 "%s", trace_reader_error(in->r));
				name_message(in, in->warning,
					     sizeof(in->warning));
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

/* Notes the packet's machine (its slot keys its clocks until machines are
 * assigned), sequence id and machine name. */
static int scan_machine(struct input *in, const struct input_packet *p,
			uint32_t *slot)
{
	const struct packet_info *info = &p->info;
	const char *name;
	size_t len;
	int rc = file_machines_add(&in->fm, info->machine_id);

	if (rc == -E2BIG)
		return fail_at(in, p->offset, "more than %d machine ids",
			       MACHINES_MAX_PER_INPUT);
	if (rc < 0 || seq_map_add(&in->seqs, info->seq_id))
		return -ENOMEM;
	*slot = (uint32_t)rc;
	if (info->system_info &&
	    system_info_machine_name(info->system_info, info->system_info_len,
				     &name, &len) &&
	    file_machines_name(&in->fm, *slot, name, len))
		return -ENOMEM;
	return 0;
}

/* Where a client snapshot of a remote_clock_sync goes. */
struct client_snap {
	struct input *in;
	const struct input_packet *p;
	struct clock_scope s;
	const char *why;
};

static int client_snapshot(void *ctx, const uint8_t *snap, size_t len)
{
	struct client_snap *c = ctx;
	struct input *in = c->in;
	int err = snap_list_add_snapshot(&in->snaps, &c->s, c->p->index,
					 c->p->info.seq_id, snap, len, &c->why);

	if (!err) {
		in->fm.v[c->s.machine].has_snapshots = true;
		in->any_snapshot = true;
	}
	return err;
}

/* The round trips of a remote_clock_sync on machine slot `slot`. */
static int scan_remote_sync(struct input *in, const struct input_packet *p,
			    uint32_t slot)
{
	struct client_snap c = { in, p, in->scope, NULL };
	int err;

	c.s.machine = slot;
	err = remote_sync_add(&in->rsync, slot, p->info.remote_clock_sync,
			      p->info.remote_clock_sync_len, client_snapshot,
			      &c, &c.why);
	if (err == -1)
		return fail_at(in, p->offset, "%s", c.why);
	return err;
}

/* Adds what a packet tells the clock graph. */
static int scan_packet(struct input *in, const struct input_packet *p)
{
	const struct packet_info *info = &p->info;
	struct clock_scope s = in->scope;
	const char *why = NULL;
	int64_t fts, bts;
	uint32_t clock, slot = 0;
	int err;

	err = scan_machine(in, p, &slot);
	if (err)
		return err;
	s.machine = slot;
	if (info->snapshot) {
		err = snap_list_add_snapshot(&in->snaps, &s, p->index,
					     info->seq_id, info->snapshot,
					     info->snapshot_len, &why);
		if (err == -1)
			return fail_at(in, p->offset, "%s", why);
		if (err)
			return err;
		in->fm.v[slot].has_snapshots = true;
		in->any_snapshot = true;
		if (slot == 0 && !in->has_declared &&
		    snapshot_declared_clock(info->snapshot, info->snapshot_len,
					    &clock)) {
			in->has_declared = true;
			in->declared = clock;
		}
	}
	if (info->remote_clock_sync && (err = scan_remote_sync(in, p, slot)))
		return err;
	if (info->sync_info &&
	    sync_info_read(info->sync_info, info->sync_info_len, &clock,
			   &in->prior))
		in->bundle_clock = clock;
	if (info->bundle &&
	    bundle_ftrace_pair(info->bundle, info->bundle_len, &fts, &bts)) {
		in->fm.v[slot].has_snapshots = true;
		in->any_snapshot = true;
		return snap_list_add_ftrace_pair(&in->snaps, &s, p->index,
						 info->seq_id, fts, bts);
	}
	return 0;
}

int input_scan(struct input *in)
{
	struct input_packet p;
	bool decided = false;
	int rc, err = 0;

	bool trailer = false;
	uint32_t clock;

	in->scan_fail_index = UINT64_MAX;
	snap_list_free(&in->snaps);
	seq_map_free(&in->seqs);
	remote_sync_free(&in->rsync);
	file_machines_free(&in->fm);
	if (file_machines_init(&in->fm))
		return -ENOMEM;
	in->has_declared = in->any_snapshot = false;
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
			in->fm.adopted = p.info.machine_id;
			in->fm.v[0].raw_id = p.info.machine_id;
		}
		trailer |= p.info.sync_info &&
			   sync_info_read(p.info.sync_info,
					  p.info.sync_info_len, &clock, NULL);
		err = scan_packet(in, &p);
	}
	/* A file without clocks is on its own timeline, bundles too. */
	if (!in->any_snapshot && !trailer)
		in->bundle_clock = BTR_CLOCK_TRACE_FILE;
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
	if (in->kind == INPUT_PERF_TEXT)
		return in->perf_clock;
	if (in->has_declared)
		return in->declared;
	return in->any_snapshot ? BTR_CLOCK_BOOTTIME : BTR_CLOCK_TRACE_FILE;
}
