/* Reader threads: the rings (record/rings.h) sharded across N readers in
 * contiguous ranges of CPU ids with about the same number of online CPUs
 * each (by ring bytes: an offline CPU's ring is one page), so each ring
 * has exactly one reader and its records keep their order, and per-CPU
 * neighbours mostly share a reader (no cache line bounces between them). With N = 1 there is no thread: the caller
 * is the reader (readers_poll). With N > 1 each reader thread waits on an
 * epoll set of its own rings, drains them into its own context (its CPUs'
 * encoders write their own packet sequences), then calls pass_done; the
 * main thread keeps the file, the process tree and the clock snapshots,
 * and is woken by readers_notify_main. */
#ifndef BTR_READERS_H
#define BTR_READERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/rings.h"

/* The default reader count for `online` CPUs (one per READERS_PER_CPUS,
 * rounded up), at most `rings`. */
#define READERS_PER_CPUS 64
uint32_t readers_default(uint32_t online, uint32_t rings);

struct readers_ops {
	/* true: the records of a reader's rings come in time order across
	 * them (rings_drain_merged); false: each ring read in turn. */
	bool time_order;
	/* Each record, on the thread of its ring's reader, with that
	 * reader's context. Non-zero: the first error is kept. */
	rings_record_fn on_record;
	/* After each drain pass (records: how many it read): flush the
	 * encoders of the reader's CPUs, hand over what it collected. */
	int (*pass_done)(void *ctx, int records);
	/* Commit the reader's partly filled chunks (a sync, or its end). */
	void (*commit)(void *ctx);
	/* Optional: before each drain pass, on the reader's thread. */
	void (*pass_begin)(void *ctx);
};

struct readers;

/* n readers over every ring of rs; ctx[k] is reader k's context. NULL on
 * failure, with a reason in err. */
struct readers *readers_new(struct rings *rs, uint32_t n,
			    const struct readers_ops *ops, void *const *ctx,
			    char *err, size_t errlen);
uint32_t readers_count(const struct readers *rd);
/* The rings reader k drains, and how many. */
const uint32_t *readers_rings(const struct readers *rd, uint32_t k,
			      uint32_t *n);
/* N > 1: starts the threads, each waking at least every drain_ms. With
 * signals blocked in them, so the main thread takes every signal. */
int readers_start(struct readers *rd, int drain_ms);
/* N = 1 (or after readers_stop): one pass on the calling thread: waits up
 * to timeout_ms for a ring's wakeup, drains every ring, pass_done. Returns
 * the records read or a negative errno. */
int readers_poll(struct readers *rd, int timeout_ms);
/* The main thread, while threads run: waits up to timeout_ms for a
 * reader's notification (or a signal). */
void readers_wait_main(struct readers *rd, int timeout_ms);
/* From a reader: wake the main thread. */
void readers_notify_main(struct readers *rd);
/* Asks every reader thread to finish a pass and commit its chunks, and
 * waits until each did (or ended): what was in the rings at the call is
 * in the buffer after it. No-op without threads. Returns the first reader
 * error. */
int readers_sync(struct readers *rd);
/* The first error a reader thread met (it stops then), or 0. */
int readers_error(struct readers *rd);
/* Stops and joins the threads (each ends after the pass it is in). Returns
 * the first reader error. The caller is the only reader after: it drains
 * what is left and commits the readers' chunks (their encoders and
 * contexts are its own again). */
int readers_stop(struct readers *rd);
bool readers_threaded(const struct readers *rd);
/* CPU time the reader threads used so far (without threads: the calling
 * thread's), in ns. */
uint64_t readers_cpu_ns(const struct readers *rd);
void readers_free(struct readers *rd);

#endif
