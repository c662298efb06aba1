/* Collecting a trace's statistics into stats rows. */
#include "stats/table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto/trace.pb-c.h"
#include "trace/reader.h"

typedef Perfetto__Protos__TraceStats__BufferStats BufferStats;

/* What the packets say, gathered in one pass; the last TraceStats and
 * FtraceStats win, as in trace_processor. */
struct gather {
	Perfetto__Protos__TracePacket *trace_stats; /* kept unpacked */
	Perfetto__Protos__TracePacket *ftrace_start, *ftrace_end;
	bool write_into_file;
	int64_t fill_policy[16];
	size_t nbuffers;
	uint8_t *cpu_lost;           /* cpu -> bundle with lost_events seen */
	size_t ncpu_lost;
	uint32_t *seq_seen;          /* sequences that had a first packet */
	uint64_t *seq_dropped;       /* by sequence: later flagged packets */
	size_t nseq;
};

static int add(struct stat_table *t, const char *name, int64_t idx,
	       enum stat_severity sev, enum stat_source src, int64_t value)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct stat_row *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap = cap;
	}
	t->rows[t->n++] = (struct stat_row){ name, idx, sev, src, value };
	return 0;
}

static int grow_to(void **arr, size_t *n, size_t need, size_t elem)
{
	void *p;

	if (need <= *n)
		return 0;
	p = realloc(*arr, need * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *n * elem, 0, (need - *n) * elem);
	*arr = p;
	*n = need;
	return 0;
}

/* Keeps p in *slot (replacing the older one); returns true if kept. */
static bool keep(Perfetto__Protos__TracePacket **slot,
		 Perfetto__Protos__TracePacket *p)
{
	if (*slot)
		perfetto__protos__trace_packet__free_unpacked(*slot, NULL);
	*slot = p;
	return true;
}

static void note_sequence(struct gather *g, const Perfetto__Protos__TracePacket *p)
{
	uint32_t seq = p->trusted_packet_sequence_id;
	size_t n = g->nseq;

	if (p->optional_trusted_packet_sequence_id_case !=
		    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID ||
	    seq > (1u << 20))
		return;
	if (grow_to((void **)&g->seq_seen, &n, seq + 1, sizeof(uint32_t)))
		return;
	n = g->nseq;
	if (grow_to((void **)&g->seq_dropped, &n, seq + 1, sizeof(uint64_t)))
		return;
	g->nseq = n;
	/* The first packet of a sequence always looks like a loss. */
	if (g->seq_seen[seq] && p->has_previous_packet_dropped &&
	    p->previous_packet_dropped)
		g->seq_dropped[seq]++;
	g->seq_seen[seq] = 1;
}

static bool gather_packet(struct gather *g, Perfetto__Protos__TracePacket *p)
{
	note_sequence(g, p);
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS:
		return keep(&g->trace_stats, p);
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS:
		if (p->ftrace_stats->phase ==
		    PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE)
			return keep(&g->ftrace_start, p);
		if (p->ftrace_stats->phase ==
		    PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE)
			return keep(&g->ftrace_end, p);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG: {
		const Perfetto__Protos__TraceConfig *c = p->trace_config;
		size_t i;

		g->write_into_file = c->write_into_file;
		g->nbuffers = c->n_buffers < 16 ? c->n_buffers : 16;
		for (i = 0; i < g->nbuffers; i++)
			g->fill_policy[i] = c->buffers[i]->fill_policy;
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS: {
		uint32_t cpu = p->ftrace_events->cpu;

		if (p->ftrace_events->lost_events && cpu < 4096 &&
		    !grow_to((void **)&g->cpu_lost, &g->ncpu_lost, cpu + 1, 1))
			g->cpu_lost[cpu] = 1;
		break;
	}
	default:
		break;
	}
	return false;
}

