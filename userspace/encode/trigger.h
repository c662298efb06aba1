/* The packets of triggers: Perfetto's Trigger (and clone_snapshot_trigger
 * in the snapshot a trigger wrote), the echo of the triggers in the
 * TraceConfig, and a slice on the offending thread's own track over the
 * interval the condition saw, so that the UI opens on it. */
#ifndef BTR_ENCODE_TRIGGER_H
#define BTR_ENCODE_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

#include "output/sink.h"
#include "perfetto/trace.pb-c.h"
#include "trigger/spec.h"

/* The sequence of the thread slices (a TrackDescriptor that clears its
 * incremental state, then the slice's events, for each trigger). */
#define SEQ_TRIGGERS 0xfff0u

int trigger_emit(struct packet_sink *s, uint32_t seq, uint64_t ts,
		 const char *name, const char *producer, int32_t uid,
		 bool clone_snapshot);

struct trigger_mark {
	int32_t pid, tid;
	const char *comm;
	uint64_t start, end; /* an instant when equal */
	const char *title;   /* the slice's name */
	const char *condition;
	uint32_t cpu;
	int64_t value;       /* ns, or threads */
	const char *value_name;
};

int trigger_emit_mark(struct packet_sink *s, const struct trigger_mark *m);

/* Room for the TriggerConfig echo of TRIG_MAX triggers. */
struct trigger_config_echo {
	Perfetto__Protos__TraceConfig__TriggerConfig tc;
	Perfetto__Protos__TraceConfig__TriggerConfig__Trigger t[TRIG_MAX];
	Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *tp[TRIG_MAX];
};

/* Fills e with specs[0..n) (stop: STOP_TRACING, else CLONE_SNAPSHOT);
 * returns &e->tc for TraceConfig.trigger_config. */
Perfetto__Protos__TraceConfig__TriggerConfig *
trigger_config_fill(struct trigger_config_echo *e, const struct trig_spec *specs,
		    uint32_t n, bool stop, uint64_t delay_ns,
		    uint64_t timeout_ns);

#endif
