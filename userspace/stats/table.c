/* Collecting a trace's statistics into stats rows. */
#include "stats/table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/sync_info.h"
#include "perfetto/trace.pb-c.h"
#include "stats/blocked_count.h"
#include "stats/stack_count.h"
#include "stats/switch_check.h"
#include "util/grow.h"
#include "trace/reader.h"
#include "util/log.h"

typedef Perfetto__Protos__TraceStats__BufferStats BufferStats;
typedef Perfetto__Protos__TracePacket Packet;

/* The trigger counts of a recording's trailer (trig_stats). */
#define NTRIG_STATS 6

/* More machines than this in one trace: the rest are not shown. */
#define MAX_MACHINES 1024

/* What the packets of one machine say; the last TraceStats and
 * FtraceStats win, as in trace_processor. */
struct mgather {
	uint32_t id;                 /* machine_id, 0: the host */
	Packet *trace_stats;         /* kept unpacked */
	Packet *ftrace_start, *ftrace_end;
	bool write_into_file;
	int64_t fill_policy[16];
	size_t nbuffers;
	uint8_t *cpu_lost;           /* cpu -> bundle with lost_events seen */
	size_t ncpu_lost;
	struct switch_check sw;      /* mismatched_sched_switch_tids */
	struct blocked_count blocked; /* sched_blocked_reason events */
	struct stack_count stacks;   /* PerfSamples */
	int64_t trig[NTRIG_STATS];   /* the recorder's trigger counts */
	bool has_trig;
};

/* The trigger counts a recording writes in its trailer (TraceAttributes
 * bpftrace_rec.NAME), as stats of that NAME. */
static const char *const trig_stats[NTRIG_STATS] = {
	"triggers_fired", "triggers_suppressed", "triggers_refused",
	"trigger_snapshots_removed", "triggers_merged",
	"trigger_records_inexact",
};

static void note_trigger_counts(struct mgather *m,
				const Perfetto__Protos__TraceAttributes *ta)
{
	size_t i, k;

	for (i = 0; ta && i < ta->n_attribute; i++) {
		const Perfetto__Protos__TraceAttributes__Attribute *a =
			ta->attribute[i];

		if (!a->key || strncmp(a->key, "bpftrace_rec.", 13) ||
		    a->value_case != PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE)
			continue;
		for (k = 0; k < NTRIG_STATS; k++)
			if (!strcmp(a->key + 13, trig_stats[k])) {
				m->trig[k] = a->long_value;
				m->has_trig = true;
			}
	}
}

/* The whole trace, gathered in one pass. */
struct stat_gather {
	struct mgather *m;           /* m[0]: the host */
	size_t nm;
	uint32_t *seq_seen;          /* sequences that had a first packet */
	uint64_t *seq_dropped;       /* by sequence: later flagged packets */
	size_t nseq;
	struct trailer {             /* the sync trailer's stats */
		char *name;
		uint64_t value;
		uint32_t machine;    /* machine_id, 0: the host */
	} *tr;
	size_t ntr;
	bool oom;
};

static int add(struct stat_table *t, const char *name, int64_t idx,
	       enum stat_severity sev, enum stat_source src, int64_t value,
	       int64_t machine)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct stat_row *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap = cap;
	}
	t->rows[t->n++] = (struct stat_row){ name, idx, sev, src, value,
					     machine };
	t->machines |= machine >= 0;
	return 0;
}

/* The gather of the packet's machine (added when new); NULL when there
 * are too many or memory is out. */
static struct mgather *machine_of(struct stat_gather *g, const Packet *p)
{
	uint32_t id = p->has_machine_id ? p->machine_id : 0;
	size_t i, n = g->nm;

	for (i = 0; i < g->nm; i++)
		if (g->m[i].id == id)
			return &g->m[i];
	if (g->nm == MAX_MACHINES ||
	    grow_zeroed((void **)&g->m, &n, g->nm + 1, sizeof(*g->m)))
		return NULL;
	g->m[g->nm].id = id;
	return &g->m[g->nm++];
}

/* Keeps p in *slot (replacing the older one); returns true if kept. */
static bool keep(Packet **slot, Packet *p)
{
	if (*slot)
		perfetto__protos__trace_packet__free_unpacked(*slot, NULL);
	*slot = p;
	return true;
}

