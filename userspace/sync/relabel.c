/* Output machine ids, sequence ids, SystemInfo and left-out packets of a
 * merge (see relabel.h). */
#include "sync/relabel.h"

#include <errno.h>
#include <string.h>

void relabel_free(struct relabel *r)
{
	wbuf_free(&r->out);
}

/* SystemInfo payload p with machine_name set to name. */
static void sysinfo_named(struct wbuf *b, const uint8_t *p, size_t n,
			  const char *name)
{
	size_t mark = wbuf_begin_len(b, PKT_SYSTEM_INFO);

	if (p)
		wbuf_copy_except(b, p, n, SYSTEM_INFO_MACHINE_NAME);
	wbuf_field_bytes(b, SYSTEM_INFO_MACHINE_NAME, name, strlen(name));
	wbuf_end_len(b, mark);
}

/* The name the output must give machine m in a SystemInfo holding
 * payload p[0..n), or NULL when it already says so. */
static const char *rename_to(const struct machine *m, const uint8_t *p,
			     size_t n)
{
	const char *name;
	size_t len;

	if (!m->name)
		return NULL;
	if (system_info_machine_name(p, n, &name, &len) &&
	    len == strlen(m->name) && !memcmp(name, m->name, len))
		return NULL;
	return m->name;
}

/* TraceStats.writer_stats[].sequence_id (18, 1): the output ids. */
enum { TS_WRITER_STATS = 18, WS_SEQUENCE_ID = 1 };

static void trace_stats_renumbered(struct wbuf *b, const uint8_t *p, size_t n,
				   const struct seq_map *seqs)
{
	struct wire_reader rd, rw;
	struct wire_field f, g;
	size_t mark = wbuf_begin_len(b, PKT_TRACE_STATS), m;

	wire_reader_init(&rd, p, n);
	while (wire_next(&rd, &f) > 0) {
		if (f.num != TS_WRITER_STATS || f.type != WIRE_LEN) {
			wbuf_field_copy(b, &f);
			continue;
		}
		m = wbuf_begin_len(b, TS_WRITER_STATS);
		wire_reader_init(&rw, f.data, (size_t)f.val);
		while (wire_next(&rw, &g) > 0) {
			if (g.num == WS_SEQUENCE_ID && g.type == WIRE_VARINT &&
			    g.val <= UINT32_MAX)
				wbuf_field_varint(b, g.num, seq_map_get(
					seqs, (uint32_t)g.val));
			else
				wbuf_field_copy(b, &g);
		}
		wbuf_end_len(b, m);
	}
	wbuf_end_len(b, mark);
}

int relabel_packet(struct relabel *r, const struct input *in,
		   const struct packet_info *info, const uint8_t **data,
		   size_t *len)
{
	const struct file_machine *s =
		&in->scan.fm.v[file_machines_find(&in->scan.fm, info->machine_id)];
	struct machine *m = &r->tl->machines.v[s->machine];
	const char *name = NULL;
	struct wire_reader rd;
	struct wire_field f;
	bool renumber;

	if (info->remote_clock_sync)
		return 0;
	if (info->snapshot && (s->machine != r->tl->trace_clock.machine ||
			       s->tag))
		return 0;
	if (info->system_info) {
		if (m->sysinfo_done)
			return 0;
		m->sysinfo_done = true;
		name = rename_to(m, info->system_info, info->system_info_len);
	}
	renumber = info->trace_stats && in->scan.seqs.renumbered;
	if (!name && !renumber)
		return 1;
	r->out.len = 0;
	wire_reader_init(&rd, *data, *len);
	while (wire_next(&rd, &f) > 0) {
		if (f.num == PKT_SYSTEM_INFO && name && f.type == WIRE_LEN)
			sysinfo_named(&r->out, f.data, (size_t)f.val, name);
		else if (f.num == PKT_TRACE_STATS && renumber &&
			 f.type == WIRE_LEN)
			trace_stats_renumbered(&r->out, f.data, (size_t)f.val,
					       &in->scan.seqs);
		else
			wbuf_field_copy(&r->out, &f);
	}
	if (r->out.oom)
		return -ENOMEM;
	*data = r->out.p;
	*len = r->out.len;
	return 1;
}

int relabel_sysinfo_missing(struct relabel *r,
			    int (*emit)(void *ctx, const uint8_t *p,
					size_t n),
			    void *ctx)
{
	struct machine_table *t = &r->tl->machines;
	size_t i;
	int err;

	for (i = 0; i < t->n; i++) {
		struct machine *m = &t->v[i];

		if (m->sysinfo_done || !m->name)
			continue;
		m->sysinfo_done = true;
		r->out.len = 0;
		sysinfo_named(&r->out, NULL, 0, m->name);
		if (m->out_id)
			wbuf_field_varint(&r->out, PKT_MACHINE_ID, m->out_id);
		if (r->out.oom)
			return -ENOMEM;
		err = emit(ctx, r->out.p, r->out.len);
		if (err)
			return err;
	}
	return 0;
}
