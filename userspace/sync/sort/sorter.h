/* Stable sort of records (an int64 key and opaque bytes) in bounded memory:
 * records gather in one buffer of at most `limit` bytes (their bytes plus
 * a 24-byte index entry each); when it is full they are sorted and written
 * as a run to a temporary file (mkstemp in TMPDIR, unlinked at once); at
 * the end the runs are merged k ways, in several passes when there are more
 * runs than the memory allows buffers for. Equal keys keep their insertion
 * order. A single record larger than the limit is still held whole. */
#ifndef BTR_SORTER_H
#define BTR_SORTER_H

#include <stddef.h>
#include <stdint.h>

struct sorter;

struct sorter_stats {
	uint64_t records, bytes;  /* added */
	uint64_t runs;            /* runs written to disk (0: all in memory) */
	uint64_t merge_passes;    /* passes over the runs, the final one too */
	uint64_t spilled_bytes;   /* bytes written to temporary files */
};

/* Receives the records in order; a negative return stops the sort and is
 * returned by sorter_finish(). */
typedef int (*sorter_emit_fn)(void *ctx, int64_t key, const uint8_t *data,
			      size_t len);

/* limit: memory for records (at least SORTER_MIN_LIMIT is used); tmpdir:
 * where runs go (NULL: $TMPDIR, else /tmp). NULL when out of memory. */
#define SORTER_MIN_LIMIT (16u << 10)
struct sorter *sorter_new(uint64_t limit, const char *tmpdir);
void sorter_free(struct sorter *s);

/* Copies the record in. Returns 0 or a negative errno (see sorter_error). */
int sorter_add(struct sorter *s, int64_t key, const void *data, size_t len);

/* Calls emit for every record, in (key, insertion) order. Returns 0, a
 * negative errno, or emit's negative return. Call once. */
int sorter_finish(struct sorter *s, sorter_emit_fn emit, void *ctx);

const struct sorter_stats *sorter_stats(const struct sorter *s);
/* What failed, e.g. "/tmp: temporary file: No space left on device". */
const char *sorter_error(const struct sorter *s);

#endif
