/* Where encoded TracePackets go. A sink takes one packet at a time (the
 * serialized TracePacket, without the Trace framing) and tags it with the
 * packet sequence it belongs to; the file writer frames it as Trace field 1.
 * The central buffer (a later stage) is another sink in front of the file. */
#ifndef BTR_SINK_H
#define BTR_SINK_H

#include <stddef.h>
#include <stdint.h>

struct packet_sink {
	/* Returns 0, or a negative errno; the sink keeps the first error. */
	int (*write)(struct packet_sink *s, uint32_t seq_id,
		     const uint8_t *pkt, size_t len);
	void *ctx;
};

static inline int sink_write(struct packet_sink *s, uint32_t seq_id,
			     const uint8_t *pkt, size_t len)
{
	return s->write(s, seq_id, pkt, len);
}

#endif
