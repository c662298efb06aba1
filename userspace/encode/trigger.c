/* Trigger packets (trigger.h). */
#include "encode/trigger.h"

#include <string.h>

#include "encode/packet.h"

typedef Perfetto__Protos__TracePacket Packet;

int trigger_emit(struct packet_sink *s, uint32_t seq, uint64_t ts,
		 const char *name, const char *producer, int32_t uid,
		 bool clone_snapshot)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__Trigger t = PERFETTO__PROTOS__TRIGGER__INIT;

	t.trigger_name = (char *)name;
	t.producer_name = (char *)producer;
	t.has_trusted_producer_uid = 1;
	t.trusted_producer_uid = uid;
	p.has_timestamp = 1;
	p.timestamp = ts;
	if (clone_snapshot) {
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLONE_SNAPSHOT_TRIGGER;
		p.clone_snapshot_trigger = &t;
	} else {
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRIGGER;
		p.trigger = &t;
	}
	return packet_emit(s, seq, &p);
}

/* The thread's track, one per thread. */
static uint64_t track_uuid(int32_t tid)
{
	return 0x6274720000000000ull | (uint32_t)tid;
}

static int emit_event(struct packet_sink *s, uint64_t ts, uint64_t uuid,
		      Perfetto__Protos__TrackEvent__Type type, const char *name,
		      Perfetto__Protos__DebugAnnotation **ann, size_t nann)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	static char *cat = "bpftrace-rec.trigger";

	ev.has_type = 1;
	ev.type = type;
	ev.has_track_uuid = 1;
	ev.track_uuid = uuid;
	ev.name = (char *)name;
	if (type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
		ev.n_categories = 1;
		ev.categories = &cat;
	}
	ev.n_debug_annotations = nann;
	ev.debug_annotations = ann;
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	p.track_event = &ev;
	return packet_emit(s, SEQ_TRIGGERS, &p);
}

int trigger_emit_mark(struct packet_sink *s, const struct trigger_mark *m)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__DebugAnnotation a[3];
	Perfetto__Protos__DebugAnnotation *ap[3] = { &a[0], &a[1], &a[2] };
	uint64_t uuid = track_uuid(m->tid);
	int i, e;

	th.has_pid = th.has_tid = 1;
	th.pid = m->pid;
	th.tid = m->tid;
	th.thread_name = (char *)m->comm;
	td.has_uuid = 1;
	td.uuid = uuid;
	td.thread = &th;
	/* Each trigger's packets stand alone: a wrapped ring may have lost
	 * the ones before. */
	p.has_sequence_flags = 1;
	p.sequence_flags = SEQ_FLAG_INCREMENTAL_STATE_CLEARED;
	p.has_timestamp = 1;
	p.timestamp = m->start;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	p.track_descriptor = &td;
	e = packet_emit(s, SEQ_TRIGGERS, &p);
	if (e)
		return e;
	for (i = 0; i < 3; i++)
		perfetto__protos__debug_annotation__init(&a[i]);
	a[0].name = "trigger";
	a[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
	a[0].string_value = (char *)m->condition;
	a[1].name = (char *)m->value_name;
	a[1].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
	a[1].int_value = m->value;
	a[2].name = "cpu";
	a[2].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
	a[2].int_value = m->cpu;
	if (m->start == m->end)
		return emit_event(s, m->start, uuid,
				  PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT,
				  m->title, ap, 3);
	e = emit_event(s, m->start, uuid,
		       PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
		       m->title, ap, 3);
	return e ? e : emit_event(s, m->end, uuid,
				  PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END,
				  NULL, NULL, 0);
}

Perfetto__Protos__TraceConfig__TriggerConfig *
trigger_config_fill(struct trigger_config_echo *e, const struct trig_spec *specs,
		    uint32_t n, bool stop, uint64_t delay_ns,
		    uint64_t timeout_ns)
{
	uint32_t i;

	perfetto__protos__trace_config__trigger_config__init(&e->tc);
	e->tc.has_trigger_mode = 1;
	e->tc.trigger_mode =
		stop ? PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING
		     : PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT;
	for (i = 0; i < n && i < TRIG_MAX; i++) {
		perfetto__protos__trace_config__trigger_config__trigger__init(&e->t[i]);
		e->t[i].name = (char *)trig_spec_name(&specs[i]);
		e->t[i].has_stop_delay_ms = 1;
		e->t[i].stop_delay_ms = (uint32_t)(delay_ns / 1000000ull);
		e->tp[i] = &e->t[i];
	}
	e->tc.n_triggers = i;
	e->tc.triggers = e->tp;
	if (timeout_ns) {
		e->tc.has_trigger_timeout_ms = 1;
		e->tc.trigger_timeout_ms = (uint32_t)(timeout_ns / 1000000ull);
	}
	return &e->tc;
}
