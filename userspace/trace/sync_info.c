/* The trailer packet of a synced trace (see sync_info.h). */
#include "trace/sync_info.h"

#include <string.h>

enum {
	SI_TRACE_CLOCK = 1, SI_STAT = 2, SI_TOOL = 3,
	ST_NAME = 1, ST_VALUE = 2, ST_MACHINE = 3,
};

static void put_stat(struct wbuf *b, enum sync_stat s, uint32_t machine_id,
		     uint64_t value)
{
	const char *name = sync_stat_name(s);
	size_t m;

	if (!value)
		return;
	m = wbuf_begin_len(b, SI_STAT);
	wbuf_field_bytes(b, ST_NAME, name, strlen(name));
	wbuf_field_varint(b, ST_VALUE, value);
	if (machine_id)
		wbuf_field_varint(b, ST_MACHINE, machine_id);
	wbuf_end_len(b, m);
}

static void put_stat_cb(void *ctx, enum sync_stat s, size_t idx,
			uint32_t machine_id, uint64_t value)
{
	(void)idx;
	put_stat(ctx, s, machine_id, value);
}

void sync_info_build(struct wbuf *b, const struct timeline *tl,
		     const struct sync_stats *st)
{
	static const char tool[] = "bpftrace-rec sync " BTR_VERSION;
	size_t m;
	int i;

	b->len = 0;
	m = wbuf_begin_len(b, SYNC_INFO_FIELD);
	wbuf_field_varint(b, SI_TRACE_CLOCK, tl->trace_clock.clock_id);
	for (i = 0; i < SYNC_STAT_COUNT; i++)
		timeline_each_machine_stat(tl, st, (enum sync_stat)i,
					   put_stat_cb, b);
	wbuf_field_bytes(b, SI_TOOL, tool, sizeof(tool) - 1);
	wbuf_end_len(b, m);
}

void sync_info_each_machine_stat(const uint8_t *p, size_t n,
				 void (*fn)(void *ctx,
					    const struct sync_info_stat *s),
				 void *ctx)
{
	struct wire_reader r, rs;
	struct wire_field f, g;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		struct sync_info_stat s = { 0 };

		if (f.num != SI_STAT || f.type != WIRE_LEN)
			continue;
		wire_reader_init(&rs, f.data, (size_t)f.val);
		while (wire_next(&rs, &g) > 0) {
			if (g.num == ST_NAME && g.type == WIRE_LEN) {
				s.name = (const char *)g.data;
				s.name_len = (size_t)g.val;
			} else if (g.num == ST_VALUE && g.type == WIRE_VARINT) {
				s.value = g.val;
			} else if (g.num == ST_MACHINE &&
				   g.type == WIRE_VARINT) {
				s.machine_id = (uint32_t)g.val;
			}
		}
		if (s.name)
			fn(ctx, &s);
	}
}

/* The stat named by s, or -1 for a name we do not count. */
static int stat_of(const struct sync_info_stat *s)
{
	int i;

	for (i = 0; i < SYNC_STAT_COUNT; i++) {
		const char *name = sync_stat_name((enum sync_stat)i);

		if (strlen(name) == s->name_len &&
		    !memcmp(name, s->name, s->name_len))
			return i;
	}
	return -1;
}

static void add_stat(void *ctx, const struct sync_info_stat *s)
{
	struct sync_stats *st = ctx;
	int i = stat_of(s);

	if (i >= 0)
		st->stat[i] += s->value;
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
		sync_info_each_machine_stat(p, n, add_stat, st);
	return found;
}

struct fold {
	const struct file_machines *fm;
	struct timeline *tl;
};

static void fold_stat(void *ctx, const struct sync_info_stat *s)
{
	const struct fold *x = ctx;
	uint32_t slot = file_machines_find(x->fm, s->machine_id);
	int i = stat_of(s);

	if (i >= 0)
		timeline_count(x->tl, NULL, x->fm->v[slot].machine,
			       (enum sync_stat)i, s->value);
}

void sync_info_read_machines(const uint8_t *p, size_t n,
			     const struct file_machines *fm,
			     struct timeline *tl)
{
	struct fold x = { fm, tl };

	sync_info_each_machine_stat(p, n, fold_stat, &x);
}

bool sync_info_find(const ProtobufCMessage *pkt, const uint8_t **p,
		    size_t *n)
{
	size_t i;

	for (i = 0; i < pkt->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *f = &pkt->unknown_fields[i];
		uint64_t len = 0;
		size_t k;

		if (f->tag != SYNC_INFO_FIELD ||
		    f->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
			continue;
		k = wire_get_varint(f->data, f->data + f->len, &len);
		if (!k || len != f->len - k)
			continue;
		*p = f->data + k;
		*n = (size_t)len;
		return true;
	}
	return false;
}
