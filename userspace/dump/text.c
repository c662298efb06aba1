/* Text form of a `dump` line: "TS CPU KIND key=value ...", one space
 * between fields. Values keep printable ASCII; a space, '=', '\', control
 * and non-ASCII bytes become \xNN, so a value never contains a space. */
#include <inttypes.h>
#include <stdio.h>

#include "dump/line.h"

static void put_escaped(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '=' && *p != '\\')
			putchar(*p);
		else
			printf("\\x%02x", *p);
	}
}

static void put_column(bool has, uint64_t v)
{
	if (has)
		printf("%" PRIu64 " ", v);
	else
		fputs("- ", stdout);
}

static void put_value(const struct field *f)
{
	char sep[2] = { 0, 0 };
	size_t i;

	switch (f->type) {
	case F_INT:
		printf("%" PRId64, f->i);
		break;
	case F_UINT:
		printf("%" PRIu64, f->u);
		break;
	case F_HEX:
		printf("0x%" PRIx64, f->u);
		break;
	case F_BOOL:
		putchar(f->u ? '1' : '0');
		break;
	case F_STR:
		put_escaped(f->s);
		break;
	case F_STRV:
		sep[0] = f->sv.sep;
		for (i = 0; i < f->sv.n; i++) {
			if (i)
				put_escaped(sep);
			put_escaped(f->sv.v[i] ? f->sv.v[i] : "");
		}
		break;
	case F_UINTV:
		for (i = 0; i < f->uv.n; i++)
			printf(i ? ",%" PRIu64 : "%" PRIu64, f->uv.v[i]);
		break;
	case F_STATE:
		printf("%" PRId64 "(%s)", f->i, f->label);
		break;
	case F_UNKNOWN:
		putchar('?');
		break;
	case F_FLAG:
		break;
	}
}

void text_print(const struct line *l)
{
	size_t i;

	put_column(l->has_ts, l->ts);
	put_column(l->has_cpu, l->cpu);
	fputs(l->kind, stdout);
	for (i = 0; i < l->n; i++) {
		putchar(' ');
		fputs(l->f[i].key, stdout);
		if (l->f[i].type == F_FLAG)
			continue;
		putchar('=');
		put_value(&l->f[i]);
	}
	putchar('\n');
}
