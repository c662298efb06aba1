/* A packet sink that keeps packets in memory, to be replayed into another
 * sink: the header packets (first clock snapshot, config, uuid, system
 * info) that every output file starts with, so a ring buffer that wraps
 * never loses them. */
#ifndef BTR_MEM_SINK_H
#define BTR_MEM_SINK_H

#include "output/sink.h"

struct mem_sink {
	struct packet_sink sink;
	uint8_t *buf; /* records: seq id (4 bytes), length (4 bytes), bytes */
	size_t len, cap;
};

void mem_sink_init(struct mem_sink *m);
int mem_sink_replay(const struct mem_sink *m, struct packet_sink *out);
void mem_sink_free(struct mem_sink *m);

#endif
