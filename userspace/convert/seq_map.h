/* Sequence ids of merged inputs. Two recordings both use sequence 1, 2, ...
 * for their writers, and a reader keeps incremental state (interned data,
 * defaults) per trusted_packet_sequence_id: in one output file they must
 * not meet. The first pass notes each input's sequence ids; then each
 * input, in processing order, keeps its ids where no earlier input used
 * them and gets fresh ones (above every id used so far) where one did.
 * Sequence 0 (no sequence) is never mapped. */
#ifndef BTR_SEQ_MAP_H
#define BTR_SEQ_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

/* Zeroed is empty. */
struct seq_map {
	struct hmap map; /* input id -> output id (uint32_t) */
	bool renumbered; /* some id got another output id */
};

void seq_map_free(struct seq_map *m);
/* Notes sequence id seq (not 0); out = seq until seq_map_assign(). Returns
 * 0 or -ENOMEM. */
int seq_map_add(struct seq_map *m, uint32_t seq);
bool seq_map_has(const struct seq_map *m, uint32_t seq);
/* The output id of seq: seq itself if it was never noted. */
uint32_t seq_map_get(const struct seq_map *m, uint32_t seq);

/* Gives m's ids their output ids, keeping those free in *used and taking
 * fresh ones above *max_used otherwise; adds them to *used. Returns 0 or
 * -ENOMEM. */
int seq_map_assign(struct seq_map *m, struct seq_map *used,
		   uint32_t *max_used);
/* A fresh output id for a sequence the tool writes itself (perf samples),
 * added to *used. Returns 0 or -ENOMEM. */
int seq_map_fresh(struct seq_map *used, uint32_t *max_used, uint32_t *out);

#endif
