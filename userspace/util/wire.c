/* Protobuf wire format helpers (see wire.h). */
#include "util/wire.h"

#include <stdlib.h>
#include <string.h>

void wire_reader_init(struct wire_reader *r, const void *buf, size_t len)
{
	r->p = buf;
	r->end = r->p + len;
	r->err = NULL;
}

size_t wire_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t val = 0;
	size_t i;

	for (i = 0; i < WIRE_VARINT_MAX && p + i < end; i++) {
		uint8_t b = p[i];

		val |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (i == WIRE_VARINT_MAX - 1 && b > 1)
				return 0;
			*v = val;
			return i + 1;
		}
	}
	return 0;
}

static int bad(struct wire_reader *r, const char *why)
{
	r->err = why;
	return -1;
}

int wire_next(struct wire_reader *r, struct wire_field *f)
{
	const uint8_t *p = r->p;
	uint64_t tag, v;
	size_t n;

	if (p >= r->end)
		return 0;
	f->start = p;
	if (!wire_read_varint(&p, r->end, &tag))
		return bad(r, "malformed field tag");
	if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
		return bad(r, "invalid field number");
	f->num = (uint32_t)(tag >> 3);
	f->type = (enum wire_type)(tag & 7);
	f->data = NULL;
	switch (f->type) {
	case WIRE_VARINT:
		if (!wire_read_varint(&p, r->end, &v))
			return bad(r, "malformed varint");
		break;
	case WIRE_I64:
	case WIRE_I32:
		n = f->type == WIRE_I64 ? 8 : 4;
		if ((size_t)(r->end - p) < n)
			return bad(r, "fixed-width value cut short");
		v = 0;
		while (n--)
			v |= (uint64_t)p[n] << (8 * n);
		p += f->type == WIRE_I64 ? 8 : 4;
		break;
	case WIRE_LEN:
		if (!wire_read_varint(&p, r->end, &v))
			return bad(r, "malformed length");
		if (v > (uint64_t)(r->end - p))
			return bad(r, "length past the end of the message");
		f->data = p;
		p += v;
		break;
	default:
		return bad(r, "unsupported wire type (group or invalid)");
	}
	f->val = v;
	f->end = p;
	r->p = p;
	return 1;
}

int wire_append_varints(const struct wire_field *f, uint64_t **v, size_t *n,
			size_t *cap)
{
	const uint8_t *p, *end;
	size_t room;

	if (f->type == WIRE_VARINT) {
		p = NULL;
		end = NULL;
		room = 1;
	} else if (f->type == WIRE_LEN) {
		p = f->data;
		end = p + f->val;
		room = (size_t)f->val; /* at least one byte per value */
	} else {
		return -1;
	}
	if (*n + room > *cap) {
		size_t c = *cap ? *cap : 64;
		uint64_t *q;

		while (c < *n + room)
			c *= 2;
		q = realloc(*v, c * sizeof(*q));
		if (!q)
			return -2;
		*v = q;
		*cap = c;
	}
	if (f->type == WIRE_VARINT) {
		(*v)[(*n)++] = f->val;
		return 0;
	}
	while (p < end) {
		size_t k = wire_get_varint(p, end, &(*v)[*n]);

		if (!k)
			return -1;
		p += k;
		(*n)++;
	}
	return 0;
}

/* ---- output buffer ---- */

void wbuf_free(struct wbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

bool wbuf_reserve(struct wbuf *b, size_t extra)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (extra <= b->cap - b->len)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void wbuf_put(struct wbuf *b, const void *p, size_t n)
{
	if (n && wbuf_reserve(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

void wbuf_varint(struct wbuf *b, uint64_t v)
{
	if (wbuf_reserve(b, WIRE_VARINT_MAX))
		b->len += wire_put_varint(b->p + b->len, v);
}

void wbuf_tag(struct wbuf *b, uint32_t num, enum wire_type type)
{
	wbuf_varint(b, (uint64_t)num << 3 | (uint64_t)type);
}

void wbuf_field_varint(struct wbuf *b, uint32_t num, uint64_t v)
{
	wbuf_tag(b, num, WIRE_VARINT);
	wbuf_varint(b, v);
}

void wbuf_field_bytes(struct wbuf *b, uint32_t num, const void *p, size_t n)
{
	wbuf_tag(b, num, WIRE_LEN);
	wbuf_varint(b, n);
	wbuf_put(b, p, n);
}

void wbuf_field_copy(struct wbuf *b, const struct wire_field *f)
{
	wbuf_put(b, f->start, (size_t)(f->end - f->start));
}

void wbuf_copy_except(struct wbuf *b, const void *p, size_t n, uint32_t skip)
{
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0)
		if (f.num != skip)
			wbuf_field_copy(b, &f);
}

void wbuf_field_packed(struct wbuf *b, uint32_t num, const uint64_t *v,
		       size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += wire_varint_size(v[i]);
	wbuf_tag(b, num, WIRE_LEN);
	wbuf_varint(b, len);
	if (!wbuf_reserve(b, len))
		return;
	for (i = 0; i < n; i++)
		b->len += wire_put_varint(b->p + b->len, v[i]);
}

size_t wbuf_begin_len(struct wbuf *b, uint32_t num)
{
	wbuf_tag(b, num, WIRE_LEN);
	wbuf_put(b, "", 1); /* one length byte; wbuf_end_len() widens it */
	return b->len;
}

void wbuf_end_len(struct wbuf *b, size_t mark)
{
	size_t len, n;

	if (b->oom)
		return;
	len = b->len - mark;
	n = wire_varint_size(len);
	if (n > 1) {
		if (!wbuf_reserve(b, n - 1))
			return;
		memmove(b->p + mark + n - 1, b->p + mark, len);
		b->len += n - 1;
	}
	wire_put_varint(b->p + mark - 1, len);
}
