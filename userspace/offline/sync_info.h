/* The trailer packet `sync` writes after the sorted packets, so that the
 * file says what was done to it. It is a TracePacket holding one field,
 * SYNC_INFO_FIELD, far above Perfetto's field numbers (trace_processor and
 * the UI skip it like any unknown field):
 *
 *   message BtrSyncInfo {            // TracePacket field 536870000
 *     optional uint32 trace_clock = 1; // clock of every timestamp of the
 *                                      // file, ftrace bundles' included
 *     repeated Stat stat = 2;          // timestamps dropped, by cause
 *     optional string tool = 3;        // "bpftrace-rec sync VERSION"
 *   }
 *   message Stat { optional string name = 1; optional uint64 value = 2; }
 *
 * Stat names are Perfetto's (timeline.h); the drop counts add up over
 * repeated syncs of the same file (invalid_clock_snapshots, whose
 * snapshots stay in the file, is the last sync's). Readers of our own (dump, sync) take the
 * bundles of a file with this trailer in its trace_clock instead of
 * BOOTTIME. */
#ifndef BTR_SYNC_INFO_H
#define BTR_SYNC_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offline/timeline.h"
#include "util/wire.h"

#define SYNC_INFO_FIELD 536870000u

/* Builds the trailer TracePacket into b (emptied first). */
void sync_info_build(struct wbuf *b, uint32_t trace_clock,
		     const struct sync_stats *st);

/* Reads a BtrSyncInfo payload: its trace clock (false if it has none) and
 * its stats added into *st when st is not NULL (unknown names skipped). */
bool sync_info_read(const uint8_t *p, size_t n, uint32_t *trace_clock,
		    struct sync_stats *st);

/* Calls fn for each (name, value) stat of a BtrSyncInfo payload; for
 * showing them (e.g. `stats`, `dump`). Names point into p and are not
 * NUL-terminated: name_len bytes. */
void sync_info_each_stat(const uint8_t *p, size_t n,
			 void (*fn)(void *ctx, const char *name,
				    size_t name_len, uint64_t value),
			 void *ctx);

#endif
