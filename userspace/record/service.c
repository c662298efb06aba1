/* Service-sequence packets of a recording. */
#include "record/service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "encode/packet.h"
#include "encode/trigger.h"

typedef Perfetto__Protos__TracePacket Packet;

static uint32_t started_seqs; /* bit n: sequence n had its first packet */

/* The first packet of each service sequence starts its incremental state. */
static int emit_on(struct packet_sink *s, uint32_t seq, Packet *p)
{
	if (seq < 32 && !(started_seqs & (1u << seq))) {
		p->has_sequence_flags = 1;
		p->sequence_flags = SEQ_FLAG_INCREMENTAL_STATE_CLEARED;
		started_seqs |= 1u << seq;
	}
	return packet_emit(s, seq, p);
}

static int emit(struct packet_sink *s, Packet *p)
{
	return emit_on(s, SEQ_SERVICE, p);
}

int service_emit_clock_snapshot(struct packet_sink *s, uint32_t seq,
				const struct clock_value *c, int n)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot snap =
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock clocks[CLOCKS_MAX];
	Perfetto__Protos__ClockSnapshot__Clock *ptrs[CLOCKS_MAX];
	int i;

	for (i = 0; i < n && i < CLOCKS_MAX; i++) {
		perfetto__protos__clock_snapshot__clock__init(&clocks[i]);
		clocks[i].has_clock_id = clocks[i].has_timestamp = 1;
		clocks[i].clock_id = c[i].id;
		clocks[i].timestamp = c[i].ns;
		ptrs[i] = &clocks[i];
	}
	snap.n_clocks = (size_t)i;
	snap.clocks = ptrs;
	snap.has_primary_trace_clock = 1;
	snap.primary_trace_clock =
		PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &snap;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME;
	return emit_on(s, seq, &p);
}

/* The events written; the last one only with blocked reasons. */
static const char *const ftrace_events[] = {
	"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup_new",
	"sched/sched_process_fork", "sched/sched_process_exec",
	"sched/sched_process_exit", "sched/sched_process_free",
	"task/task_newtask", "task/task_rename", "sched/sched_blocked_reason",
};
#define N_FTRACE_EVENTS (sizeof(ftrace_events) / sizeof(ftrace_events[0]))

/* --callstacks as traced_perf's config: samples on sched_switch (the
 * sleeping switch-outs), kernel frames, user frames by frame pointers. */
static void perf_config(const struct record_opts *o,
			Perfetto__Protos__PerfEventConfig *pc,
			Perfetto__Protos__PerfEvents__Timebase *tb,
			Perfetto__Protos__PerfEvents__Tracepoint *tp,
			Perfetto__Protos__PerfEventConfig__CallstackSampling *cs)
{
	tp->name = "sched/sched_switch";
	tb->event_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_TRACEPOINT;
	tb->tracepoint = tp;
	cs->has_kernel_frames = cs->kernel_frames = 1;
	cs->has_user_frames = 1;
	cs->user_frames =
		o->kernel_stacks_only
			? PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_SKIP
			: PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_FRAME_POINTER;
	pc->timebase = tb;
	pc->callstack_sampling = cs;
}

