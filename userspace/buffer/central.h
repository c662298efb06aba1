/* The central buffer: a fixed-size ring of chunks shared by every packet
 * sequence, as in Perfetto's tracing service. Each sequence fills a staging
 * chunk of its own; full (or flushed) chunks are committed into the ring,
 * which either overwrites its oldest chunks (ring buffer) or refuses new
 * ones once full (discard). A read pass hands whole packets, reassembled
 * across chunks, to a sink in commit order, marking the first packet after
 * a gap with previous_packet_dropped; every byte and chunk is accounted as
 * Perfetto's TraceStats.BufferStats does. Writers on several threads
 * share it without a lock per packet: see central_set_owned(). */
#ifndef BTR_CENTRAL_H
#define BTR_CENTRAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sink.h"

enum fill_policy { FILL_RING = 1, FILL_DISCARD = 2 }; /* BufferConfig values */

struct central_stats {
	uint64_t buffer_size;
	uint64_t bytes_written, chunks_written;
	uint64_t bytes_overwritten, chunks_overwritten;
	uint64_t chunks_discarded;
	uint64_t bytes_read, chunks_read;
	uint64_t write_wrap_count;
	uint64_t readaheads_failed;   /* continuations whose head was lost */
	uint64_t packets_lost;        /* whole packets in lost chunks */
};

struct central;

/* size is rounded down to whole chunks (at least 2). NULL when out of
 * memory. */
struct central *central_new(uint64_t size, uint32_t chunk_size,
			    enum fill_policy policy);
void central_free(struct central *c);
/* The sink that writers use: packets of sequence seq_id go to its staging
 * chunk. */
struct packet_sink *central_sink(struct central *c);
/* More than half of the chunks are unread: a streaming recorder writes
 * them out now rather than let them be overwritten (or refused). */
static inline bool central_under_pressure(size_t unread, size_t slots)
{
	return 2 * unread > slots;
}
/* Commits every partly filled staging chunk (a flush), except those of
 * sequences owned by other threads. */
void central_flush(struct central *c);
/* Several writer threads: each sequence is written by one thread at a
 * time. A sequence marked owned is written by a thread other than the one
 * that reads and flushes the buffer: central_flush() leaves its staging
 * chunk alone, its owner commits it with central_flush_seq(), and read
 * passes copy each chunk out under the lock. Mark (and unmark) while no
 * other thread writes; sequences with higher ids than any existing one
 * cannot be added while some are owned (the writer gets -ENOMEM). */
int central_set_owned(struct central *c, uint32_t seq, bool owned);
void central_flush_seq(struct central *c, uint32_t seq);
/* Writes every unread packet to out. consume: mark the chunks read (a
 * streaming write or the final pass); otherwise the buffer is unchanged (a
 * snapshot). Returns 0 or the sink's error. */
int central_read(struct central *c, struct packet_sink *out, bool consume);
/* The statistics as they are: only while no other thread writes. */
const struct central_stats *central_stats(const struct central *c);
/* A consistent copy, at any time. */
void central_stats_copy(struct central *c, struct central_stats *out);
/* Committed chunks not read yet, and the number of chunk slots. */
size_t central_unread_chunks(const struct central *c);
size_t central_slots(const struct central *c);
/* Packets lost so far by sequence seq_id (overwritten or discarded). */
uint64_t central_seq_packets_lost(struct central *c, uint32_t seq_id);

#endif
