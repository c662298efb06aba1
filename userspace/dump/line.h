/* One output line of `dump`: the fixed columns (TS, CPU, KIND) and a list
 * of typed key/value fields. Packet decoders build lines with these
 * helpers; dump/text.c and dump/json.c print them. Strings are borrowed
 * (they must outlive the print) unless made with line_printf(). */
#ifndef BTR_DUMP_LINE_H
#define BTR_DUMP_LINE_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum field_type {
	F_INT,      /* signed decimal */
	F_UINT,     /* unsigned decimal */
	F_HEX,      /* text 0x..., JSON number */
	F_BOOL,     /* text 1/0, JSON true/false */
	F_STR,      /* text escaped, JSON string */
	F_STRV,     /* list: text joined by `sep`, JSON array of strings */
	F_UINTV,    /* list: text joined by ',', JSON array of numbers */
	F_STATE,    /* text N(LABEL), JSON key: N and key_str: "LABEL" */
	F_UNKNOWN,  /* text ?, JSON null */
	F_FLAG,     /* text the bare key, JSON key: true */
};

struct field {
	const char *key;
	enum field_type type;
	union {
		int64_t i;
		uint64_t u;
		const char *s;
		struct {
			char *const *v;
			size_t n;
			char sep;
		} sv;
		struct {
			const uint64_t *v;
			size_t n;
		} uv;
	};
	const char *label; /* F_STATE */
};

struct line {
	bool has_ts, has_cpu;
	uint64_t ts, cpu;
	const char *kind;
	struct field *f;
	size_t n, cap;
	void **owned; /* line_printf() and line_alloc() storage */
	size_t n_owned, cap_owned;
};

/* Empties `l` (keeping its storage) and sets the fixed columns. */
void line_begin(struct line *l, const char *kind, bool has_ts, uint64_t ts,
		bool has_cpu, uint64_t cpu);
void line_free(struct line *l);

void line_int(struct line *l, const char *key, int64_t v);
void line_uint(struct line *l, const char *key, uint64_t v);
void line_hex(struct line *l, const char *key, uint64_t v);
void line_bool(struct line *l, const char *key, bool v);
void line_str(struct line *l, const char *key, const char *s); /* NULL: "" */
/* n bytes as lowercase hex (a build id). */
void line_bytes_hex(struct line *l, const char *key, const uint8_t *b,
		    size_t n);
void line_strv(struct line *l, const char *key, char *const *v, size_t n,
	       char sep);
void line_uintv(struct line *l, const char *key, const uint64_t *v,
		size_t n);
void line_state(struct line *l, const char *key, int64_t v,
		const char *label);
void line_unknown(struct line *l, const char *key);
void line_flag(struct line *l, const char *key);

/* Adds the integer fields `names` of a protobuf-c message, in that order,
 * each as prefix + name (0 when unset). */
void line_msg_fields(struct line *l, const ProtobufCMessage *m,
		     const char *prefix, const char *const *names);

/* Adds the numbers of the fields of `m` that the decoder did not know
 * (sorted, without repeats) as a list. */
void line_unknown_fields(struct line *l, const char *key,
			 const ProtobufCMessage *m);

/* Storage that lives until the next line_begin(). */
char *line_printf(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void *line_alloc(struct line *l, size_t size);

/* Printers (dump/text.c, dump/json.c); write to stdout. */
void text_print(const struct line *l);
void json_print(const struct line *l);

#endif
