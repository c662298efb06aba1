/* The user half of --callstacks in the recorder: the process mappings
 * (maps.h) and the symbols (symbolize.h) that turn the user pcs of stack
 * records into Perfetto frames (callstack_user_fn), kept up to date by
 * the exec and exit records the reader sees, and the ModuleSymbols
 * packets written at the end. Shared by the reader threads: one lock
 * guards it (see ustacks_lock). */
#ifndef BTR_RECORD_USTACKS_H
#define BTR_RECORD_USTACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "encode/callstacks.h"
#include "encode/perf_samples.h"
#include "output/sink.h"
#include "record.h"

struct ustacks;

/* NULL when out of memory. */
struct ustacks *ustacks_new(void);

/* The recording drains its rings with n readers, each ending its passes
 * with ustacks_end_pass: a process that exited is kept until each has
 * ended a pass begun after its exit was read. */
void ustacks_set_readers(struct ustacks *u, uint32_t n);
void ustacks_free(struct ustacks *u);

/* Held around the encoding of a whole stack record (its resolves and the
 * interning of what they return, which points into the maps cache and
 * the symbolizer). The calls below take it themselves. */
void ustacks_lock(struct ustacks *u);
void ustacks_unlock(struct ustacks *u);

/* callstack_user_fn, under ustacks_lock: the mapping, rel_pc and name of
 * a user pc, valid until the lock is released. */
/* callstack_unwind_fn, under ustacks_lock: the user stack of a sleep from
 * its slice, through the CFI of the process's binaries (unwind.h). */
uint32_t ustacks_unwind(void *ctx, int32_t tgid, const struct btr_ustack *u,
			const __u64 *fp, uint32_t nfp, __u64 *out,
			uint32_t max, enum callstack_unwound *how);

bool ustacks_resolve(void *ctx, int32_t tgid, uint64_t pc, bool leaf,
		     struct perf_frame *f);

/* An exec or exit record: the maps of its process are read again at its
 * next stack, or forgotten at the end of the drain pass. */
void ustacks_note_record(struct ustacks *u, const struct btr_hdr *h,
			 size_t len);

/* The end of any reader's drain pass. */
/* A BTR_REC_VMAS record of len bytes: where the process's frames are
 * mapped, taken while it lived (proc_maps_note_vmas). Takes the lock.
 * Returns 0 or -EINVAL for a record that is not a whole one. */
int ustacks_note_vmas(struct ustacks *u, const struct btr_hdr *h, size_t len);

/* fn is called (under the lock) as proc_maps_set_on_read() says. */
void ustacks_on_maps_read(struct ustacks *u,
			  void (*fn)(void *ctx, int32_t tgid, uint64_t ts),
			  void *ctx);

void ustacks_end_pass(struct ustacks *u);

/* The ModuleSymbols packets, at timestamp ts after every sample; with
 * source lines for the final ones (symbolizer_emit). */
int ustacks_emit_symbols(struct ustacks *u, struct packet_sink *sink,
			 uint32_t seq, uint64_t ts, bool lines);

/* The counts for the closing summary, logged at debug level. */
void ustacks_log(const struct ustacks *u);

#endif