static int read_packets(struct gather *g, const char *path, char *err,
			size_t errlen)
{
	struct trace_reader *r = trace_reader_open(path, err, errlen);
	const uint8_t *pkt;
	size_t len;
	uint64_t off;
	int rc;

	if (!r)
		return -1;
	while ((rc = trace_reader_next(r, &pkt, &len, &off)) == TRACE_READ_PACKET) {
		Perfetto__Protos__TracePacket *p =
			perfetto__protos__trace_packet__unpack(NULL, len, pkt);

		if (!p) {
			snprintf(err, errlen, "%s: offset %llu: cannot decode the TracePacket",
				 trace_reader_name(r), (unsigned long long)off);
			trace_reader_close(r);
			return -1;
		}
		if (!gather_packet(g, p))
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	if (rc == TRACE_READ_ERROR)
		snprintf(err, errlen, "%s", trace_reader_error(r));
	trace_reader_close(r);
	return rc == TRACE_READ_ERROR ? -1 : 0;
}

static int buffer_rows(struct stat_table *t, const BufferStats *b, int64_t i,
		       const struct gather *g)
{
	const struct {
		const char *name;
		enum stat_severity sev;
		size_t off;
	} f[] = {
#define F(n, s) { "traced_buf_" #n, s, offsetof(BufferStats, n) }
		F(buffer_size, SEV_INFO), F(bytes_written, SEV_INFO),
		F(bytes_overwritten, SEV_INFO), F(bytes_read, SEV_INFO),
		F(chunks_written, SEV_INFO), F(chunks_overwritten, SEV_INFO),
		F(chunks_discarded, SEV_INFO), F(chunks_read, SEV_INFO),
		F(write_wrap_count, SEV_INFO), F(readaheads_failed, SEV_INFO),
		F(trace_writer_packet_loss, SEV_DATA_LOSS),
		F(patches_failed, SEV_DATA_LOSS), F(abi_violations, SEV_DATA_LOSS),
#undef F
	};
	size_t k;
	int e = 0;

	for (k = 0; k < sizeof(f) / sizeof(f[0]) && !e; k++)
		e = add(t, f[k].name, i, f[k].sev, SRC_TRACE,
			(int64_t)*(const uint64_t *)((const char *)b + f[k].off));
	if (!e && g->write_into_file && b->bytes_overwritten)
		e = add(t, "long_trace_mode_bytes_overwritten", i, SEV_DATA_LOSS,
			SRC_ANALYSIS, (int64_t)b->bytes_overwritten);
	if (!e && g->write_into_file && (size_t)i < g->nbuffers &&
	    g->fill_policy[i] ==
		    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD)
		e = add(t, "config_write_into_file_discard", i, SEV_DATA_LOSS,
			SRC_ANALYSIS, 1);
	return e;
}

/* Per-sequence losses folded into their buffer through writer_stats. */
static int sequence_loss_rows(struct stat_table *t, const struct gather *g,
			      const Perfetto__Protos__TraceStats *ts)
{
	uint64_t loss[16] = { 0 };
	size_t i;
	int e = 0;

	for (i = 0; ts && i < ts->n_writer_stats; i++) {
		uint64_t seq = ts->writer_stats[i]->sequence_id;
		uint32_t buf = ts->writer_stats[i]->buffer;

		if (seq < g->nseq && buf < 16)
			loss[buf] += g->seq_dropped[seq];
	}
	for (i = 0; ts && i < ts->n_buffer_stats && i < 16 && !e; i++)
		e = add(t, "traced_buf_sequence_packet_loss", (int64_t)i,
			SEV_DATA_LOSS, SRC_ANALYSIS, (int64_t)loss[i]);
	return e;
}

static int trace_stats_rows(struct stat_table *t, const struct gather *g)
{
	const Perfetto__Protos__TraceStats *ts =
		g->trace_stats ? g->trace_stats->trace_stats : NULL;
	size_t i;
	int e = 0;

	for (i = 0; ts && i < ts->n_buffer_stats && !e; i++)
		e = buffer_rows(t, ts->buffer_stats[i], (int64_t)i, g);
	if (!e && ts)
		e = add(t, "traced_flushes_failed", -1, SEV_DATA_LOSS, SRC_TRACE,
			(int64_t)ts->flushes_failed);
	if (!e && ts)
		e = add(t, "traced_final_flush_failed", -1, SEV_DATA_LOSS,
			SRC_TRACE,
			ts->final_flush_outcome ==
				PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_FAILED);
	return e ? e : sequence_loss_rows(t, g, ts);
}

static const Perfetto__Protos__FtraceCpuStats *
cpu_stats(const Perfetto__Protos__TracePacket *p, uint64_t cpu)
{
	size_t i;

	for (i = 0; p && i < p->ftrace_stats->n_cpu_stats; i++)
		if (p->ftrace_stats->cpu_stats[i]->cpu == cpu)
			return p->ftrace_stats->cpu_stats[i];
	return NULL;
}

/* begin, end and delta rows of one FtraceCpuStats counter. */
static int ftrace_counter_rows(struct stat_table *t, const char *const names[3],
			       enum stat_severity delta_sev, int64_t cpu,
			       int64_t begin, int64_t end)
{
	int e = add(t, names[0], cpu, SEV_INFO, SRC_TRACE, begin);

	if (!e)
		e = add(t, names[1], cpu, SEV_INFO, SRC_TRACE, end);
	return e ? e : add(t, names[2], cpu, delta_sev, SRC_TRACE, end - begin);
}

static int ftrace_rows(struct stat_table *t, const struct gather *g)
{
	static const char *const overrun[3] = { "ftrace_cpu_overrun_begin",
		"ftrace_cpu_overrun_end", "ftrace_cpu_overrun_delta" };
	static const char *const dropped[3] = { "ftrace_cpu_dropped_events_begin",
		"ftrace_cpu_dropped_events_end", "ftrace_cpu_dropped_events_delta" };
	static const char *const readev[3] = { "ftrace_cpu_read_events_begin",
		"ftrace_cpu_read_events_end", "ftrace_cpu_read_events_delta" };
	size_t i;
	int e = 0;

	for (i = 0; g->ftrace_end && i < g->ftrace_end->ftrace_stats->n_cpu_stats && !e; i++) {
		const Perfetto__Protos__FtraceCpuStats *end =
			g->ftrace_end->ftrace_stats->cpu_stats[i];
		const Perfetto__Protos__FtraceCpuStats *b =
			cpu_stats(g->ftrace_start, end->cpu);
		int64_t cpu = (int64_t)end->cpu;

		e = ftrace_counter_rows(t, overrun, SEV_INFO, cpu,
					b ? (int64_t)b->overrun : 0,
					(int64_t)end->overrun);
		if (!e)
			e = ftrace_counter_rows(t, dropped, SEV_ERROR, cpu,
						b ? (int64_t)b->dropped_events : 0,
						(int64_t)end->dropped_events);
		if (!e)
			e = ftrace_counter_rows(t, readev, SEV_INFO, cpu,
						b ? (int64_t)b->read_events : 0,
						(int64_t)end->read_events);
	}
	for (i = 0; i < g->ncpu_lost && !e; i++)
		if (g->cpu_lost[i])
			e = add(t, "ftrace_cpu_has_data_loss", (int64_t)i,
				SEV_DATA_LOSS, SRC_ANALYSIS, 1);
	return e;
}

static void gather_free(struct gather *g)
{
	Perfetto__Protos__TracePacket *kept[] = { g->trace_stats,
		g->ftrace_start, g->ftrace_end };
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (kept[i])
			perfetto__protos__trace_packet__free_unpacked(kept[i], NULL);
	free(g->cpu_lost);
	free(g->seq_seen);
	free(g->seq_dropped);
}

int stat_table_read(struct stat_table *t, const char *path, char *err,
		    size_t errlen)
{
	struct gather g;
	int e;

	memset(&g, 0, sizeof(g));
	memset(t, 0, sizeof(*t));
	e = read_packets(&g, path, err, errlen);
	if (!e)
		e = trace_stats_rows(t, &g);
	if (!e)
		e = ftrace_rows(t, &g);
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	gather_free(&g);
	return e ? -1 : 0;
}

void stat_table_free(struct stat_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const char *stat_severity_name(enum stat_severity s)
{
	return s == SEV_DATA_LOSS ? "data_loss" : s == SEV_ERROR ? "error" : "info";
}

const char *stat_source_name(enum stat_source s)
{
	return s == SRC_ANALYSIS ? "analysis" : "trace";
}
