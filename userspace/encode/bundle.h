/* Per-CPU FtraceEventBundle encoder: turns one CPU's ring records (in ring
 * order) into TracePackets holding FtraceEventBundles, with sched_switch and
 * sched_waking in CompactSched form and the other records as regular
 * FtraceEvents. This is the recorder's hot path: no allocation per record. */
#ifndef BTR_BUNDLE_H
#define BTR_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "output/sink.h"
#include "record.h"

/* A bundle is emitted once it holds this many events, once its estimated
 * size reaches BUNDLE_MAX_BYTES, or when a new comm would make its
 * CompactSched intern table exceed BUNDLE_MAX_COMMS entries. */
#define BUNDLE_MAX_EVENTS 2048
#define BUNDLE_MAX_BYTES (64 * 1024)
#define BUNDLE_MAX_COMMS 64
/* Distinct kernel symbols (blocked functions) interned by one bundle. */
#define BUNDLE_MAX_KSYMS 64

struct bundle_enc_stats {
	uint64_t events[BTR_REC_TYPE_MAX]; /* encoded, by enum btr_rec_type */
	uint64_t bundles;                  /* bundles emitted */
	uint64_t lost;                     /* sum of rec->lost (and noted) */
	uint64_t rejected;                 /* records refused with -EINVAL */
	uint64_t switch_unmatched;         /* switches written as regular
					      events: prev_pid was not the
					      task last switched in, and
					      nothing was lost in between */
	uint64_t last_ts;                  /* timestamp of the last event */
	uint64_t blocked_unnamed;          /* blocked reasons written without
					      a function: no stack, or an
					      address no symbol holds */
};

/* Names the kernel function holding `addr`, with an id that is the same
 * for every address in it and never names another function (from 1).
 * NULL when it cannot. */
typedef const char *(*bundle_symbolize_fn)(void *ctx, uint64_t addr,
					   uint64_t *id);

struct bundle_enc;

/* Encoder for the records of CPU `cpu`; packets go to `sink` on sequence
 * `seq_id`. Returns NULL when out of memory. */
struct bundle_enc *bundle_enc_new(uint32_t cpu, uint32_t seq_id,
				  struct packet_sink *sink);

/* Starts b as if records were lost before its first one: its first
 * switch is then written compact, as traced writes a CPU's first, instead
 * of regular (bundle.c). For tests of the compact encoding. */
void bundle_enc_compact_start(struct bundle_enc *b);

/* Blocked reasons (BTR_REC_BLOCKED) name their function through `fn`:
 * each bundle carries, in its packet's InternedData.kernel_symbols, the
 * names its sched_blocked_reason events point to (iid = the id `fn`
 * gives), so that no bundle depends on an earlier one. Without it they
 * are written with io_wait only. */
void bundle_enc_set_symbolizer(struct bundle_enc *b, bundle_symbolize_fn fn,
			       void *ctx);

/* Encodes one ring record of `len` bytes; may emit a bundle. Returns 0,
 * -EINVAL for a record it does not take (unknown type, BTR_REC_CLOCK, `len`
 * too short for its type), or the negative errno of a failed emit (the
 * pending bundle, which may hold this record, is then dropped and the next
 * bundle is flagged lost_events). */
int bundle_enc_add(struct bundle_enc *b, const struct btr_hdr *rec,
		   size_t len);

/* bundle_enc_add of a record its caller knows to be a BTR_REC_SWITCH,
 * or a BTR_REC_WAKING, whole: for a caller that dispatched on the type
 * already (trig_watch_around), so that the record's type is not branched
 * on twice (an unpredictable type costs a branch miss at each). */
int bundle_enc_add_switch(struct bundle_enc *b, const struct btr_switch *r);
int bundle_enc_add_waking(struct bundle_enc *b, const struct btr_wakeup *r);

/* bundle_enc_add with untyped arguments, for a caller that takes an
 * encoding callback (trig_watch_around). */
static inline int bundle_enc_add_cb(void *b, const void *rec, size_t len)
{
	return bundle_enc_add(b, rec, len);
}

static inline int bundle_enc_add_switch_cb(void *b,
					   const struct btr_switch *r)
{
	return bundle_enc_add_switch(b, r);
}

static inline int bundle_enc_add_waking_cb(void *b,
					   const struct btr_wakeup *r)
{
	return bundle_enc_add_waking(b, r);
}

/* The three as an initializer of the struct trig_enc that
 * trig_watch_around takes. */
#define BUNDLE_ENC_CBS                                                     \
	{ bundle_enc_add_cb, bundle_enc_add_switch_cb,                     \
	  bundle_enc_add_waking_cb }

/* Accounts `lost` records that did not reach this encoder, e.g. the `lost`
 * of a clock record handled elsewhere: the next bundle gets lost_events. */
int bundle_enc_note_lost(struct bundle_enc *b, uint32_t lost);

/* Emits the pending bundle if it holds any event. Returns 0 or a negative
 * errno. Call it at the end of each drain pass and at stop. */
int bundle_enc_flush(struct bundle_enc *b);

const struct bundle_enc_stats *bundle_enc_stats(const struct bundle_enc *b);

/* Frees the encoder without emitting: flush first. NULL is allowed. */
void bundle_enc_free(struct bundle_enc *b);

#endif
