/* The non-ftrace packets for `dump`: clock snapshots, process trees,
 * system info, uuid, config echo, ftrace and service stats, service
 * events, and packets whose payload we do not model. */
#include <inttypes.h>
#include <string.h>

#include "dump/dump.h"
#include "trace/clock_names.h"
#include "trace/sync_info.h"

typedef Perfetto__Protos__TracePacket Packet;

/* Packet timestamp for the TS column. */
#define PKT_TS(p) (p)->has_timestamp, (p)->timestamp

static const char *clock_label(struct line *l, uint32_t id)
{
	const char *name = clock_name(id);

	return name ? name : line_printf(l, "clock%" PRIu32, id);
}

/* The name of an enum value without `prefix`, or the number. */
static const char *enum_name(struct line *l, const ProtobufCEnumDescriptor *d,
			     int value, const char *prefix)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(d, value);
	size_t n = strlen(prefix);

	if (!v)
		return line_printf(l, "%d", value);
	return strncmp(v->name, prefix, n) == 0 ? v->name + n : v->name;
}

static void clock_snapshot(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__ClockSnapshot *cs = p->clock_snapshot;
	bool has_ts = p->has_timestamp;
	uint64_t ts = p->timestamp;
	struct line *l;
	size_t i;

	/* TS: the snapshot's reading of the trace clock. */
	for (i = 0; i < cs->n_clocks; i++)
		if (cs->clocks[i]->clock_id == c->trace_clock &&
		    !cs->clocks[i]->is_incremental &&
		    cs->clocks[i]->unit_multiplier_ns <= 1) {
			has_ts = true;
			ts = cs->clocks[i]->timestamp;
			break;
		}
	l = dump_begin(c, "clock_snapshot", has_ts, ts, false, 0);
	if (cs->has_primary_trace_clock)
		line_str(l, "primary",
			 clock_label(l, (uint32_t)cs->primary_trace_clock));
	else
		line_unknown(l, "primary");
	for (i = 0; i < cs->n_clocks; i++)
		line_uint(l, clock_label(l, cs->clocks[i]->clock_id),
			  cs->clocks[i]->timestamp);
	dump_end(c);
}

static void process_tree(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__ProcessTree *t = p->process_tree;
	struct line *l;
	size_t i;

	for (i = 0; i < t->n_processes; i++) {
		const Perfetto__Protos__ProcessTree__Process *pr =
			t->processes[i];

		l = dump_begin(c, "process", PKT_TS(p), false, 0);
		line_int(l, "pid", pr->pid);
		line_int(l, "ppid", pr->ppid);
		line_int(l, "uid", pr->uid);
		line_strv(l, "cmdline", pr->cmdline, pr->n_cmdline, ' ');
		dump_end(c);
	}
	for (i = 0; i < t->n_threads; i++) {
		const Perfetto__Protos__ProcessTree__Thread *th = t->threads[i];

		l = dump_begin(c, "thread", PKT_TS(p), false, 0);
		line_int(l, "tid", th->tid);
		line_int(l, "tgid", th->tgid);
		line_str(l, "name", th->name);
		dump_end(c);
	}
}

static void system_info(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__SystemInfo *si = p->system_info;
	const Perfetto__Protos__Utsname *u = si->utsname;
	struct line *l = dump_begin(c, "system_info", PKT_TS(p), false, 0);

	line_str(l, "sysname", u ? u->sysname : NULL);
	line_str(l, "release", u ? u->release : NULL);
	line_str(l, "version", u ? u->version : NULL);
	line_str(l, "machine", u ? u->machine : NULL);
	line_uint(l, "num_cpus", si->num_cpus);
	line_uint(l, "page_size", si->page_size);
	line_str(l, "machine_name", si->machine_name);
	if (si->tracing_service_version)
		line_str(l, "tracing_service_version",
			 si->tracing_service_version);
	if (si->has_timezone_off_mins)
		line_int(l, "timezone_off_mins", si->timezone_off_mins);
	if (si->has_system_ram_bytes)
		line_uint(l, "system_ram_bytes", si->system_ram_bytes);
	dump_end(c);
}

