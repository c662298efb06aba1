/* What the offline passes remember per packet sequence (trusted packet
 * sequence id), in file order:
 *
 * - the clock its TracePacketDefaults set, as trace_processor follows it: a
 *   packet that clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED
 *   or incremental_state_cleared) starts a generation without defaults;
 *   TracePacketDefaults then replace the generation's defaults (without
 *   timestamp_clock_id they remove the clock); data loss
 *   (previous_packet_dropped) keeps them;
 * - the latest time of its packets, where a later packet of the sequence
 *   that carries incremental state but no time is sorted (so it stays
 *   before the packets of its sequence that follow and depend on it).
 *
 * Sequence 0 has neither. */
#ifndef BTR_SEQ_STATE_H
#define BTR_SEQ_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/packet_info.h"
#include "util/hashmap.h"

/* Zeroed is empty. */
struct seq_state {
	struct hmap map; /* seq id -> struct seq_slot */
};

struct seq_slot {
	uint32_t clock; /* 0: no default clock */
	int64_t latest; /* INT64_MIN: no time yet */
};

void seq_state_free(struct seq_state *s);
/* Applies the packet's clear flag and defaults. Returns 0 or -ENOMEM. */
int seq_state_update(struct seq_state *s, const struct packet_info *p);
/* The default clock of a sequence, 0 if none. */
uint32_t seq_state_clock(const struct seq_state *s, uint32_t seq);
/* Notes a time of a packet of the sequence. Returns 0 or -ENOMEM. */
int seq_state_note_time(struct seq_state *s, uint32_t seq, int64_t t);
/* The latest time noted for the sequence, INT64_MIN if none. */
int64_t seq_state_latest(const struct seq_state *s, uint32_t seq);

#endif