static void note_sequence(struct stat_gather *g, const Packet *p)
{
	uint32_t seq = p->trusted_packet_sequence_id;
	size_t n = g->nseq;

	if (p->optional_trusted_packet_sequence_id_case !=
		    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID ||
	    seq > (1u << 20))
		return;
	if (grow_zeroed((void **)&g->seq_seen, &n, seq + 1, sizeof(uint32_t)))
		return;
	n = g->nseq;
	if (grow_zeroed((void **)&g->seq_dropped, &n, seq + 1, sizeof(uint64_t)))
		return;
	g->nseq = n;
	/* The first packet of a sequence always looks like a loss. */
	if (g->seq_seen[seq] && p->has_previous_packet_dropped &&
	    p->previous_packet_dropped)
		g->seq_dropped[seq]++;
	g->seq_seen[seq] = 1;
}

static void trailer_stat(void *ctx, const struct sync_info_stat *s)
{
	struct stat_gather *g = ctx;
	size_t n = g->ntr;
	char *copy;

	if (g->oom || grow_zeroed((void **)&g->tr, &n, g->ntr + 1, sizeof(*g->tr)) ||
	    !(copy = strndup(s->name, s->name_len))) {
		g->oom = true;
		return;
	}
	g->tr[g->ntr++] = (struct trailer){ copy, s->value, s->machine_id };
}

/* The stats of sync's trailer (the last one wins). */
static void note_trailer(struct stat_gather *g, const Packet *p)
{
	const uint8_t *data;
	size_t n, k;

	if (!sync_info_find(&p->base, &data, &n))
		return;
	for (k = 0; k < g->ntr; k++)
		free(g->tr[k].name);
	g->ntr = 0;
	sync_info_each_machine_stat(data, n, trailer_stat, g);
}

static bool gather_machine(struct mgather *m, Packet *p)
{
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS:
		return keep(&m->trace_stats, p);
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS:
		if (p->ftrace_stats->phase ==
		    PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE)
			return keep(&m->ftrace_start, p);
		if (p->ftrace_stats->phase ==
		    PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE)
			return keep(&m->ftrace_end, p);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG: {
		const Perfetto__Protos__TraceConfig *c = p->trace_config;
		size_t i;

		m->write_into_file = c->write_into_file;
		m->nbuffers = c->n_buffers < 16 ? c->n_buffers : 16;
		for (i = 0; i < m->nbuffers; i++)
			m->fill_policy[i] = c->buffers[i]->fill_policy;
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE:
		stack_count_packet(&m->stacks, p);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES:
		note_trigger_counts(m, p->trace_attributes);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS: {
		uint32_t cpu = p->ftrace_events->cpu;

		blocked_count_packet(&m->blocked, p);
		if (p->ftrace_events->lost_events && cpu < 4096 &&
		    !grow_zeroed((void **)&m->cpu_lost, &m->ncpu_lost, cpu + 1, 1))
			m->cpu_lost[cpu] = 1;
		break;
	}
	default:
		break;
	}
	return false;
}

static bool gather_packet(struct stat_gather *g, Packet *p)
{
	struct mgather *m = machine_of(g, p);

	note_sequence(g, p);
	note_trailer(g, p);
	if (m && p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS &&
	    switch_check_bundle(&m->sw, p->ftrace_events))
		g->oom = true;
	return m ? gather_machine(m, p) : false;
}

int stat_gather_packet(struct stat_gather *g, const uint8_t *pkt, size_t len)
{
	Packet *p = perfetto__protos__trace_packet__unpack(NULL, len, pkt);

	if (!p)
		return -1;
	if (!gather_packet(g, p))
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	return g->oom ? -ENOMEM : 0;
}

int stat_gather_compact_bundle(struct stat_gather *g,
			       const struct stat_bundle *b)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle fb =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	struct mgather *m;

	p.has_machine_id = b->machine != 0;
	p.machine_id = b->machine;
	if (b->has_seq) {
		p.optional_trusted_packet_sequence_id_case =
			PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
		p.trusted_packet_sequence_id = b->seq;
	}
	p.has_previous_packet_dropped = b->prev_dropped != 0;
	p.previous_packet_dropped = b->prev_dropped;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &fb;
	fb.has_cpu = b->has_cpu;
	fb.cpu = b->cpu;
	fb.has_lost_events = b->lost;
	fb.lost_events = b->lost;
	m = machine_of(g, &p);
	note_sequence(g, &p);
	if (m && b->has_cpu &&
	    switch_check_compact(&m->sw, b->cpu, b->switches, b->last_next_pid))
		g->oom = true;
	if (m)
		gather_machine(m, &p);
	return g->oom ? -ENOMEM : 0;
}

static int read_packets(struct stat_gather *g, const char *path, char *err,
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
		if (stat_gather_packet(g, pkt, len) == -1) {
			msg_at(err, errlen, trace_reader_name(r), off,
			       "cannot decode the TracePacket");
			trace_reader_close(r);
			return -1;
		}
	}
	if (rc == TRACE_READ_ERROR)
		snprintf(err, errlen, "%s", trace_reader_error(r));
	trace_reader_close(r);
	return rc == TRACE_READ_ERROR ? -1 : 0;
}

