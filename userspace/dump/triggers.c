/* The trigger packets for `dump`: Trigger and clone_snapshot_trigger,
 * and the thread tracks and slices that mark a trigger's thread. */
#include "dump/dump.h"

typedef Perfetto__Protos__TracePacket Packet;

#define PKT_TS(p) (p)->has_timestamp, (p)->timestamp

static void trigger(struct dump_ctx *c, const Packet *p, const char *kind,
		    const Perfetto__Protos__Trigger *t)
{
	struct line *l = dump_begin(c, kind, PKT_TS(p), false, 0);

	line_str(l, "name", t->trigger_name);
	line_str(l, "producer", t->producer_name);
	if (t->has_trusted_producer_uid)
		line_int(l, "uid", t->trusted_producer_uid);
}

static void track(struct dump_ctx *c, const Packet *p)
{
	const Perfetto__Protos__TrackDescriptor *td = p->track_descriptor;
	struct line *l = dump_begin(c, "track", PKT_TS(p), false, 0);

	line_uint(l, "uuid", td->uuid);
	if (td->name)
		line_str(l, "name", td->name);
	if (td->thread) {
		line_int(l, "pid", td->thread->pid);
		line_int(l, "tid", td->thread->tid);
		line_str(l, "thread_name", td->thread->thread_name);
	}
}

static void event(struct dump_ctx *c, const Packet *p)
{
	static const char *const types[] = { "unspecified", "begin", "end",
					     "instant", "counter" };
	const Perfetto__Protos__TrackEvent *ev = p->track_event;
	struct line *l = dump_begin(c, "track_event", PKT_TS(p), false, 0);
	size_t i;

	line_str(l, "type", ev->type < 5 ? types[ev->type] : "?");
	line_uint(l, "track", ev->track_uuid);
	if (ev->name)
		line_str(l, "name", ev->name);
	for (i = 0; i < ev->n_debug_annotations; i++) {
		const Perfetto__Protos__DebugAnnotation *a = ev->debug_annotations[i];

		if (!a->name)
			continue;
		if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE)
			line_int(l, a->name, a->int_value);
		else if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE)
			line_str(l, a->name, a->string_value);
	}
}

bool dump_trigger_packet(struct dump_ctx *c, const Packet *p)
{
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRIGGER:
		trigger(c, p, "trigger", p->trigger);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLONE_SNAPSHOT_TRIGGER:
		trigger(c, p, "clone_snapshot_trigger", p->clone_snapshot_trigger);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
		track(c, p);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT:
		event(c, p);
		break;
	default:
		return false;
	}
	dump_end(c);
	return true;
}
