/* Bounded-memory stable sort (see sorter.h). Records are kept in one
 * buffer of at most `limit` bytes: their bytes grow from the front, their
 * index entries from the back; when the two would meet, the entries are
 * sorted and the records written out as a run. */
#include "sync/sort/sorter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sort/sorter_runs.h"
#include "util/tempfile.h"

#define IO_BUF_MAX (64u << 10)
#define IO_BUF_MIN (4u << 10)
#define FANIN_MAX 256

struct rec {
	int64_t key;
	size_t off, len; /* bytes at buf + off; off grows with insertion */
};

struct sorter {
	uint64_t limit;
	char *dir;
	uint8_t *buf;
	size_t cap;       /* buf bytes; multiple of 8 */
	size_t front;     /* record bytes in use at the front */
	size_t n;         /* index entries at the back */
	struct run_file files[2];
	int cur;          /* file holding the current runs */
	struct run *runs;
	size_t nruns, runs_cap;
	uint64_t written; /* run bytes, both files */
	struct sorter_stats stats;
	char err[256];
	int errnum;
	bool finished;
};

static struct rec *index_base(const struct sorter *s)
{
	if (!s->buf)
		return NULL;
	return (struct rec *)(void *)(s->buf + s->cap - s->n * sizeof(struct rec));
}

struct sorter *sorter_new(uint64_t limit, const char *tmpdir)
{
	struct sorter *s = calloc(1, sizeof(*s));
	const char *dir = tmpdir;

	if (!s)
		return NULL;
	if (!dir || !*dir)
		dir = temp_dir();
	s->dir = strdup(dir);
	if (!s->dir) {
		free(s);
		return NULL;
	}
	s->limit = limit < SORTER_MIN_LIMIT ? SORTER_MIN_LIMIT : limit;
	if (s->limit > SIZE_MAX / 2)
		s->limit = SIZE_MAX / 2;
	s->files[0].fd = s->files[1].fd = -1;
	return s;
}

void sorter_free(struct sorter *s)
{
	if (!s)
		return;
	run_file_close(&s->files[0]);
	run_file_close(&s->files[1]);
	free(s->runs);
	free(s->buf);
	free(s->dir);
	free(s);
}

const struct sorter_stats *sorter_stats(const struct sorter *s)
{
	return &s->stats;
}

const char *sorter_error(const struct sorter *s)
{
	return s->err;
}