/* Rows of one machine go to t with this machine column. */
struct rows {
	struct stat_table *t;
	int64_t machine;
};

static int row(const struct rows *r, const char *name, int64_t idx,
	       enum stat_severity sev, enum stat_source src, int64_t value)
{
	return add(r->t, name, idx, sev, src, value, r->machine);
}

static int buffer_rows(const struct rows *t, const BufferStats *b, int64_t i,
		       const struct mgather *g)
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
		e = row(t, f[k].name, i, f[k].sev, SRC_TRACE,
			(int64_t)*(const uint64_t *)((const char *)b + f[k].off));
	if (!e && g->write_into_file && b->bytes_overwritten)
		e = row(t, "long_trace_mode_bytes_overwritten", i, SEV_DATA_LOSS,
			SRC_ANALYSIS, (int64_t)b->bytes_overwritten);
	if (!e && g->write_into_file && (size_t)i < g->nbuffers &&
	    g->fill_policy[i] ==
		    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD)
		e = row(t, "config_write_into_file_discard", i, SEV_DATA_LOSS,
			SRC_ANALYSIS, 1);
	return e;
}

/* Per-sequence losses folded into their buffer through writer_stats. */
static int sequence_loss_rows(const struct rows *t, const struct stat_gather *g,
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
		e = row(t, "traced_buf_sequence_packet_loss", (int64_t)i,
			SEV_DATA_LOSS, SRC_ANALYSIS, (int64_t)loss[i]);
	return e;
}

static int trace_stats_rows(const struct rows *t, const struct stat_gather *g,
			    const struct mgather *m)
{
	const Perfetto__Protos__TraceStats *ts =
		m->trace_stats ? m->trace_stats->trace_stats : NULL;
	size_t i;
	int e = 0;

	for (i = 0; ts && i < ts->n_buffer_stats && !e; i++)
		e = buffer_rows(t, ts->buffer_stats[i], (int64_t)i, m);
	if (!e && ts)
		e = row(t, "traced_flushes_failed", -1, SEV_DATA_LOSS, SRC_TRACE,
			(int64_t)ts->flushes_failed);
	if (!e && ts)
		e = row(t, "traced_final_flush_failed", -1, SEV_DATA_LOSS,
			SRC_TRACE,
			ts->final_flush_outcome ==
				PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_FAILED);
	return e ? e : sequence_loss_rows(t, g, ts);
}

static const Perfetto__Protos__FtraceCpuStats *
cpu_stats(const Packet *p, uint64_t cpu)
{
	size_t i;

	for (i = 0; p && i < p->ftrace_stats->n_cpu_stats; i++)
		if (p->ftrace_stats->cpu_stats[i]->cpu == cpu)
			return p->ftrace_stats->cpu_stats[i];
	return NULL;
}

/* begin, end and delta rows of one FtraceCpuStats counter. */
static int ftrace_counter_rows(const struct rows *t,
			       const char *const names[3],
			       enum stat_severity delta_sev, int64_t cpu,
			       int64_t begin, int64_t end)
{
	int e = row(t, names[0], cpu, SEV_INFO, SRC_TRACE, begin);

	if (!e)
		e = row(t, names[1], cpu, SEV_INFO, SRC_TRACE, end);
	/* modulo 2^64, as the counters are (no signed overflow) */
	return e ? e : row(t, names[2], cpu, delta_sev, SRC_TRACE,
			   (int64_t)((uint64_t)end - (uint64_t)begin));
}

static int ftrace_rows(const struct rows *t, const struct mgather *g)
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
			e = row(t, "ftrace_cpu_has_data_loss", (int64_t)i,
				SEV_DATA_LOSS, SRC_ANALYSIS, 1);
	if (!e && g->sw.seen)
		e = row(t, "mismatched_sched_switch_tids", -1, SEV_ERROR,
			SRC_ANALYSIS, (int64_t)g->sw.mismatched);
	if (!e && g->blocked.events)
		e = row(t, "sched_blocked_reason_events", -1, SEV_INFO,
			SRC_ANALYSIS, (int64_t)g->blocked.events);
	if (!e && g->blocked.events)
		e = row(t, "sched_blocked_reason_without_function", -1,
			SEV_ERROR, SRC_ANALYSIS, (int64_t)g->blocked.unnamed);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples", -1, SEV_INFO, SRC_ANALYSIS,
			(int64_t)g->stacks.samples);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples_stack_truncated", -1, SEV_DATA_LOSS,
			SRC_ANALYSIS, (int64_t)g->stacks.truncated);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples_without_stack", -1, SEV_DATA_LOSS,
			SRC_ANALYSIS, (int64_t)g->stacks.without_stack);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples_without_user_stack", -1, SEV_DATA_LOSS,
			SRC_ANALYSIS, (int64_t)g->stacks.without_user_stack);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples_user_stack_cut_by_slice", -1,
			SEV_DATA_LOSS, SRC_ANALYSIS,
			(int64_t)g->stacks.slice_cut);
	if (!e && g->stacks.samples)
		e = row(t, "perf_samples_user_stack_without_cfi", -1,
			SEV_DATA_LOSS, SRC_ANALYSIS, (int64_t)g->stacks.no_cfi);
	return e;
}