/* The uuid as trace_processor prints it: msb then lsb, in hex. */
static void trace_uuid(struct dump_ctx *c, const Packet *p)
{
	uint64_t msb = (uint64_t)p->trace_uuid->msb;
	uint64_t lsb = (uint64_t)p->trace_uuid->lsb;
	struct line *l = dump_begin(c, "trace_uuid", PKT_TS(p), false, 0);

	line_str(l, "uuid", line_printf(l, "%08" PRIx64 "-%04" PRIx64 "-%04"
					PRIx64 "-%04" PRIx64 "-%012" PRIx64,
					msb >> 32, (msb >> 16) & 0xffff,
					msb & 0xffff, lsb >> 48,
					lsb & UINT64_C(0xffffffffffff)));
	line_int(l, "msb", p->trace_uuid->msb);
	line_int(l, "lsb", p->trace_uuid->lsb);
	dump_end(c);
}

/* One line per attribute: its key and value (an integer or a string). */
static void trace_attributes(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__TraceAttributes *ta = p->trace_attributes;
	size_t i;

	for (i = 0; i < ta->n_attribute; i++) {
		const Perfetto__Protos__TraceAttributes__Attribute *a =
			ta->attribute[i];
		struct line *l = dump_begin(c, "trace_attribute", PKT_TS(p),
					    false, 0);

		line_str(l, "key", a->key);
		if (a->value_case ==
		    PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE)
			line_int(l, "value", a->long_value);
		else
			line_str(l, "value", a->string_value);
		dump_end(c);
	}
}

/* The fields of the config echo that matter to a reader, when set. */
static void trace_config(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__TraceConfig *tc = p->trace_config;
	const Perfetto__Protos__FtraceConfig *fc = NULL;
	struct line *l = dump_begin(c, "trace_config", PKT_TS(p), false, 0);
	char **names;
	size_t i;

	line_uint(l, "buffers", tc->n_buffers);
	for (i = 0; i < tc->n_buffers; i++) {
		line_uint(l, line_printf(l, "buffer%zu_size_kb", i),
			  tc->buffers[i]->size_kb);
		line_str(l, line_printf(l, "buffer%zu_fill_policy", i),
			 enum_name(l, &perfetto__protos__trace_config__buffer_config__fill_policy__descriptor,
				   tc->buffers[i]->fill_policy, ""));
	}
	names = line_alloc(l, (tc->n_data_sources + 1) * sizeof(*names));
	for (i = 0; i < tc->n_data_sources; i++) {
		const Perfetto__Protos__DataSourceConfig *dc =
			tc->data_sources[i]->config;

		names[i] = dc && dc->name ? dc->name : "";
		if (dc && dc->ftrace_config && !fc)
			fc = dc->ftrace_config;
	}
	line_strv(l, "data_sources", names, tc->n_data_sources, ',');
	if (tc->has_duration_ms)
		line_uint(l, "duration_ms", tc->duration_ms);
	if (tc->has_write_into_file)
		line_bool(l, "write_into_file", tc->write_into_file);
	if (tc->has_file_write_period_ms)
		line_uint(l, "file_write_period_ms", tc->file_write_period_ms);
	if (tc->has_max_file_size_bytes)
		line_uint(l, "max_file_size_bytes", tc->max_file_size_bytes);
	if (tc->has_flush_period_ms)
		line_uint(l, "flush_period_ms", tc->flush_period_ms);
	if (fc) {
		line_strv(l, "ftrace_events", fc->ftrace_events,
			  fc->n_ftrace_events, ',');
		if (fc->compact_sched && fc->compact_sched->has_enabled)
			line_bool(l, "compact_sched",
				  fc->compact_sched->enabled);
		if (fc->has_buffer_size_kb)
			line_uint(l, "ftrace_buffer_size_kb",
				  fc->buffer_size_kb);
		if (fc->has_drain_period_ms)
			line_uint(l, "drain_period_ms", fc->drain_period_ms);
	}
	dump_end(c);
}