static int fail(struct sorter *s, int err, const char *what)
{
	if (!s->errnum) {
		s->errnum = err;
		snprintf(s->err, sizeof(s->err), "%s: %s: %s", s->dir, what,
			 strerror(-err));
	}
	return err;
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Size of each read or write buffer of runs. */
static size_t io_buf_size(const struct sorter *s)
{
	uint64_t b = s->limit / 4;

	return b > IO_BUF_MAX ? IO_BUF_MAX : b < IO_BUF_MIN ? IO_BUF_MIN : (size_t)b;
}

static int add_run(struct sorter *s, const struct run *r)
{
	if (s->nruns == s->runs_cap) {
		size_t cap = s->runs_cap ? s->runs_cap * 2 : 16;
		struct run *p = realloc(s->runs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->runs = p;
		s->runs_cap = cap;
	}
	s->runs[s->nruns++] = *r;
	return 0;
}

/* Sorts what is in memory and writes it as a run. */
static int spill(struct sorter *s)
{
	struct rec *idx = index_base(s);
	struct run_writer w = { 0 };
	size_t i, bufsize = io_buf_size(s);
	uint8_t *wbuf;
	struct run r;
	int err = 0;

	if (s->files[s->cur].fd < 0) {
		err = run_file_open(&s->files[s->cur], s->dir);
		if (err)
			return fail(s, err, "temporary file");
	}
	wbuf = malloc(bufsize);
	if (!wbuf)
		return fail(s, -ENOMEM, "sort buffer");
	qsort(idx, s->n, sizeof(*idx), cmp_rec);
	run_writer_begin(&w, &s->files[s->cur], wbuf, bufsize);
	for (i = 0; i < s->n && !err; i++)
		err = run_writer_put(&w, idx[i].key, s->buf + idx[i].off,
				     idx[i].len);
	if (!err)
		err = run_writer_end(&w, &r);
	free(wbuf);
	if (!err)
		err = add_run(s, &r);
	if (err)
		return fail(s, err, "writing a sorted run");
	s->stats.runs++;
	s->stats.spilled_bytes += w.written;
	s->front = 0;
	s->n = 0;
	return 0;
}

/* Grows the buffer to hold `need` bytes in use (never past the limit
 * unless one record needs it). */
static int grow(struct sorter *s, size_t need)
{
	size_t cap = s->cap ? s->cap : 64u << 10, idx = s->n * sizeof(struct rec);
	uint8_t *b;

	while (cap < need && cap < s->limit)
		cap *= 2;
	if (cap > s->limit)
		cap = (size_t)s->limit;
	if (cap < need)
		cap = need;
	cap = (cap + 7) & ~(size_t)7;
	b = realloc(s->buf, cap);
	if (!b)
		return fail(s, -ENOMEM, "sort buffer");
	memmove(b + cap - idx, b + s->cap - idx, idx);
	s->buf = b;
	s->cap = cap;
	return 0;
}

int sorter_add(struct sorter *s, int64_t key, const void *data, size_t len)
{
	size_t used = s->front + s->n * sizeof(struct rec);
	size_t need = len + sizeof(struct rec);
	struct rec *r;
	int err;

	if (s->errnum)
		return s->errnum;
	if (len > SIZE_MAX / 2)
		return fail(s, -EFBIG, "record");
	if (used + need > s->cap) {
		if (s->n && used + need > s->limit) {
			err = spill(s);
			if (err)
				return err;
			used = 0;
		}
		if (used + need > s->cap && (err = grow(s, used + need)))
			return err;
	}
	memcpy(s->buf + s->front, data, len);
	s->n++;
	r = index_base(s);
	*r = (struct rec){ key, s->front, len };
	s->front += len;
	s->stats.records++;
	s->stats.bytes += len;
	return 0;
}

/* Emits what is in memory, in order, without touching the disk. */
static int emit_memory(struct sorter *s, sorter_emit_fn emit, void *ctx)
{
	struct rec *idx = index_base(s);
	size_t i;
	int err = 0;

	if (!s->n)
		return 0;
	qsort(idx, s->n, sizeof(*idx), cmp_rec);
	for (i = 0; i < s->n && !err; i++)
		err = emit(ctx, idx[i].key, s->buf + idx[i].off, idx[i].len);
	return err;
}

static int to_writer(void *ctx, int64_t key, const uint8_t *data, size_t len)
{
	return run_writer_put(ctx, key, data, len);
}

/* One pass: merges groups of `fanin` runs into runs of the other file. */
static int merge_pass(struct sorter *s, size_t fanin, size_t bufsize)
{
	struct run_file *in = &s->files[s->cur], *out = &s->files[!s->cur];
	size_t nin = s->nruns, i, nout = 0;
	uint8_t *wbuf = malloc(bufsize);
	int err = 0;

	if (!wbuf)
		return fail(s, -ENOMEM, "merge buffer");
	if (out->fd < 0)
		err = run_file_open(out, s->dir);
	else
		err = run_file_reset(out);
	for (i = 0; !err && i < nin; i += fanin) {
		size_t k = nin - i < fanin ? nin - i : fanin;
		struct run_writer w = { 0 };
		struct run r;

		run_writer_begin(&w, out, wbuf, bufsize);
		err = runs_merge(in, &s->runs[i], k, bufsize, to_writer, &w);
		if (!err)
			err = run_writer_end(&w, &r);
		s->stats.spilled_bytes += w.written;
		if (!err)
			s->runs[nout++] = r; /* nout <= i: never read again */
	}
	free(wbuf);
	if (err)
		return fail(s, err, "merging sorted runs");
	s->nruns = nout;
	s->cur = !s->cur;
	s->stats.merge_passes++;
	return run_file_reset(in);
}

/* The caller's emit, noting whether an error came from it. */
struct outer {
	sorter_emit_fn emit;
	void *ctx;
	bool failed;
};

static int emit_outer(void *ctx, int64_t key, const uint8_t *data, size_t len)
{
	struct outer *o = ctx;
	int err = o->emit(o->ctx, key, data, len);

	o->failed = err != 0;
	return err;
}

int sorter_finish(struct sorter *s, sorter_emit_fn emit, void *ctx)
{
	struct outer outer = { emit, ctx, false };
	size_t bufsize = io_buf_size(s), fanin;
	int err;

	if (s->errnum || s->finished)
		return s->errnum ? s->errnum : -EINVAL;
	s->finished = true;
	if (!s->nruns) {
		s->stats.merge_passes = 0;
		return emit_memory(s, emit, ctx);
	}
	if (s->n && (err = spill(s)))
		return err;
	free(s->buf); /* the merge buffers take its place */
	s->buf = NULL;
	s->cap = 0;
	fanin = (size_t)(s->limit / (2 * bufsize));
	if (fanin < 2)
		fanin = 2;
	if (fanin > FANIN_MAX)
		fanin = FANIN_MAX;
	while (s->nruns > fanin)
		if ((err = merge_pass(s, fanin, bufsize)))
			return err;
	s->stats.merge_passes++;
	err = runs_merge(&s->files[s->cur], s->runs, s->nruns, bufsize,
			 emit_outer, &outer);
	if (err && !outer.failed)
		fail(s, err, "reading sorted runs");
	return err;
}
