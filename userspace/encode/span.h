/* Writing one packet of known length straight into a sink: into the sink's
 * own memory when it offers reserve/advance (the central buffer: the bytes
 * are encoded once, in the chunk that keeps them), otherwise into a scratch
 * buffer handed to the sink's write() at the end. */
#ifndef BTR_SPAN_H
#define BTR_SPAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "output/sink.h"
#include "util/wire.h"

struct span_writer {
	struct packet_sink *sink;
	uint32_t seq_id;
	size_t len;        /* declared packet length */
	size_t left;       /* bytes after the current region */
	struct sink_span sp;
	int err;           /* first error; later writes do nothing */
	int scratch;       /* writing into the scratch buffer */
};

/* Starts a packet of exactly `len` bytes on sequence seq_id. Returns 0 or a
 * negative errno (also kept in w->err). */
int span_begin(struct span_writer *w, struct packet_sink *sink,
	       uint32_t seq_id, size_t len);
/* The slow paths of the writers below: bytes that cross a region. */
void span_put_split(struct span_writer *w, const uint8_t *src, size_t n);
/* Writes protobuf-c message m, whose packed size is len: packed in place
 * when the region holds it, else through protobuf-c's buffer interface. */
void span_message(struct span_writer *w, const ProtobufCMessage *m,
		  size_t len);
/* Ends the packet: every declared byte must have been written (-EPROTO
 * otherwise). Returns 0 or the first error. */
int span_end(struct span_writer *w);

static inline void span_put(struct span_writer *w, const void *src, size_t n)
{
	if ((size_t)(w->sp.end - w->sp.p) >= n) {
		memcpy(w->sp.p, src, n);
		w->sp.p += n;
		return;
	}
	span_put_split(w, src, n);
}

static inline void span_varint(struct span_writer *w, uint64_t v)
{
	uint8_t tmp[WIRE_VARINT_MAX];

	if (w->sp.end - w->sp.p >= WIRE_VARINT_MAX) {
		w->sp.p += wire_put_varint(w->sp.p, v);
		return;
	}
	span_put_split(w, tmp, wire_put_varint(tmp, v));
}

/* A field's tag (number and wire type), as a varint. */
static inline void span_tag(struct span_writer *w, uint32_t num,
			    enum wire_type type)
{
	span_varint(w, (uint64_t)num << 3 | type);
}

/* Bytes that the tag and length of a LEN field of `len` bytes take. */
static inline size_t span_len_field_size(uint32_t num, size_t len)
{
	return wire_varint_size((uint64_t)num << 3) + wire_varint_size(len) +
	       len;
}

static inline size_t span_varint_field_size(uint32_t num, uint64_t v)
{
	return wire_varint_size((uint64_t)num << 3) + wire_varint_size(v);
}

#endif
