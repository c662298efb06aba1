/* Serializes protobuf-c TracePackets into a sink, in place when the sink
 * gives a region that holds the whole packet (encode/span.h). */
#include "encode/packet.h"

#include <unistd.h>

#include "encode/span.h"

int32_t packet_writer_pid(void)
{
	static int32_t pid;

	if (!pid)
		pid = (int32_t)getpid();
	return pid;
}

int packet_emit(struct packet_sink *sink, uint32_t seq_id,
		Perfetto__Protos__TracePacket *p)
{
	struct span_writer w;
	size_t len;
	int e;

	p->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p->trusted_packet_sequence_id = seq_id;
	/* The writer's pid, as traced stamps producers' packets. */
	p->has_trusted_pid = 1;
	p->trusted_pid = packet_writer_pid();
	len = perfetto__protos__trace_packet__get_packed_size(p);
	e = span_begin(&w, sink, seq_id, len);
	if (e)
		return e;
	span_message(&w, &p->base, len);
	return span_end(&w);
}