int service_emit_config(struct packet_sink *s, const struct record_opts *o)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__DataSource ds[3];
	Perfetto__Protos__TraceConfig__DataSource *dsp[3] = { &ds[0], &ds[1],
							      &ds[2] };
	Perfetto__Protos__DataSourceConfig dsc[3];
	Perfetto__Protos__PerfEventConfig pc =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb =
		PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	Perfetto__Protos__PerfEvents__Tracepoint tp =
		PERFETTO__PROTOS__PERF_EVENTS__TRACEPOINT__INIT;
	Perfetto__Protos__PerfEventConfig__CallstackSampling cs =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__CALLSTACK_SAMPLING__INIT;
	bool blocked = o->blocked_mode != BTR_BLOCKED_NONE;
	Perfetto__Protos__FtraceConfig ftrace = PERFETTO__PROTOS__FTRACE_CONFIG__INIT;
	Perfetto__Protos__FtraceConfig__CompactSchedConfig compact =
		PERFETTO__PROTOS__FTRACE_CONFIG__COMPACT_SCHED_CONFIG__INIT;
	Perfetto__Protos__ProcessStatsConfig ps =
		PERFETTO__PROTOS__PROCESS_STATS_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufp = &buf;
	Perfetto__Protos__TraceConfig__IncrementalStateConfig inc =
		PERFETTO__PROTOS__TRACE_CONFIG__INCREMENTAL_STATE_CONFIG__INIT;
	struct trigger_config_echo trig;
	int i;

	for (i = 0; i < 3; i++) {
		perfetto__protos__trace_config__data_source__init(&ds[i]);
		perfetto__protos__data_source_config__init(&dsc[i]);
		ds[i].config = &dsc[i];
	}
	dsc[0].name = "linux.ftrace";
	dsc[0].ftrace_config = &ftrace;
	ftrace.n_ftrace_events = N_FTRACE_EVENTS - !blocked;
	ftrace.ftrace_events = (char **)ftrace_events;
	/* blocked reasons' callers are written as names */
	ftrace.has_symbolize_ksyms = ftrace.symbolize_ksyms = blocked;
	ftrace.has_buffer_size_kb = 1;
	/* Per CPU, as Perfetto means it: the ring of each online CPU (other
	 * CPU ids get one page, as -v says). */
	ftrace.buffer_size_kb = (uint32_t)(o->ringbuf_size / 1024);
	ftrace.has_drain_period_ms = 1;
	ftrace.drain_period_ms = (uint32_t)(o->drain_period_ns / 1000000ull);
	compact.has_enabled = compact.enabled = 1;
	ftrace.compact_sched = &compact;
	dsc[1].name = "linux.process_stats";
	dsc[1].process_stats_config = &ps;
	ps.has_scan_all_processes_on_start = ps.scan_all_processes_on_start = 1;
	ps.has_record_thread_names = ps.record_thread_names = 1;
	buf.has_size_kb = buf.has_fill_policy = 1;
	buf.size_kb = (uint32_t)(o->buffer_size / 1024);
	buf.fill_policy = (Perfetto__Protos__TraceConfig__BufferConfig__FillPolicy)o->fill_policy;
	cfg.n_buffers = 1;
	cfg.buffers = &bufp;
	inc.has_clear_period_ms = 1;
	inc.clear_period_ms = (uint32_t)(o->clear_period_ns / 1000000ull);
	cfg.incremental_state_config = &inc;
	if (o->stream) {
		cfg.has_write_into_file = cfg.write_into_file = 1;
		cfg.has_file_write_period_ms = 1;
		cfg.file_write_period_ms =
			(uint32_t)(o->file_write_period_ns / 1000000ull);
		/* Always echoed when streaming (trace_processor flags its
		 * absence): partly filled chunks are committed at least at
		 * every file write. */
		cfg.has_flush_period_ms = 1;
		cfg.flush_period_ms = (uint32_t)((o->flush_period_ns ?
			o->flush_period_ns : o->file_write_period_ns) / 1000000ull);
		if (o->max_file_size) {
			cfg.has_max_file_size_bytes = 1;
			cfg.max_file_size_bytes = o->max_file_size;
		}
	}
	dsc[2].name = "linux.perf";
	dsc[2].perf_event_config = &pc;
	perf_config(o, &pc, &tb, &tp, &cs);
	cfg.n_data_sources = o->callstacks ? 3 : 2;
	cfg.data_sources = dsp;
	if (o->duration_ns) {
		cfg.has_duration_ms = 1;
		cfg.duration_ms = (uint32_t)(o->duration_ns / 1000000ull);
	}
	if (o->ntriggers)
		cfg.trigger_config = trigger_config_fill(&trig, o->triggers,
							 o->ntriggers,
							 o->trigger_stop,
							 o->trigger_delay_ns,
							 o->duration_ns);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG;
	p.trace_config = &cfg;
	return emit(s, &p);
}

int service_emit_uuid(struct packet_sink *s)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceUuid u = PERFETTO__PROTOS__TRACE_UUID__INIT;
	uint64_t r[2] = { 0, 0 };

	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		r[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
		r[1] = (uint64_t)ts.tv_sec;
	}
	u.has_msb = u.has_lsb = 1;
	u.msb = (int64_t)r[0];
	u.lsb = (int64_t)r[1];
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_UUID;
	p.trace_uuid = &u;
	return emit(s, &p);
}

static int32_t utc_offset_mins(void)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return 0;
	return (int32_t)(tm.tm_gmtoff / 60);
}

int service_emit_system_info(struct packet_sink *s, const char *machine_name)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;
	struct utsname u;
	struct sysinfo sys;
	char host[256] = "";

	if (uname(&u) == 0) {
		un.sysname = u.sysname;
		un.version = u.version;
		un.release = u.release;
		un.machine = u.machine;
		si.utsname = &un;
		snprintf(host, sizeof(host), "%s", u.nodename);
	}
	si.tracing_service_version = "bpftrace-rec " BTR_VERSION;
	si.has_page_size = 1;
	si.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	si.has_num_cpus = 1;
	si.num_cpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	si.has_timezone_off_mins = 1;
	si.timezone_off_mins = utc_offset_mins();
	if (sysinfo(&sys) == 0) {
		si.has_system_ram_bytes = 1;
		si.system_ram_bytes = (uint64_t)sys.totalram * sys.mem_unit;
	}
	si.machine_name = (char *)(machine_name ? machine_name : host);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO;
	p.system_info = &si;
	return emit(s, &p);
}

