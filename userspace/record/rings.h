/* The reader's side of the per-CPU BPF rings: creates one BPF ring buffer
 * per CPU id (each of its own size) into an array of maps, maps each one,
 * and drains them. A drain pass reads each ring's producer and consumer
 * positions from its mapped header pages first and goes further only into
 * rings that hold data, so an idle pass costs two loads per ring and no
 * call into libbpf. Records of one ring come out in the order they were
 * written, each once. Wakeups (forced by the BPF side past half a ring)
 * arrive through one epoll set over all rings, or through sets over a
 * subset each (several reader threads, record/readers.h). Disjoint rings
 * may be drained by different threads at once: a ring's consumer position
 * is written only by whoever drains it. */
#ifndef BTR_RINGS_H
#define BTR_RINGS_H

#include <stddef.h>
#include <stdint.h>

/* Called for each record, in ring order per ring. A non-zero return is
 * kept (the first one) and returned by the pass; the record is consumed
 * and the pass goes on. */
typedef int (*rings_record_fn)(void *ctx, uint32_t ring, const void *rec,
			       size_t len);

struct rings;

/* n rings of sizes[i] bytes (powers of two, at least a page), put at index
 * i of the array of maps outer_fd. NULL on failure, with a reason in err. */
struct rings *rings_new(int outer_fd, uint32_t n, const uint64_t *sizes,
			rings_record_fn fn, void *ctx, char *err,
			size_t errlen);
/* Waits up to timeout_ms for a wakeup, then drains every ring. Returns the
 * records read, or a negative errno (the callback's first error). */
int rings_poll(struct rings *r, int timeout_ms);
/* Drains every ring now. */
int rings_drain(struct rings *r);
/* Drains rings [first, first + n). */
int rings_drain_range(struct rings *r, uint32_t first, uint32_t n);
/* Drains the n rings listed in idx, each record to fn(ctx, ring, ...)
 * instead of the callback given at creation. Returns as rings_poll. */
int rings_drain_list(struct rings *r, const uint32_t *idx, uint32_t n,
		     rings_record_fn fn, void *ctx);
/* As rings_drain_list, but the records of the n rings come out in the
 * order of their times (the u64 each record starts with) across them;
 * heap: room for n entries, the caller's. Each ring is taken to be in
 * time order. A record committed while the call runs joins it if its
 * ring still has records to give, else the next call: only those can
 * come out of order. */
struct keyheap_ent;
int rings_drain_merged(struct rings *r, const uint32_t *idx, uint32_t n,
		       struct keyheap_ent *heap, rings_record_fn fn, void *ctx);
/* A new epoll set (its fd, or a negative errno) over the n rings listed
 * and extra_fd when not negative (reported with data.u32 UINT32_MAX). */
int rings_epoll_new(struct rings *r, const uint32_t *idx, uint32_t n,
		    int extra_fd);
/* Asks that ring i grow to size bytes (a power of two, bigger than it is:
 * its CPU came online after the start, with a one-page ring): whoever
 * drains it next puts a new ring in its place. From any thread; the
 * caller keeps track of the sizes it asked for. */
void rings_request_grow(struct rings *r, uint32_t i, uint64_t size);
/* Rings grown so far, and (in *failed) grows that kept the old ring. */
uint64_t rings_grown(const struct rings *r, uint64_t *failed);
uint32_t rings_count(const struct rings *r);
/* The data bytes of ring i. */
uint64_t rings_size(const struct rings *r, uint32_t i);
int rings_fd(const struct rings *r, uint32_t i);
void rings_free(struct rings *r);

#endif
