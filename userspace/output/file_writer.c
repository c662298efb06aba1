/* Buffered, record-atomic writing of the trace file. */
#include "output/file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/owner.h"
#include "util/fd_io.h"
#include "util/wire.h"

#define WRITER_BUF (1u << 20)

/* Length of the longest prefix of buf[0..n) made of whole records (the
 * buffer holds only records: 0x0A, varint length, payload). */
static size_t whole_records(const uint8_t *buf, size_t n)
{
	size_t off = 0;

	while (off < n) {
		size_t p = off + 1, len = 0;
		unsigned shift = 0;

		while (p < n && (buf[p] & 0x80) && shift < 63) {
			len |= (size_t)(buf[p++] & 0x7f) << shift;
			shift += 7;
		}
		if (p >= n)
			break;
		len |= (size_t)buf[p++] << shift;
		if (len > n - p)
			break;
		off = p + len;
	}
	return off;
}

int file_writer_flush(struct file_writer *w)
{
	size_t done;
	int e;

	if (w->err || !w->len)
		return w->err;
	e = fd_write_all(w->fd, w->buf, w->len, -1, &done);
	if (e) {
		/* Keep the whole records that made it; cut the torn one. */
		uint64_t keep = w->committed + whole_records(w->buf, done);

		if (!w->is_stdout && ftruncate(w->fd, (off_t)keep) == 0)
			lseek(w->fd, (off_t)keep, SEEK_SET);
		w->committed = keep;
		w->len = 0;
		w->err = e;
		return e;
	}
	w->committed += w->len;
	w->len = 0;
	return 0;
}

static int writer_write(struct packet_sink *s, uint32_t seq_id,
			const uint8_t *pkt, size_t len)
{
	struct file_writer *w = s->ctx;
	size_t need = len + 11;
	uint8_t hdr[10];

	(void)seq_id;
	if (w->err)
		return w->err;
	/* the record's real size, not need: a packet that fits is kept */
	if (w->max_bytes && file_writer_bytes(w) + 1 + wire_put_varint(hdr, len) +
				    len > w->max_bytes) {
		w->limit_reached = true; /* the file ends at the last whole packet */
		return -EFBIG;
	}
	if (w->len + need > w->cap && file_writer_flush(w))
		return w->err;
	if (need > w->cap) {
		uint8_t *n = realloc(w->buf, need);

		if (!n)
			return w->err = -ENOMEM;
		w->buf = n;
		w->cap = need;
	}
	w->buf[w->len++] = 0x0A;
	w->len += wire_put_varint(w->buf + w->len, len);
	memcpy(w->buf + w->len, pkt, len);
	w->len += len;
	w->packets++;
	return 0;
}

/* Replacing an existing file: never through a symlink, never a file that
 * someone else owns (planted in a shared directory to read the trace), only
 * a regular file. It is truncated after these checks. */
static int open_existing(struct file_writer *w, const char *path)
{
	struct stat st;

	w->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (w->fd < 0)
		return -errno;
	if (fstat(w->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_uid != geteuid() && !owner_is_invoking_user(st.st_uid))
		return -EPERM;
	if (ftruncate(w->fd, 0))
		return -errno;
	return 0;
}

int file_writer_open(struct file_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->sink.write = writer_write;
	w->sink.ctx = w;
	w->path = strdup(path);
	w->buf = malloc(WRITER_BUF);
	if (!w->path || !w->buf)
		return -ENOMEM;
	w->cap = WRITER_BUF;
	if (strcmp(path, "-") == 0) {
		w->fd = STDOUT_FILENO;
		w->is_stdout = true;
		return 0;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (w->fd >= 0) {
		w->created = true;
	} else if (errno == EEXIST) {
		int e = open_existing(w, path);

		if (e)
			return e;
	}
	if (w->fd < 0)
		return -errno;
	if (fchmod(w->fd, 0600) || owner_give_to_invoking_user(w->fd))
		return -errno;
	return 0;
}

uint64_t file_writer_bytes(const struct file_writer *w)
{
	return w->committed + w->len;
}

static void writer_release(struct file_writer *w)
{
	if (w->fd >= 0 && !w->is_stdout)
		close(w->fd);
	w->fd = -1;
	free(w->buf);
	w->buf = NULL;
	free(w->path);
	w->path = NULL;
}

int file_writer_close(struct file_writer *w)
{
	int e = file_writer_flush(w);

	if (!e && !w->is_stdout && fsync(w->fd) && errno != EINVAL)
		e = w->err = -errno;
	writer_release(w);
	return e;
}

void file_writer_discard(struct file_writer *w)
{
	if (w->created && w->path)
		unlink(w->path);
	writer_release(w);
}
