/* What the offline tools need to know about a TracePacket, read from its
 * top-level fields in one walk without decoding the payload: timestamp and
 * clock, sequence id and flags, the defaults it sets, the machine, and
 * where its ClockSnapshot or FtraceEventBundle is. Field numbers are
 * Perfetto's (our subset of them: protos/perfetto/trace.proto). */
#ifndef BTR_PACKET_INFO_H
#define BTR_PACKET_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TracePacket field numbers. */
enum {
	PKT_FTRACE_EVENTS = 1,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRACE_STATS = 35,
	PKT_SYNC_MARKER = 36,
	PKT_INCREMENTAL_STATE_CLEARED = 41,
	PKT_SYSTEM_INFO = 45,
	PKT_COMPRESSED_PACKETS = 50,
	PKT_TIMESTAMP_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,
	PKT_MACHINE_ID = 98,
	PKT_REMOTE_CLOCK_SYNC = 107,
	PKT_ZSTD_COMPRESSED_PACKETS = 133,
};

/* SystemInfo.machine_name. */
#define SYSTEM_INFO_MACHINE_NAME 17

/* TracePacketDefaults.timestamp_clock_id. */
#define DEFAULTS_TIMESTAMP_CLOCK_ID 58

#define SEQ_FLAG_CLEARED 1u /* SEQ_INCREMENTAL_STATE_CLEARED */

struct packet_info {
	bool has_ts;
	uint64_t ts;
	uint32_t clock_id;      /* timestamp_clock_id, 0 when absent */
	uint32_t seq_id;        /* trusted_packet_sequence_id, 0 when absent */
	bool cleared;           /* starts a new incremental-state generation */
	bool interned;          /* carries interned_data */
	bool has_defaults;
	uint32_t defaults_clock; /* its timestamp_clock_id, 0 when absent */
	uint32_t machine_id;    /* 0 when absent */
	const uint8_t *snapshot; /* ClockSnapshot payload, NULL if none */
	size_t snapshot_len;
	const uint8_t *bundle;  /* FtraceEventBundle payload, NULL if none */
	size_t bundle_len;
	bool sync_marker;       /* carries a synchronization_marker */
	const uint8_t *compressed; /* compressed_packets payload (deflate) */
	size_t compressed_len;
	const uint8_t *sync_info; /* our trailer (sync_info.h), NULL if none */
	size_t sync_info_len;
	bool zstd;              /* carries zstd_compressed_packets */
	const uint8_t *system_info; /* SystemInfo payload, NULL if none */
	size_t system_info_len;
	const uint8_t *remote_clock_sync; /* RemoteClockSync payload, NULL if
					   * none */
	size_t remote_clock_sync_len;
	bool trace_stats;       /* carries trace_stats */
	bool has_seq_id;        /* trusted_packet_sequence_id is present */
	bool has_machine_id;    /* machine_id is present (even 0) */
	bool needs_rewrite;     /* holds a field `sync` changes (1, 6, 8, 58, 59) */
};

/* Fills *info from the packet's bytes. Returns 0, or -1 with *why set when
 * the packet is malformed or a field we read has the wrong wire type. As
 * in protobuf, the last occurrence of a scalar field wins. */
int packet_info_read(const uint8_t *pkt, size_t len, struct packet_info *info,
		     const char **why);

/* The machine_name of a SystemInfo payload: true with *name (not
 * NUL-terminated) and *len when it has a non-empty one. */
bool system_info_machine_name(const uint8_t *p, size_t n, const char **name,
			      size_t *len);

#endif
