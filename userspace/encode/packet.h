/* Serializing a protobuf-c TracePacket into a sink, and the packet
 * sequence ids the recorder uses. */
#ifndef BTR_PACKET_H
#define BTR_PACKET_H

#include "output/sink.h"
#include "perfetto/trace.pb-c.h"

/* Packet sequences (trusted_packet_sequence_id) written by the recorder. */
enum {
	SEQ_SERVICE = 1,      /* header (first clock snapshot, config, system
			       * info) and trailer (stats): never in the ring */
	SEQ_SERVICE_RING = 2, /* later clock snapshots and lifecycle events:
			       * through the central buffer, so a wrapped ring
			       * shows their loss on a sequence of their own */
	SEQ_PROCESS_TREE = 3, /* ProcessTree from /proc */
	SEQ_FTRACE_BASE = 4,  /* + cpu: that CPU's FtraceEventBundles */
	/* SEQ_FTRACE_BASE + ncpus + cpu: that CPU's --callstacks PerfSamples.
	 * One sequence per CPU, not one for all as Perfetto's perf data
	 * source writes: a CPU's samples are in time order, so `sync`, which
	 * sorts packets by time, keeps every interned entry before its first
	 * use. */
};

#define SEQ_FLAG_INCREMENTAL_STATE_CLEARED 1u

/* The pid every packet is stamped with (trusted_pid). */
int32_t packet_writer_pid(void);

/* Sets the sequence id on `p`, serializes it and hands it to the sink.
 * Returns 0 or a negative errno. */
int packet_emit(struct packet_sink *sink, uint32_t seq_id,
		Perfetto__Protos__TracePacket *p);

#endif