int service_emit_event(struct packet_sink *s, uint32_t seq, uint64_t ts,
		       int started)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TracingServiceEvent ev =
		PERFETTO__PROTOS__TRACING_SERVICE_EVENT__INIT;

	if (started) {
		ev.event_type_case =
			PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_STARTED;
		ev.tracing_started = 1;
	} else {
		ev.event_type_case =
			PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_DISABLED;
		ev.tracing_disabled = 1;
	}
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SERVICE_EVENT;
	p.service_event = &ev;
	return emit_on(s, seq, &p);
}

int service_emit_ftrace_stats(struct packet_sink *s, uint32_t seq_id,
			      int phase, const struct btr_cpu_acct *acct,
			      const uint64_t *read_events, uint32_t ncpus)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceStats st = PERFETTO__PROTOS__FTRACE_STATS__INIT;
	Perfetto__Protos__FtraceCpuStats *cs = calloc(ncpus, sizeof(*cs));
	Perfetto__Protos__FtraceCpuStats **csp = calloc(ncpus, sizeof(*csp));
	uint32_t cpu;
	int e = -ENOMEM;

	if (!cs || !csp)
		goto out;
	for (cpu = 0; cpu < ncpus; cpu++) {
		perfetto__protos__ftrace_cpu_stats__init(&cs[cpu]);
		cs[cpu].has_cpu = cs[cpu].has_overrun = 1;
		cs[cpu].has_dropped_events = cs[cpu].has_read_events = 1;
		cs[cpu].cpu = cpu;
		/* BPF reserve failures: ftrace's "buffer full" drops; also
		 * reported as overrun, which is what stats tools look at. */
		cs[cpu].dropped_events = acct ? acct[cpu].lost_total : 0;
		cs[cpu].overrun = cs[cpu].dropped_events;
		cs[cpu].read_events = read_events ? read_events[cpu] : 0;
		csp[cpu] = &cs[cpu];
	}
	st.has_phase = 1;
	st.phase = phase == 1 ? PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE
			      : PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE;
	st.n_cpu_stats = ncpus;
	st.cpu_stats = csp;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS;
	p.ftrace_stats = &st;
	e = packet_emit(s, seq_id, &p);
out:
	free(cs);
	free(csp);
	return e;
}

static void fill_buffer_stats(Perfetto__Protos__TraceStats__BufferStats *b,
			      const struct central_stats *c)
{
#define SET(f)                                                                 \
	do {                                                                   \
		b->has_##f = 1;                                                \
		b->f = c->f;                                                   \
	} while (0)
	SET(buffer_size);
	SET(bytes_written);
	SET(chunks_written);
	SET(bytes_overwritten);
	SET(chunks_overwritten);
	SET(chunks_discarded);
	SET(bytes_read);
	SET(chunks_read);
	SET(write_wrap_count);
	SET(readaheads_failed);
#undef SET
	b->has_trace_writer_packet_loss = 1;
	b->trace_writer_packet_loss = 0; /* writers never lack a chunk */
}

int service_emit_trace_stats(struct packet_sink *s, const uint32_t *seq_ids,
			     uint32_t nseq, const struct central_stats *cs)
{
	Perfetto__Protos__TraceStats__BufferStats bs =
		PERFETTO__PROTOS__TRACE_STATS__BUFFER_STATS__INIT;
	Perfetto__Protos__TraceStats__BufferStats *bsp = &bs;
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceStats st = PERFETTO__PROTOS__TRACE_STATS__INIT;
	Perfetto__Protos__TraceStats__WriterStats *ws = calloc(nseq, sizeof(*ws));
	Perfetto__Protos__TraceStats__WriterStats **wsp =
		calloc(nseq, sizeof(*wsp));
	uint32_t i;
	int e = -ENOMEM;

	if (!ws || !wsp)
		goto out;
	for (i = 0; i < nseq; i++) {
		perfetto__protos__trace_stats__writer_stats__init(&ws[i]);
		ws[i].has_sequence_id = ws[i].has_buffer = 1;
		ws[i].sequence_id = seq_ids[i];
		ws[i].buffer = 0;
		wsp[i] = &ws[i];
	}
	fill_buffer_stats(&bs, cs);
	st.n_buffer_stats = 1;
	st.buffer_stats = &bsp;
	st.has_total_buffers = 1;
	st.total_buffers = 1;
	st.n_writer_stats = nseq;
	st.writer_stats = wsp;
	st.has_final_flush_outcome = 1;
	st.final_flush_outcome =
		PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_SUCCEEDED;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS;
	p.trace_stats = &st;
	e = emit(s, &p);
out:
	free(ws);
	free(wsp);
	return e;
}
