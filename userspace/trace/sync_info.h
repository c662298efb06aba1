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
 *   message Stat {
 *     optional string name = 1;
 *     optional uint64 value = 2;
 *     optional uint32 machine_id = 3;  // the TracePacket.machine_id of the
 *   }                                  // machine counted; absent: the host
 *                                      // (or a global stat)
 *
 * Stat names are Perfetto's (timeline.h), one Stat per name and machine
 * with a non-zero value, in stat order, the host's first, then by
 * machine_id. The stats Perfetto scopes per machine are counted on the
 * machine whose clock, packet or input failed; the global ones
 * (sync_stat_per_machine) have no machine_id.
 *
 * The drop counts add up over repeated syncs of the same file
 * (invalid_clock_snapshots, whose snapshots stay in the file, is the last
 * sync's). An earlier trailer's Stat goes where a packet of its
 * machine_id goes (machines.h): to that machine, or to the file's own
 * machine for the host's, for an id the file has no packet of, and for
 * the id of a file that adopted it as its own (then the host's and that
 * machine's drops are one machine's, as their packets are).
 *
 * Readers of our own (dump, sync) take the bundles of a file with this
 * trailer in its trace_clock instead of BOOTTIME. */
#ifndef BTR_SYNC_INFO_H
#define BTR_SYNC_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "clock/timeline.h"
#include "util/wire.h"

#define SYNC_INFO_FIELD 536870000u

/* The BtrSyncInfo payload among the unknown fields protobuf-c kept of a
 * decoded TracePacket (with their length prefix): true with *p and *n
 * set, false if the packet holds none. */
bool sync_info_find(const ProtobufCMessage *pkt, const uint8_t **p,
		    size_t *n);

/* Builds the trailer TracePacket into b (emptied first): tl's trace
 * clock, the totals st, split by machine as tl->by_machine counts them
 * (each machine under its output id; the rest of a total is the host's). */
void sync_info_build(struct wbuf *b, const struct timeline *tl,
		     const struct sync_stats *st);

/* Reads a BtrSyncInfo payload: its trace clock (false if it has none) and
 * its stats added into *st when st is not NULL, whatever their machine
 * (unknown names skipped). */
bool sync_info_read(const uint8_t *p, size_t n, uint32_t *trace_clock,
		    struct sync_stats *st);

/* Adds the per-machine stats of a BtrSyncInfo payload read from an input
 * with machine slots fm to tl->by_machine, each on the machine of its
 * machine_id's slot (file_machines_find). */
void sync_info_read_machines(const uint8_t *p, size_t n,
			     const struct file_machines *fm,
			     struct timeline *tl);

/* One Stat of a BtrSyncInfo payload. name points into the payload and is
 * not NUL-terminated: name_len bytes. machine_id 0: none. */
struct sync_info_stat {
	const char *name;
	size_t name_len;
	uint64_t value;
	uint32_t machine_id;
};

/* Calls fn for each Stat of a BtrSyncInfo payload; for showing them
 * (e.g. `stats`). */
void sync_info_each_machine_stat(const uint8_t *p, size_t n,
				 void (*fn)(void *ctx,
					    const struct sync_info_stat *s),
				 void *ctx);

#endif
