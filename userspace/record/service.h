/* The packets Perfetto's service writes on its own sequence: clock
 * snapshots, the config echo, the trace uuid, system info, lifecycle
 * events, and the final ftrace and trace statistics. */
#ifndef BTR_SERVICE_H
#define BTR_SERVICE_H

#include <stdint.h>

#include "buffer/central.h"
#include "output/sink.h"
#include "record.h"
#include "record/clocks.h"
#include "record/options.h"

int service_emit_clock_snapshot(struct packet_sink *s, uint32_t seq,
				const struct clock_value *c, int n);
int service_emit_config(struct packet_sink *s, const struct record_opts *o);
int service_emit_uuid(struct packet_sink *s);
int service_emit_system_info(struct packet_sink *s, const char *machine_name);
/* tracing_started / tracing_disabled at BOOTTIME ts. */
int service_emit_event(struct packet_sink *s, uint32_t seq, uint64_t ts,
		       int started);
/* FtraceStats START (phase 1) or END (phase 2), on the given sequence:
 * dropped_events = BPF reserve failures per CPU, read_events = records
 * read. */
int service_emit_ftrace_stats(struct packet_sink *s, uint32_t seq_id,
			      int phase, const struct btr_cpu_acct *acct,
			      const uint64_t *read_events, uint32_t ncpus);
int service_emit_trace_stats(struct packet_sink *s, const uint32_t *seq_ids,
			     uint32_t nseq, const struct central_stats *cs);

#endif
