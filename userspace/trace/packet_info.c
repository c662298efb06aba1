/* Top-level walk of a TracePacket (see packet_info.h). */
#include "trace/packet_info.h"

#include <string.h>

#include "trace/sync_info.h"
#include "util/wire.h"

/* The timestamp_clock_id a TracePacketDefaults sets (0: none). */
static int defaults_clock(const struct wire_field *f, uint32_t *clock,
			  const char **why)
{
	struct wire_reader r;
	struct wire_field g;
	int rc;

	*clock = 0;
	wire_reader_init(&r, f->data, (size_t)f->val);
	while ((rc = wire_next(&r, &g)) > 0) {
		if (g.num != DEFAULTS_TIMESTAMP_CLOCK_ID)
			continue;
		if (g.type != WIRE_VARINT) {
			*why = "trace_packet_defaults.timestamp_clock_id is "
			       "not a varint";
			return -1;
		}
		*clock = (uint32_t)g.val;
	}
	if (rc < 0)
		*why = "malformed trace_packet_defaults";
	return rc;
}

static bool want_type(const struct wire_field *f, enum wire_type t,
		      const char **why)
{
	static const char *const msgs[] = {
		[WIRE_VARINT] = "a field of the packet that must be a varint "
				"has another wire type",
		[WIRE_LEN] = "a message field of the packet is not "
			     "length-delimited",
	};

	if (f->type == t)
		return true;
	*why = msgs[t];
	return false;
}

int packet_info_read(const uint8_t *pkt, size_t len, struct packet_info *info,
		     const char **why)
{
	struct wire_reader r;
	struct wire_field f;
	int rc;

	memset(info, 0, sizeof(*info));
	wire_reader_init(&r, pkt, len);
	while ((rc = wire_next(&r, &f)) > 0) {
		switch (f.num) {
		case PKT_TIMESTAMP:
		case PKT_SEQ_ID:
		case PKT_SEQUENCE_FLAGS:
		case PKT_INCREMENTAL_STATE_CLEARED:
		case PKT_TIMESTAMP_CLOCK_ID:
		case PKT_MACHINE_ID:
			if (!want_type(&f, WIRE_VARINT, why))
				return -1;
			break;
		case PKT_FTRACE_EVENTS:
		case PKT_CLOCK_SNAPSHOT:
		case PKT_DEFAULTS:
			if (!want_type(&f, WIRE_LEN, why))
				return -1;
			break;
		default:
			break;
		}
		switch (f.num) {
		case PKT_TIMESTAMP:
			info->has_ts = true;
			info->ts = f.val;
			info->needs_rewrite = true;
			break;
		case PKT_TIMESTAMP_CLOCK_ID:
			info->clock_id = (uint32_t)f.val;
			info->needs_rewrite = true;
			break;
		case PKT_SEQ_ID:
			info->seq_id = (uint32_t)f.val;
			info->has_seq_id = true;
			break;
		case PKT_SEQUENCE_FLAGS:
			if (f.val & SEQ_FLAG_CLEARED)
				info->cleared = true;
			break;
		case PKT_INCREMENTAL_STATE_CLEARED:
			if (f.val)
				info->cleared = true;
			break;
		case PKT_MACHINE_ID:
			info->machine_id = (uint32_t)f.val;
			info->has_machine_id = true;
			break;
		case PKT_SYSTEM_INFO:
			if (f.type == WIRE_LEN) {
				info->system_info = f.data;
				info->system_info_len = (size_t)f.val;
			}
			break;
		case PKT_REMOTE_CLOCK_SYNC:
			if (!want_type(&f, WIRE_LEN, why))
				return -1;
			info->remote_clock_sync = f.data;
			info->remote_clock_sync_len = (size_t)f.val;
			break;
		case PKT_TRACE_STATS:
			info->trace_stats = true;
			break;
		case PKT_INTERNED_DATA:
			info->interned = true;
			break;
		case PKT_DEFAULTS:
			info->has_defaults = true;
			info->needs_rewrite = true;
			if (defaults_clock(&f, &info->defaults_clock, why))
				return -1;
			break;
		case PKT_CLOCK_SNAPSHOT:
			info->snapshot = f.data;
			info->snapshot_len = (size_t)f.val;
			info->needs_rewrite = true;
			break;
		case PKT_FTRACE_EVENTS:
			info->bundle = f.data;
			info->bundle_len = (size_t)f.val;
			info->needs_rewrite = true;
			break;
		case PKT_COMPRESSED_PACKETS:
			if (!want_type(&f, WIRE_LEN, why))
				return -1;
			info->compressed = f.data;
			info->compressed_len = (size_t)f.val;
			break;
		case PKT_SYNC_MARKER:
			info->sync_marker = true;
			break;
		case SYNC_INFO_FIELD:
			if (f.type == WIRE_LEN) {
				info->sync_info = f.data;
				info->sync_info_len = (size_t)f.val;
			}
			break;
		case PKT_ZSTD_COMPRESSED_PACKETS:
			info->zstd = true;
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		*why = r.err;
	return rc;
}

bool system_info_machine_name(const uint8_t *p, size_t n, const char **name,
			      size_t *len)
{
	struct wire_reader r;
	struct wire_field f;
	bool found = false;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		if (f.num == SYSTEM_INFO_MACHINE_NAME && f.type == WIRE_LEN) {
			*name = (const char *)f.data;
			*len = (size_t)f.val;
			found = f.val != 0;
		}
	}
	return found;
}