static void ftrace_stats(struct dump_ctx *c, const Packet *p)
{
	static const char *const cpu_fields[] = {
		"overrun", "dropped_events", "read_events", "entries",
		"commit_overrun", "bytes_read", NULL,
	};
	const Perfetto__Protos__FtraceStats *fs = p->ftrace_stats;
	struct line *l = dump_begin(c, "ftrace_stats", PKT_TS(p), false, 0);
	size_t i;

	switch (fs->phase) {
	case PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE:
		line_str(l, "phase", "START");
		break;
	case PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE:
		line_str(l, "phase", "END");
		break;
	default:
		line_str(l, "phase", enum_name(l, &perfetto__protos__ftrace_stats__phase__descriptor,
						 fs->phase, ""));
		break;
	}
	if (fs->n_unknown_ftrace_events)
		line_strv(l, "unknown_ftrace_events", fs->unknown_ftrace_events,
			  fs->n_unknown_ftrace_events, ',');
	if (fs->n_failed_ftrace_events)
		line_strv(l, "failed_ftrace_events", fs->failed_ftrace_events,
			  fs->n_failed_ftrace_events, ',');
	if (fs->has_preserve_ftrace_buffer)
		line_bool(l, "preserve_ftrace_buffer",
			  fs->preserve_ftrace_buffer);
	dump_end(c);
	for (i = 0; i < fs->n_cpu_stats; i++) {
		const Perfetto__Protos__FtraceCpuStats *cs = fs->cpu_stats[i];

		l = dump_begin(c, "ftrace_cpu_stats", PKT_TS(p), cs->has_cpu,
			       cs->cpu);
		line_msg_fields(l, &cs->base, "", cpu_fields);
		dump_end(c);
	}
}

/* One line: the service counters, then each buffer's stats (buffer 0
 * unprefixed, buffer N >= 1 as bufferN_...). */
static void trace_stats(struct dump_ctx *c, const Packet *p)
{
	static const char *const top_fields[] = {
		"flushes_requested", "flushes_succeeded", "flushes_failed",
		"invalid_packets", NULL,
	};
	static const char *const buffer_fields[] = {
		"buffer_size", "bytes_written", "bytes_overwritten",
		"bytes_read", "padding_bytes_written", "padding_bytes_cleared",
		"chunks_written", "chunks_rewritten", "chunks_overwritten",
		"chunks_discarded", "chunks_read",
		"chunks_committed_out_of_order", "write_wrap_count",
		"patches_succeeded", "patches_failed", "readaheads_succeeded",
		"readaheads_failed", "abi_violations",
		"trace_writer_packet_loss", NULL,
	};
	const Perfetto__Protos__TraceStats *ts = p->trace_stats;
	struct line *l = dump_begin(c, "trace_stats", PKT_TS(p), false, 0);
	uint64_t *seqs = line_alloc(l, (ts->n_writer_stats + 1) * sizeof(*seqs));
	size_t i;

	line_uint(l, "buffers", ts->n_buffer_stats);
	line_msg_fields(l, &ts->base, "", top_fields);
	line_str(l, "final_flush_outcome",
		 enum_name(l, &perfetto__protos__trace_stats__final_flush_outcome__descriptor,
			   ts->final_flush_outcome, "FINAL_FLUSH_"));
	/* Chunks the service refused before any buffer; not the DISCARD
	 * policy's buffer counter of the same proto name. */
	line_uint(l, "service_chunks_discarded", ts->chunks_discarded);
	for (i = 0; i < ts->n_writer_stats; i++)
		seqs[i] = ts->writer_stats[i]->sequence_id;
	line_uintv(l, "writer_seqs", seqs, ts->n_writer_stats);
	for (i = 0; i < ts->n_buffer_stats; i++)
		line_msg_fields(l, &ts->buffer_stats[i]->base,
				i ? line_printf(l, "buffer%zu_", i) : "",
				buffer_fields);
	dump_end(c);
}

static void service_event(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__TracingServiceEvent *se = p->service_event;
	const ProtobufCFieldDescriptor *fd =
		protobuf_c_message_descriptor_get_field(se->base.descriptor,
							(unsigned)se->event_type_case);
	struct line *l = dump_begin(c, "service_event", PKT_TS(p), false, 0);

	if (fd)
		line_flag(l, fd->name);
	else
		line_unknown_fields(l, "fields", &se->base);
	dump_end(c);
}

/* NAME=VALUE, NAME@ID=VALUE for another machine's count. */
static void sync_info_stat(void *ctx, const struct sync_info_stat *s)
{
	struct line *l = ctx;
	const char *key = s->machine_id ?
		line_printf(l, "%.*s@%u", (int)s->name_len, s->name,
			    s->machine_id) :
		line_printf(l, "%.*s", (int)s->name_len, s->name);

	line_uint(l, key, s->value);
}

