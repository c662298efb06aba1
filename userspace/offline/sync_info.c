/* The trailer packet of a synced trace (see sync_info.h). */
#include "offline/sync_info.h"

#include <string.h>

enum { SI_TRACE_CLOCK = 1, SI_STAT = 2, SI_TOOL = 3, ST_NAME = 1, ST_VALUE = 2 };

void sync_info_build(struct wbuf *b, uint32_t trace_clock,
		     const struct sync_stats *st)
{
	static const char tool[] = "bpftrace-rec sync " BTR_VERSION;
	size_t m, s;
	int i;

	b->len = 0;
	m = wbuf_begin_len(b, SYNC_INFO_FIELD);
	wbuf_field_varint(b, SI_TRACE_CLOCK, trace_clock);
	for (i = 0; i < SYNC_STAT_COUNT; i++) {
		const char *name = sync_stat_name((enum sync_stat)i);

		if (!st->stat[i])
			continue;
		s = wbuf_begin_len(b, SI_STAT);
		wbuf_field_bytes(b, ST_NAME, name, strlen(name));
		wbuf_field_varint(b, ST_VALUE, st->stat[i]);
		wbuf_end_len(b, s);
	}
	wbuf_field_bytes(b, SI_TOOL, tool, sizeof(tool) - 1);
	wbuf_end_len(b, m);
}

void sync_info_each_stat(const uint8_t *p, size_t n,
			 void (*fn)(void *ctx, const char *name,
				    size_t name_len, uint64_t value),
			 void *ctx)
{
	struct wire_reader r, rs;
	struct wire_field f, g;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		const char *name = NULL;
		size_t len = 0;
		uint64_t value = 0;

		if (f.num != SI_STAT || f.type != WIRE_LEN)
			continue;
		wire_reader_init(&rs, f.data, (size_t)f.val);
		while (wire_next(&rs, &g) > 0) {
			if (g.num == ST_NAME && g.type == WIRE_LEN) {
				name = (const char *)g.data;
				len = (size_t)g.val;
			} else if (g.num == ST_VALUE && g.type == WIRE_VARINT) {
				value = g.val;
			}
		}
		if (name)
			fn(ctx, name, len, value);
	}
}

static void add_stat(void *ctx, const char *name, size_t len, uint64_t value)
{
	struct sync_stats *st = ctx;
	int i;

	for (i = 0; i < SYNC_STAT_COUNT; i++) {
		const char *s = sync_stat_name((enum sync_stat)i);

		if (strlen(s) == len && !memcmp(s, name, len))
			st->stat[i] += value;
	}
}

bool sync_info_read(const uint8_t *p, size_t n, uint32_t *trace_clock,
		    struct sync_stats *st)
{
	struct wire_reader r;
	struct wire_field f;
	bool found = false;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		if (f.num == SI_TRACE_CLOCK && f.type == WIRE_VARINT) {
			*trace_clock = (uint32_t)f.val;
			found = true;
		}
	}
	if (st)
		sync_info_each_stat(p, n, add_stat, st);
	return found;
}
