/* Writing the central buffer into trace files. */
#include "record/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

#define CHUNK_SIZE (32u * 1024u)

int output_open(struct trace_output *t, const struct record_opts *o,
		trailer_fn trailer, void *ctx)
{
	int e;

	memset(t, 0, sizeof(*t));
	t->o = o;
	t->trailer = trailer;
	t->trailer_ctx = ctx;
	mem_sink_init(&t->header);
	e = file_writer_open(&t->file, o->output);
	if (e)
		return e;
	if (o->stream)
		t->file.max_bytes = o->max_file_size;
	t->buf = central_new(o->buffer_size, CHUNK_SIZE,
			     (enum fill_policy)o->fill_policy);
	return t->buf ? 0 : -ENOMEM;
}

struct packet_sink *output_header_sink(struct trace_output *t)
{
	return &t->header.sink;
}

struct packet_sink *output_data_sink(struct trace_output *t)
{
	return central_sink(t->buf);
}

int output_write_header(struct trace_output *t)
{
	int e = mem_sink_replay(&t->header, &t->file.sink);

	if (!e)
		e = file_writer_flush(&t->file);
	t->header_written = !e;
	return e;
}

/* header (once per file), buffer contents, trailer. */
static int write_all(struct trace_output *t, struct file_writer *f,
		     bool consume, bool *header_done)
{
	int e = 0;

	if (!*header_done) {
		e = mem_sink_replay(&t->header, &f->sink);
		*header_done = !e;
	}
	central_flush(t->buf);
	if (!e)
		e = central_read(t->buf, &f->sink, consume);
	if (!e)
		e = t->trailer(t->trailer_ctx, &f->sink, !consume);
	if (!e)
		e = file_writer_flush(f);
	return e;
}

int output_write(struct trace_output *t)
{
	return write_all(t, &t->file, true, &t->header_written);
}

/* trace.pb -> trace.N.pb; other names -> name.N */
static char *snapshot_path(const char *out, unsigned n)
{
	const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
	char *p = NULL;
	int r;

	if (dot && (!slash || dot > slash + 1))
		r = asprintf(&p, "%.*s.%u%s", (int)(dot - out), out, n, dot);
	else
		r = asprintf(&p, "%s.%u", out, n);
	return r < 0 ? NULL : p;
}

int output_snapshot(struct trace_output *t)
{
	const char *base = strcmp(t->o->output, "-") ? t->o->output : "trace.pb";
	char *path = snapshot_path(base, ++t->snapshots);
	struct file_writer f;
	bool header = false;
	int e;

	if (!path)
		return -ENOMEM;
	e = file_writer_open(&f, path);
	if (e) {
		log_error("snapshot %s: %s", path, strerror(-e));
		free(path);
		return e;
	}
	e = write_all(t, &f, false, &header);
	if (!e)
		e = file_writer_close(&f);
	else
		file_writer_close(&f);
	if (e) {
		/* A cut snapshot would look like a whole one: remove it. */
		unlink(path);
		log_error("snapshot %s: %s (the incomplete file is removed; "
			  "recording goes on)", path, strerror(-e));
	} else {
		log_event("snapshot written to %s", path);
		free(t->last_snapshot);
		t->last_snapshot = path;
		t->last_snapshot_bytes = file_writer_bytes(&f);
		return 0;
	}
	free(path);
	return e;
}

int output_close(struct trace_output *t)
{
	int e = file_writer_close(&t->file);

	free(t->last_snapshot);
	t->last_snapshot = NULL;
	central_free(t->buf);
	mem_sink_free(&t->header);
	t->buf = NULL;
	return e;
}

void output_discard(struct trace_output *t)
{
	file_writer_discard(&t->file);
	free(t->last_snapshot);
	t->last_snapshot = NULL;
	central_free(t->buf);
	mem_sink_free(&t->header);
	t->buf = NULL;
}
