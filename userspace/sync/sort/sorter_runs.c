/* Run files and the k-way merge of the sorter (see sorter_runs.h). */
#include "sync/sort/sorter_runs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fd_io.h"
#include "util/keyheap.h"
#include "util/tempfile.h"
#include "util/wire.h"

#define REC_HEADER_MAX (8 + WIRE_VARINT_MAX)

int run_file_open(struct run_file *f, const char *dir)
{
	int fd = temp_file(dir, "sort");

	f->fd = -1;
	f->size = 0;
	if (fd < 0)
		return -errno;
	f->fd = fd;
	return 0;
}

void run_file_close(struct run_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->size = 0;
}

int run_file_reset(struct run_file *f)
{
	if (ftruncate(f->fd, 0))
		return -errno;
	f->size = 0;
	return 0;
}

void run_writer_begin(struct run_writer *w, struct run_file *f, uint8_t *buf,
		      size_t cap)
{
	w->f = f;
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->start = f->size;
}

static int writer_flush(struct run_writer *w)
{
	int err = fd_write_all(w->f->fd, w->buf, w->len,
				 (int64_t)w->f->size, NULL);

	if (err)
		return err;
	w->f->size += w->len;
	w->written += w->len;
	w->len = 0;
	return 0;
}

/* Appends n bytes, through the buffer or straight to the file. */
static int writer_put(struct run_writer *w, const uint8_t *p, size_t n)
{
	int err;

	if (w->len + n > w->cap && (err = writer_flush(w)))
		return err;
	if (n > w->cap) {
		err = fd_write_all(w->f->fd, p, n, (int64_t)w->f->size,
				   NULL);
		if (err)
			return err;
		w->f->size += n;
		w->written += n;
		return 0;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

int run_writer_put(struct run_writer *w, int64_t key, const uint8_t *data,
		   size_t len)
{
	uint8_t hdr[REC_HEADER_MAX];
	uint64_t k = (uint64_t)key;
	size_t i;
	int err;

	for (i = 0; i < 8; i++)
		hdr[i] = (uint8_t)(k >> (8 * i));
	i = 8 + wire_put_varint(hdr + 8, len);
	err = writer_put(w, hdr, i);
	return err ? err : writer_put(w, data, len);
}

int run_writer_end(struct run_writer *w, struct run *r)
{
	int err = writer_flush(w);

	if (err)
		return err;
	r->off = w->start;
	r->end = w->f->size;
	return 0;
}

/* ---- merge ---- */

struct cursor {
	uint64_t off, end;     /* what is left of the run in the file */
	uint8_t *buf;
	size_t cap, pos, fill; /* unread bytes are buf[pos, fill) */
	int64_t key;           /* the current record */
	const uint8_t *data;
	size_t len;
};

/* Makes n bytes available at buf + pos (fewer only at the run's end). */
static int cursor_fill(int fd, struct cursor *c, size_t n)
{
	if (c->fill - c->pos >= n)
		return 0;
	memmove(c->buf, c->buf + c->pos, c->fill - c->pos);
	c->fill -= c->pos;
	c->pos = 0;
	if (n > c->cap) {
		uint8_t *b = realloc(c->buf, n);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = n;
	}
	while (c->fill < n && c->off < c->end) {
		size_t want = c->cap - c->fill;
		ssize_t r;

		if (want > c->end - c->off)
			want = (size_t)(c->end - c->off);
		r = pread(fd, c->buf + c->fill, want, (off_t)c->off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* the file is shorter than we wrote */
		c->fill += (size_t)r;
		c->off += (uint64_t)r;
	}
	return 0;
}

/* Reads the next record: 1, 0 at the end of the run, or -errno. */
static int cursor_next(int fd, struct cursor *c)
{
	uint64_t k = 0, len;
	size_t i, n;
	int err = cursor_fill(fd, c, REC_HEADER_MAX);

	if (err)
		return err;
	if (c->pos == c->fill)
		return 0;
	if (c->fill - c->pos < 9)
		return -EIO;
	for (i = 0; i < 8; i++)
		k |= (uint64_t)c->buf[c->pos + i] << (8 * i);
	n = wire_get_varint(c->buf + c->pos + 8, c->buf + c->fill, &len);
	if (!n || len > SIZE_MAX - REC_HEADER_MAX)
		return -EIO;
	err = cursor_fill(fd, c, 8 + n + (size_t)len);
	if (err)
		return err;
	if (c->fill - c->pos < 8 + n + len)
		return -EIO;
	memcpy(&c->key, &k, sizeof(k));
	c->data = c->buf + c->pos + 8 + n;
	c->len = (size_t)len;
	c->pos += 8 + n + (size_t)len;
	return 1;
}

/* A signed key in the heap's unsigned order. */
static uint64_t heap_key(int64_t key)
{
	return (uint64_t)key ^ (1ull << 63);
}

int runs_merge(const struct run_file *f, const struct run *runs, size_t n,
	       size_t bufsize, sorter_emit_fn emit, void *ctx)
{
	struct cursor *cs = calloc(n ? n : 1, sizeof(*cs));
	struct keyheap_ent *heap = calloc(n ? n : 1, sizeof(*heap));
	size_t i, live = 0;
	int err = 0;

	if (!cs || !heap) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !err; i++) {
		cs[i].off = runs[i].off;
		cs[i].end = runs[i].end;
		cs[i].buf = malloc(bufsize);
		cs[i].cap = bufsize;
		if (!cs[i].buf) {
			err = -ENOMEM;
			break;
		}
		err = cursor_next(f->fd, &cs[i]);
		if (err > 0) {
			heap[live++] = (struct keyheap_ent){
				heap_key(cs[i].key), (uint32_t)i };
			err = 0;
		}
	}
	if (!err)
		keyheap_make(heap, live);
	while (!err && live) {
		struct cursor *c = &cs[heap[0].idx];

		err = emit(ctx, c->key, c->data, c->len);
		if (err)
			break;
		err = cursor_next(f->fd, c);
		if (err == 0)
			heap[0] = heap[--live];
		else if (err > 0)
			heap[0].key = heap_key(c->key);
		if (err >= 0) {
			err = 0;
			keyheap_sift(heap, live, 0);
		}
	}
out:
	for (i = 0; cs && i < n; i++)
		free(cs[i].buf);
	free(cs);
	free(heap);
	return err;
}
