/* RemoteClockSync packets of a trace recorded across machines (traced_relay;
 * docs/clock-model.md, 'Remote clock sync'): on the packets of a client
 * machine X, a list of SyncedClocks {client_clocks, host_clocks} read in a
 * ping round trip.
 * Each client snapshot is one of X's clock snapshots (the first pass adds
 * it like any other); from consecutive messages (unless their client
 * BOOTTIME readings are 30 s or more apart) each clock read on both sides
 * gets the offsets o1 = (c1 + c2) / 2 - h1 and o2 = c2 - (h1 + h2) / 2,
 * their mean is the clock's offset, and one edge relates the trace clock
 * machine's clock at `anchor` to X's at anchor + offset, anchor being the
 * host reading of the last message that has one. Integer division
 * truncates toward zero, as in the reference. */
#ifndef BTR_REMOTE_SYNC_H
#define BTR_REMOTE_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "clock/clock_graph.h"

struct rs_reading {
	uint32_t clock;
	uint64_t client, host; /* 0: not read on that side */
};

struct rs_message {
	uint32_t slot;         /* the client's machine slot in its input */
	size_t first, n;       /* its readings */
};

struct remote_sync {
	struct rs_message *m;
	size_t n, cap;
	struct rs_reading *r;
	size_t nr, rcap;
};

void remote_sync_free(struct remote_sync *rs);

/* Notes the SyncedClocks of a RemoteClockSync payload p[0..n) of a packet
 * of machine slot `slot`; each client snapshot payload goes to
 * client(ctx, payload, len). Returns 0, -1 (malformed, *why set), or the
 * callback's or -ENOMEM error. */
int remote_sync_add(struct remote_sync *rs, uint32_t slot, const uint8_t *p,
		    size_t n, int (*client)(void *ctx, const uint8_t *snap,
					    size_t len),
		    void *ctx, const char **why);

/* One edge per clock and client machine: calls edge(ctx, slot, clock,
 * host_ts, client_ts) with the host and client readings it relates.
 * Returns 0 or the first error edge returned. */
int remote_sync_edges(const struct remote_sync *rs,
		      int (*edge)(void *ctx, uint32_t slot, uint32_t clock,
				  int64_t host, int64_t client),
		      void *ctx);

#endif
