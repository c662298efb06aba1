/* Protobuf wire format, read and written by hand: a field iterator over a
 * message's bytes (each field with its exact byte span, so unknown fields
 * can be copied unchanged) and a growable output buffer with varint, tag and
 * nested-message helpers. Used where a message must be rewritten without
 * decoding it whole: `sync`, `dump` and the test tools. */
#ifndef BTR_WIRE_H
#define BTR_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum wire_type {
	WIRE_VARINT = 0,
	WIRE_I64 = 1,
	WIRE_LEN = 2,
	WIRE_SGROUP = 3, /* groups: not supported, reported as malformed */
	WIRE_EGROUP = 4,
	WIRE_I32 = 5,
};

#define WIRE_VARINT_MAX 10

/* One field of a message. */
struct wire_field {
	uint32_t num;
	enum wire_type type;
	uint64_t val;           /* VARINT, I64, I32: the value; LEN: length */
	const uint8_t *data;    /* LEN: the payload (val bytes) */
	const uint8_t *start;   /* the whole field, tag included: */
	const uint8_t *end;     /* [start, end) */
};

struct wire_reader {
	const uint8_t *p, *end;
	const char *err; /* why wire_next() returned -1 */
};

void wire_reader_init(struct wire_reader *r, const void *buf, size_t len);
/* 1: *f is the next field; 0: end of the message; -1: malformed (a varint
 * cut short or over 64 bits, a length past the end, field number 0, a
 * group or an invalid wire type), with r->err saying which. */
int wire_next(struct wire_reader *r, struct wire_field *f);

/* Decodes the varint at p (before end). Returns its size, or 0 when it is
 * cut short or longer than 10 bytes or 64 bits. */
size_t wire_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v);
/* The varint at *p (before end), moving *p past it; false at the end
 * (also for p == end == NULL) or when malformed. Varints of up to three
 * bytes (most deltas, pids and indexes of a packed array, field tags and
 * lengths) are read inline: for readers that walk packed arrays one value
 * at a time, and wire_next. */
static inline bool wire_read_varint(const uint8_t **p, const uint8_t *end,
				    uint64_t *v)
{
	const uint8_t *q = *p;
	size_t n;

	if (end - q >= 3) {
		if (q[0] < 0x80) {
			*v = q[0];
			*p = q + 1;
			return true;
		}
		if (q[1] < 0x80) {
			*v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
			*p = q + 2;
			return true;
		}
		if (q[2] < 0x80) {
			*v = (uint64_t)(q[0] & 0x7f) |
			     (uint64_t)(q[1] & 0x7f) << 7 | (uint64_t)q[2] << 14;
			*p = q + 3;
			return true;
		}
	} else if (q >= end) {
		return false;
	}
	n = wire_get_varint(q, end, v);
	*p = q + n;
	return n != 0;
}

/* Bytes p[0..n) (n <= 8, a constant) as a little-endian number: byte i
 * in bits 8i..8i+7. */
static inline uint64_t wire_load_le(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w); /* the n bytes were the high ones */
#endif
	return w;
}

/* The varint at p when it has at most three bytes and four can be read
 * (p + 4 <= end): its size, with the value in *v; 0 when it is longer
 * (nothing read). Without a branch on the size: for arrays whose values
 * take one, two or three bytes in no predictable order (time deltas). */
static inline size_t wire_read_varint3(const uint8_t *p, uint64_t *v)
{
	uint32_t w = (uint32_t)wire_load_le(p, 4);
	uint32_t stop = ~w & 0x808080u;  /* bytes that end the varint */

	if (!stop)
		return 0;
	w &= stop ^ (stop - 1);          /* the bytes up to the first end */
	*v = (w & 0x7fu) | ((w >> 1) & 0x3f80u) | ((w >> 2) & 0x1fc000u);
	return ((unsigned)__builtin_ctz(stop) >> 3) + 1;
}

/* Encodes v at p (room for WIRE_VARINT_MAX bytes); returns the size.
 * Inline: the recorder's encoder calls it for every field of every event. */
static inline size_t wire_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline size_t wire_varint_size(uint64_t v)
{
	/* 7 bits a byte: bits used (at least 1), rounded up */
	return ((size_t)(64 - __builtin_clzll(v | 1)) + 6) / 7;
}

/* Decodes a packed (LEN) or a single (VARINT) occurrence of a repeated
 * varint field, appending the values to *v (grown with realloc; *n values,
 * *cap slots). Returns 0, -1 for a malformed payload, -2 out of memory. */
int wire_append_varints(const struct wire_field *f, uint64_t **v, size_t *n,
			size_t *cap);

/* Growable byte buffer. Writers never fail: running out of memory sets
 * `oom` and later writes do nothing; check it once at the end. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void wbuf_free(struct wbuf *b);
/* Makes room for `extra` more bytes; false (and oom) if it cannot. */
bool wbuf_reserve(struct wbuf *b, size_t extra);
void wbuf_put(struct wbuf *b, const void *p, size_t n);
void wbuf_varint(struct wbuf *b, uint64_t v);
void wbuf_tag(struct wbuf *b, uint32_t num, enum wire_type type);
void wbuf_field_varint(struct wbuf *b, uint32_t num, uint64_t v);
void wbuf_field_bytes(struct wbuf *b, uint32_t num, const void *p, size_t n);
/* Copies a field read by wire_next() unchanged. */
void wbuf_field_copy(struct wbuf *b, const struct wire_field *f);
/* Every field of the message p[0..n) but those numbered skip, copied byte
 * for byte in their order (the walk stops at a malformed field). */
void wbuf_copy_except(struct wbuf *b, const void *p, size_t n, uint32_t skip);
/* A packed repeated varint field holding v[0..n) (nothing when n is 0). */
void wbuf_field_packed(struct wbuf *b, uint32_t num, const uint64_t *v,
		       size_t n);
/* Nested message: wbuf_begin_len() writes the tag and returns a mark to
 * give wbuf_end_len() once the payload is written; the length is then
 * filled in before the payload. */
size_t wbuf_begin_len(struct wbuf *b, uint32_t num);
void wbuf_end_len(struct wbuf *b, size_t mark);

#endif
