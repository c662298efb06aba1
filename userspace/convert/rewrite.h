/* Rewriting a TracePacket onto the trace clock, at the wire level so that
 * every byte we do not change survives, unknown fields included:
 *
 * - timestamp (8) gets the converted value; timestamp_clock_id (58) goes;
 *   TracePacketDefaults (59) loses its timestamp_clock_id (every timestamp
 *   is in the trace clock now, so no default may name another clock);
 * - in an FtraceEventBundle (1): each FtraceEvent.timestamp, the
 *   delta-encoded compact_sched switch_timestamp and waking_timestamp
 *   (decoded, converted, encoded again, each array one packed field) and
 *   previous_bundle_end_timestamp / last_read_event_timestamp (when not 0).
 *   Events are in BOOTTIME unless ftrace_clock says MONO_RAW (then
 *   MONOTONIC_RAW) or GLOBAL/LOCAL (then the sequence-scoped clock 64 that
 *   the bundles' ftrace_timestamp/boot_timestamp pairs relate to BOOTTIME,
 *   as trace_processor reads them). Once converted the bundle drops
 *   ftrace_clock, ftrace_timestamp and boot_timestamp, which described the
 *   old clock;
 * - a ClockSnapshot (6) keeps its clocks; its primary_trace_clock is set to
 *   the trace clock when the snapshot would otherwise declare another one
 *   (so a reader takes the unlabelled timestamps in the right clock).
 *
 * The clock of the packet's timestamp is timestamp_clock_id, else the
 * sequence's default (seq_state.h), else the input's default clock.
 * A timestamp that cannot be converted, or converts to a negative time, is
 * never kept: the packet is dropped when it is the packet's timestamp; a
 * single event is dropped (from every parallel compact array) when it is an
 * event of a bundle; the field is dropped for previous_bundle_end_timestamp.
 * Each is counted in the timeline's stats.
 *
 * Sort position of a packet: for a bundle, its earliest event; else its
 * converted timestamp; for a ClockSnapshot without timestamp, its reading
 * of the trace clock; for a packet that carries incremental state (interned
 * data, defaults, a clear) without time, the latest time of its sequence
 * (it stays before the packets of its sequence that follow and may depend
 * on it); otherwise the latest time seen so far in file order (what
 * trace_processor stamps such packets with), so that config and system
 * info stay in front and the final stats last. Snapshots never sort before
 * an earlier snapshot: their order decides how a reader validates them
 * (a snapshot rejected for a trace clock going back must stay after the
 * one it went back from). */
#ifndef BTR_REWRITE_H
#define BTR_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock/machines.h"
#include "trace/packet_info.h"
#include "convert/seq_map.h"
#include "convert/seq_state.h"
#include "convert/snapshots.h"
#include "clock/timeline.h"
#include "util/wire.h"

/* A repeated varint array being gathered. */
struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

struct rewrite {
	struct timeline *tl;
	struct clock_scope scope;  /* the input's file and machine */
	uint32_t adopted_machine;  /* machine_id that means the input's own */
	const struct file_machines *fm; /* the input's machine slots: when
				    * set, a packet's clocks live on its
				    * slot's machine and tag (machines.h) */
	uint32_t default_clock;    /* of packets without one */
	uint32_t bundle_clock;     /* of bundles without ftrace_clock */
	const struct seq_map *seqs_out; /* relabel: see rewrite_params */
	bool compact_as_is;        /* see rewrite_params */
	struct seq_state seqs;
	int64_t latest;            /* latest time seen, INT64_MIN at first */
	int64_t last_snapshot;     /* sort position of the last snapshot */
	/* scratch */
	struct wbuf out;           /* the rewritten packet */
	struct u64vec sw, wk, arr;
	int64_t *sw_ns, *wk_ns;
	uint8_t *sw_keep, *wk_keep;
	size_t sw_cap, wk_cap;
};

/* The result of one packet. */
struct rewritten {
	bool dropped;         /* not written: its timestamp failed */
	bool sync_info;       /* the trailer of an earlier sync, unchanged */
	const uint8_t *data;  /* the packet to write (valid until the next */
	size_t len;           /* call), when not dropped */
	int64_t key;          /* sort position */
};

/* Where one input's packets come from, for rewrite_init(). */
struct rewrite_params {
	struct timeline *tl;
	struct clock_scope scope;  /* the input's file and machine */
	uint32_t default_clock;    /* of packets without one */
	uint32_t bundle_clock;     /* of bundles without ftrace_clock;
				    * 0: BOOTTIME */
	uint32_t adopted_machine;  /* machine_id that means the input's own */
	const struct file_machines *fm; /* the input's machine slots, or
				    * NULL: every packet on scope's machine */
	/* sync: the output's sequence ids of the input (seq_map.h); with fm,
	 * each packet also gets its machine's output id (machines.h) in the
	 * same walk. NULL: ids stay as they are (dump). */
	const struct seq_map *seqs_out;
	/* report: a compact_sched whose events are on the trace clock is
	 * copied without reading its times (neither checked nor counted as
	 * converted, and not in the bundle's sort position); the caller
	 * reads them and leaves out a time past INT64_MAX itself */
	bool compact_as_is;
};

void rewrite_init(struct rewrite *rw, const struct rewrite_params *p);
void rewrite_free(struct rewrite *rw);

/* Rewrites one packet (info from packet_info_read()). Returns 0, -1 when
 * the packet is malformed where it must be rewritten (*why says how), or
 * -ENOMEM. */
int rewrite_packet(struct rewrite *rw, const uint8_t *pkt, size_t len,
		   const struct packet_info *info, struct rewritten *res,
		   const char **why);

#endif
