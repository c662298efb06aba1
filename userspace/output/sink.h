/* Where encoded TracePackets go. A sink takes one packet at a time (the
 * serialized TracePacket, without the Trace framing) and tags it with the
 * packet sequence it belongs to; the file writer frames it as Trace field 1.
 * The central buffer (a later stage) is another sink in front of the file. */
#ifndef BTR_SINK_H
#define BTR_SINK_H

#include <stddef.h>
#include <stdint.h>

/* A writable region of a sink's own memory: [p, end). */
struct sink_span {
	uint8_t *p, *end;
};

struct packet_sink {
	/* Returns 0, or a negative errno; the sink keeps the first error. */
	int (*write)(struct packet_sink *s, uint32_t seq_id,
		     const uint8_t *pkt, size_t len);
	void *ctx;
	/* Optional, for writing a packet in place (encode/span.h uses them
	 * and falls back to write() when they are NULL). reserve() starts a
	 * packet of exactly `len` bytes and gives the first region to fill;
	 * once a region is full and bytes remain, advance() gives the next.
	 * The packet is complete when its last byte is written; nothing else
	 * may be written to the sink in between. Both return 0 or a negative
	 * errno. */
	int (*reserve)(struct packet_sink *s, uint32_t seq_id, size_t len,
		       struct sink_span *sp);
	int (*advance)(struct packet_sink *s, uint32_t seq_id,
		       struct sink_span *sp);
};

static inline int sink_write(struct packet_sink *s, uint32_t seq_id,
			     const uint8_t *pkt, size_t len)
{
	return s->write(s, seq_id, pkt, len);
}

#endif
