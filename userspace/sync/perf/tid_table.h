/* The process (tgid) of each thread id of one machine, as the trace inputs
 * of a `sync` run describe them (trace_tids.h fills it): perf script text
 * printed without pids (`-F comm,tid,...`) takes its samples' processes
 * from here. A hash map (util/hashmap.h) keyed with a random seed
 * (hostile tids cannot cluster).
 *
 * Bounded: at most `max` tids (TID_TABLE_MAX by default: 24 MiB of slots
 * at most, 12 bytes each); tids offered beyond that are refused and counted. A tid given
 * two different tgids (the kernel reused it for another process during
 * the traces) has no answer: which process a sample meant is unknown. */
#ifndef BTR_TID_TABLE_H
#define BTR_TID_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

#define TID_TABLE_MAX (1u << 20)
#define TID_TABLE_REUSED (-1)

struct tid_table {
	struct hmap map;     /* tid -> tgid (int32_t) */
	size_t max;          /* the limit of map.n */
	uint64_t refused;    /* new tids offered while full */
	uint64_t reused;     /* tids given a second tgid */
};

/* An empty table of at most max tids (0: TID_TABLE_MAX). */
void tid_table_init(struct tid_table *t, size_t max);
/* Frees the slots; the table is empty again, with its limit and counts. */
void tid_table_free(struct tid_table *t);

/* Notes that tid belongs to process tgid; ignored unless both are > 0.
 * Returns 0 or -ENOMEM. */
int tid_table_add(struct tid_table *t, int32_t tid, int32_t tgid);

/* tid's tgid, or -1: unknown or reused. (Counts its probes.) */
int32_t tid_table_tgid(struct tid_table *t, int32_t tid);

#endif