/* The trailer `sync` writes (trace/sync_info.h); false if p is not one. */
static bool sync_info(struct dump_ctx *c, const Packet *p)
{
	const uint8_t *data;
	uint32_t clock;
	struct line *l;
	size_t n;

	if (!sync_info_find(&p->base, &data, &n))
		return false;
	l = dump_begin(c, "sync_info", PKT_TS(p), false, 0);
	if (sync_info_read(data, n, &clock, NULL))
		line_str(l, "trace_clock", clock_label(l, clock));
	sync_info_each_machine_stat(data, n, sync_info_stat, l);
	dump_end(c);
	return true;
}

/* A stack sample (perf script text imported by `sync`, or an off-CPU
 * stack of --callstacks): its callstack's function names, leaf first. */
static void perf_sample(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__PerfSample *s = p->perf_sample;
	uint32_t seq = p->optional_trusted_packet_sequence_id_case ==
			       PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID
			       ? p->trusted_packet_sequence_id
			       : 0;
	char *const *names = NULL;
	long n = -1;
	struct line *l;

	if (dump_stacks_intern(c->stacks, seq, p->interned_data))
		dump_warn(c, "out of memory for interned callstacks");
	if (s->has_callstack_iid)
		n = dump_stacks_names(c->stacks, seq, s->callstack_iid, &names);
	l = dump_begin(c, "perf_sample", PKT_TS(p), s->has_cpu, s->cpu);

	line_uint(l, "pid", s->pid);
	line_uint(l, "tid", s->tid);
	line_uint(l, "callstack_iid", s->callstack_iid);
	if (s->has_cpu_mode)
		line_str(l, "cpu_mode",
			 enum_name(l, &perfetto__protos__profiling__cpu_mode__descriptor,
				   s->cpu_mode, "MODE_"));
	if (s->has_unwind_error)
		line_str(l, "unwind_error",
			 enum_name(l, &perfetto__protos__profiling__stack_unwind_error__descriptor,
				   s->unwind_error, "UNWIND_ERROR_"));
	if (n >= 0)
		line_strv(l, "stack", names, (size_t)n, ',');
	else if (s->has_callstack_iid)
		line_str(l, "stack", "?");
	dump_end(c);
}

void dump_packet(struct dump_ctx *c, const Packet *p)
{
	struct line *l;

	c->machine = p->has_machine_id ? p->machine_id : 0;
	c->interned = p->interned_data;
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE:
		perf_sample(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS:
		dump_ftrace_bundle(c, p->ftrace_events);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE:
		process_tree(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
		clock_snapshot(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG:
		trace_config(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS:
		ftrace_stats(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS:
		trace_stats(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
		system_info(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SERVICE_EVENT:
		service_event(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_UUID:
		trace_uuid(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES:
		trace_attributes(c, p);
		return;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_MODULE_SYMBOLS:
		/* the names of --callstacks' user frames, per file */
		l = dump_begin(c, "module_symbols", PKT_TS(p), false, 0);
		line_str(l, "path", p->module_symbols->path);
		line_bytes_hex(l, "build_id", p->module_symbols->build_id.data,
			       p->module_symbols->build_id.len);
		line_uint(l, "addresses", p->module_symbols->n_address_symbols);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYNCHRONIZATION_MARKER:
		dump_begin(c, "synchronization_marker", PKT_TS(p), false, 0);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_REMOTE_CLOCK_SYNC:
		l = dump_begin(c, "remote_clock_sync", PKT_TS(p), false, 0);
		line_uint(l, "synced_clocks",
			  p->remote_clock_sync->n_synced_clocks);
		break;
	default:
		if (sync_info(c, p) || dump_trigger_packet(c, p))
			return;
		if (p->base.n_unknown_fields) {
			l = dump_begin(c, "unknown_packet", PKT_TS(p), false, 0);
			line_unknown_fields(l, "fields", &p->base);
		} else {
			/* Only sequence fields, flags or a timestamp. */
			dump_begin(c, "empty_packet", PKT_TS(p), false, 0);
		}
		break;
	}
	dump_end(c);
}