/* Perfetto's severity of a stat sync counts. */
static enum stat_severity trailer_severity(const char *name)
{
	if (!strcmp(name, "clock_sync_failure_undeferrable_packet_loss"))
		return SEV_DATA_LOSS;
	return strcmp(name, "clock_sync_cache_miss") ? SEV_ERROR : SEV_INFO;
}

/* The machine column of a machine_id: -1 for the host. */
static int64_t machine_column(uint32_t id)
{
	return id ? (int64_t)id : -1;
}

/* The trailer's stats, each on its machine, their names handed to t. */
static int trailer_rows(struct stat_table *t, struct stat_gather *g)
{
	size_t i;
	int e = 0;

	if (grow_zeroed((void **)&t->names, &t->n_names, g->ntr, sizeof(char *)))
		return -ENOMEM;
	for (i = 0; i < g->ntr && !e; i++) {
		t->names[i] = g->tr[i].name;
		g->tr[i].name = NULL;
		e = add(t, t->names[i], -1, trailer_severity(t->names[i]),
			SRC_ANALYSIS, (int64_t)g->tr[i].value,
			machine_column(g->tr[i].machine));
	}
	return e;
}

static int machine_rows(struct stat_table *t, const struct stat_gather *g,
			const struct mgather *m)
{
	struct rows r = { t, machine_column(m->id) };
	int e = trace_stats_rows(&r, g, m);
	size_t k;

	if (!e)
		e = ftrace_rows(&r, m);
	for (k = 0; !e && m->has_trig && k < NTRIG_STATS; k++)
		e = row(&r, trig_stats[k], -1, SEV_INFO, SRC_TRACE, m->trig[k]);
	return e;
}

void stat_gather_free(struct stat_gather *g)
{
	size_t i, k;

	if (!g)
		return;

	for (i = 0; i < g->nm; i++) {
		struct mgather *m = &g->m[i];
		Packet *kept[] = { m->trace_stats, m->ftrace_start,
				   m->ftrace_end };

		for (k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
			if (kept[k])
				perfetto__protos__trace_packet__free_unpacked(
					kept[k], NULL);
		free(m->cpu_lost);
		switch_check_free(&m->sw);
	}
	for (i = 0; i < g->ntr; i++)
		free(g->tr[i].name);
	free(g->tr);
	free(g->m);
	free(g->seq_seen);
	free(g->seq_dropped);
	free(g);
}

/* The host first (machine_id 0), then the others in id order. */
static int cmp_machine(const void *a, const void *b)
{
	uint32_t x = ((const struct mgather *)a)->id;
	uint32_t y = ((const struct mgather *)b)->id;

	return (x > y) - (x < y);
}

struct stat_gather *stat_gather_new(void)
{
	return calloc(1, sizeof(struct stat_gather));
}

int stat_gather_rows(struct stat_gather *g, struct stat_table *t)
{
	size_t i;
	int e = g->oom ? -ENOMEM : 0;

	memset(t, 0, sizeof(*t));
	if (g->nm)
		qsort(g->m, g->nm, sizeof(*g->m), cmp_machine);
	for (i = 0; i < g->nm && !e; i++)
		e = machine_rows(t, g, &g->m[i]);
	if (!e)
		e = trailer_rows(t, g);
	if (e)
		stat_table_free(t);
	return e;
}

int stat_table_read(struct stat_table *t, const char *path, char *err,
		    size_t errlen)
{
	struct stat_gather *g = stat_gather_new();
	int e;

	memset(t, 0, sizeof(*t));
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	e = read_packets(g, path, err, errlen);
	if (!e)
		e = stat_gather_rows(g, t);
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	stat_gather_free(g);
	return e ? -1 : 0;
}

void stat_table_free(struct stat_table *t)
{
	size_t i;

	for (i = 0; i < t->n_names; i++)
		free(t->names[i]);
	free(t->names);
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
