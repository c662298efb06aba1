/* Building `dump` lines: typed fields appended to a reusable array, plus
 * per-line storage for computed strings. Out of memory aborts: a dump
 * tool has no useful way to continue without its output line. */
#include "dump/line.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fputs("bpftrace-rec: error: out of memory\n", stderr);
		abort();
	}
	return p;
}

void line_begin(struct line *l, const char *kind, bool has_ts, uint64_t ts,
		bool has_cpu, uint64_t cpu)
{
	size_t i;

	for (i = 0; i < l->n_owned; i++)
		free(l->owned[i]);
	l->n_owned = 0;
	l->n = 0;
	l->kind = kind;
	l->has_ts = has_ts;
	l->ts = ts;
	l->has_cpu = has_cpu;
	l->cpu = cpu;
}

void line_free(struct line *l)
{
	line_begin(l, NULL, false, 0, false, 0);
	free(l->owned);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

static struct field *add(struct line *l, const char *key,
			 enum field_type type)
{
	struct field *f;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->f = xrealloc(l->f, l->cap * sizeof(*l->f));
	}
	f = &l->f[l->n++];
	memset(f, 0, sizeof(*f));
	f->key = key;
	f->type = type;
	return f;
}

void line_int(struct line *l, const char *key, int64_t v)
{
	add(l, key, F_INT)->i = v;
}

void line_uint(struct line *l, const char *key, uint64_t v)
{
	add(l, key, F_UINT)->u = v;
}

void line_hex(struct line *l, const char *key, uint64_t v)
{
	add(l, key, F_HEX)->u = v;
}

void line_bool(struct line *l, const char *key, bool v)
{
	add(l, key, F_BOOL)->u = v;
}

void line_str(struct line *l, const char *key, const char *s)
{
	add(l, key, F_STR)->s = s ? s : "";
}

void line_strv(struct line *l, const char *key, char *const *v, size_t n,
	       char sep)
{
	struct field *f = add(l, key, F_STRV);

	f->sv.v = v;
	f->sv.n = n;
	f->sv.sep = sep;
}

void line_uintv(struct line *l, const char *key, const uint64_t *v, size_t n)
{
	struct field *f = add(l, key, F_UINTV);

	f->uv.v = v;
	f->uv.n = n;
}

void line_state(struct line *l, const char *key, int64_t v, const char *label)
{
	struct field *f = add(l, key, F_STATE);

	f->i = v;
	f->label = label;
}

void line_unknown(struct line *l, const char *key)
{
	add(l, key, F_UNKNOWN);
}

void line_flag(struct line *l, const char *key)
{
	add(l, key, F_FLAG);
}

void *line_alloc(struct line *l, size_t size)
{
	void *p = xrealloc(NULL, size);

	if (l->n_owned == l->cap_owned) {
		l->cap_owned = l->cap_owned ? l->cap_owned * 2 : 8;
		l->owned = xrealloc(l->owned, l->cap_owned * sizeof(*l->owned));
	}
	l->owned[l->n_owned++] = p;
	return p;
}

void line_bytes_hex(struct line *l, const char *key, const uint8_t *b,
		    size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = line_alloc(l, 2 * n + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		s[2 * i] = digits[b[i] >> 4];
		s[2 * i + 1] = digits[b[i] & 15];
	}
	s[2 * n] = '\0';
	line_str(l, key, s);
}

char *line_printf(struct line *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = line_alloc(l, n > 0 ? (size_t)n + 1 : 1);
	va_start(ap, fmt);
	vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	va_end(ap);
	return s;
}

void line_msg_fields(struct line *l, const ProtobufCMessage *m,
		     const char *prefix, const char *const *names)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	for (; *names; names++) {
		const ProtobufCFieldDescriptor *fd =
			protobuf_c_message_descriptor_get_field_by_name(d,
									*names);
		const char *key, *p;

		if (!fd)
			continue;
		key = *prefix ? line_printf(l, "%s%s", prefix, *names) : *names;
		p = (const char *)m + fd->offset;
		switch (fd->type) {
		case PROTOBUF_C_TYPE_UINT64:
			line_uint(l, key, *(const uint64_t *)p);
			break;
		case PROTOBUF_C_TYPE_UINT32:
			line_uint(l, key, *(const uint32_t *)p);
			break;
		case PROTOBUF_C_TYPE_INT64:
			line_int(l, key, *(const int64_t *)p);
			break;
		case PROTOBUF_C_TYPE_INT32:
		case PROTOBUF_C_TYPE_ENUM:
			line_int(l, key, *(const int32_t *)p);
			break;
		case PROTOBUF_C_TYPE_BOOL:
			line_bool(l, key, *(const protobuf_c_boolean *)p);
			break;
		default:
			break;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void line_unknown_fields(struct line *l, const char *key,
			 const ProtobufCMessage *m)
{
	uint64_t *v = line_alloc(l, m->n_unknown_fields * sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < m->n_unknown_fields; i++)
		v[i] = m->unknown_fields[i].tag;
	qsort(v, m->n_unknown_fields, sizeof(*v), cmp_u64);
	for (i = 0; i < m->n_unknown_fields; i++)
		if (n == 0 || v[n - 1] != v[i])
			v[n++] = v[i];
	line_uintv(l, key, v, n);
}
