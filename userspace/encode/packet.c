/* Serializes TracePackets into a grow-only scratch buffer and forwards the
 * bytes to a sink. */
#include "encode/packet.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static uint8_t *scratch;
static size_t scratch_cap;

static void scratch_free(void)
{
	free(scratch);
	scratch = NULL;
	scratch_cap = 0;
}

static int32_t writer_pid(void)
{
	static int32_t pid;

	if (!pid)
		pid = (int32_t)getpid();
	return pid;
}

int packet_emit(struct packet_sink *sink, uint32_t seq_id,
		Perfetto__Protos__TracePacket *p)
{
	size_t len;

	p->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p->trusted_packet_sequence_id = seq_id;
	/* The writer's pid, as traced stamps producers' packets. */
	p->has_trusted_pid = 1;
	p->trusted_pid = writer_pid();
	len = perfetto__protos__trace_packet__get_packed_size(p);
	if (len > scratch_cap) {
		size_t cap = len < 4096 ? 4096 : len * 2;
		uint8_t *n = realloc(scratch, cap);

		if (!n)
			return -ENOMEM;
		if (!scratch)
			atexit(scratch_free);
		scratch = n;
		scratch_cap = cap;
	}
	perfetto__protos__trace_packet__pack(p, scratch);
	return sink_write(sink, seq_id, scratch, len);
}
