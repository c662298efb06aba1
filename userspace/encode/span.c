/* The span writer's region changes and its scratch fallback. */
#include "encode/span.h"

#include <errno.h>
#include <stdlib.h>

static uint8_t *scratch;
static size_t scratch_cap;

static void scratch_free(void)
{
	free(scratch);
	scratch = NULL;
	scratch_cap = 0;
}

static int fail(struct span_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	w->sp.p = w->sp.end = NULL;
	w->left = 0;
	return err;
}

int span_begin(struct span_writer *w, struct packet_sink *sink,
	       uint32_t seq_id, size_t len)
{
	int e;

	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->seq_id = seq_id;
	w->len = len;
	if (sink->reserve) {
		e = sink->reserve(sink, seq_id, len, &w->sp);
		if (e)
			return fail(w, e);
		w->left = len - (size_t)(w->sp.end - w->sp.p);
		return 0;
	}
	if (len > scratch_cap) {
		size_t cap = len < 4096 ? 4096 : len * 2;
		uint8_t *n = realloc(scratch, cap);

		if (!n)
			return fail(w, -ENOMEM);
		if (!scratch)
			atexit(scratch_free);
		scratch = n;
		scratch_cap = cap;
	}
	w->scratch = 1;
	w->sp.p = scratch;
	w->sp.end = scratch + len;
	return 0;
}

void span_put_split(struct span_writer *w, const uint8_t *src, size_t n)
{
	while (n && !w->err) {
		size_t room = (size_t)(w->sp.end - w->sp.p);
		size_t k = room < n ? room : n;

		memcpy(w->sp.p, src, k);
		w->sp.p += k;
		src += k;
		n -= k;
		if (!n)
			break;
		if (!w->left) {
			fail(w, -EPROTO); /* more bytes than declared */
			break;
		}
		{
			int e = w->sink->advance(w->sink, w->seq_id, &w->sp);

			if (e) {
				fail(w, e);
				break;
			}
		}
		w->left -= (size_t)(w->sp.end - w->sp.p);
	}
}

struct span_buffer {
	ProtobufCBuffer base;
	struct span_writer *w;
};

static void span_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	span_put(((struct span_buffer *)b)->w, data, len);
}

void span_message(struct span_writer *w, const ProtobufCMessage *m,
		  size_t len)
{
	struct span_buffer b = { { span_append }, w };

	if ((size_t)(w->sp.end - w->sp.p) >= len)
		w->sp.p += protobuf_c_message_pack(m, w->sp.p);
	else
		protobuf_c_message_pack_to_buffer(m, &b.base);
}

int span_end(struct span_writer *w)
{
	if (w->err)
		return w->err;
	if (w->sp.p != w->sp.end || w->left)
		return fail(w, -EPROTO); /* fewer bytes than declared */
	if (w->scratch)
		return sink_write(w->sink, w->seq_id, scratch, w->len);
	return 0;
}
