/* What `sync` changes in each converted packet of a trace input so that
 * several inputs make one trace (docs/DESIGN.md, 'Relabel'):
 *
 * - machine_id: the output id of the packet's machine (machines.h); none
 *   on the host (the machine of the trace clock);
 * - trusted_packet_sequence_id: the input's output id of that sequence
 *   (seq_map.h), so that two inputs' sequences never meet;
 *   these two are set by the conversion itself, in its one walk of the
 *   packet (convert_input with relabel, rewrite_params.seqs_out); here:
 * - the sequence ids of TraceStats.writer_stats (stats maps losses with
 *   them);
 * - SystemInfo: one per machine, the first in processing order, its
 *   machine_name set to the machine's name; later ones are left out.
 *   Named machines without any get one (relabel_sysinfo_missing);
 * - left out as well, since every timestamp is on the trace clock already:
 *   ClockSnapshots of other machines or of isolated inputs (a reader would
 *   take them to convert those timestamps again; the trace clock's own
 *   machine keeps its snapshots) and remote_clock_sync.
 *
 * A packet nothing changes keeps its bytes. */
#ifndef BTR_RELABEL_H
#define BTR_RELABEL_H

#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "clock/timeline.h"
#include "util/wire.h"

struct relabel {
	struct timeline *tl;
	struct wbuf out;
};

void relabel_free(struct relabel *r);

/* The packet *data, *len (converted, with its ids relabelled, from the
 * input packet described by info) as the output has it: 1 with *data, *len replaced (valid until the
 * next call), 0 when it is left out, -ENOMEM. */
int relabel_packet(struct relabel *r, const struct input *in,
		   const struct packet_info *info, const uint8_t **data,
		   size_t *len);

/* Calls emit with a SystemInfo{machine_name} packet for every named
 * machine that has none yet. Returns 0, -ENOMEM or emit's error. */
int relabel_sysinfo_missing(struct relabel *r,
			    int (*emit)(void *ctx, const uint8_t *p,
					size_t n),
			    void *ctx);

#endif
