/* What an input of `sync` is, told by its content (never its name):
 * a perfetto_manifest (JSON starting with {"perfetto_manifest"), a zip
 * archive (PK signature), a tar archive (ustar magic; gzip-compressed
 * too), perf script text (its first line parses as a sample header:
 * perf_text.h), else a Perfetto trace (plain or gzip). Text that is none
 * of these is reported as unknown rather than read as a corrupt trace. */
#ifndef BTR_FORMAT_H
#define BTR_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How much of the start of an input detection reads. */
#define FORMAT_HEAD_BYTES (64u << 10)

enum input_format {
	FORMAT_TRACE,
	FORMAT_ARCHIVE,
	FORMAT_MANIFEST,
	FORMAT_PERF_TEXT,
	FORMAT_UNKNOWN,
};

/* The format of an input whose first bytes are head[0..n) (n is less than
 * FORMAT_HEAD_BYTES only for a shorter input); *gzip when they are
 * gzip-compressed (detection then looks at what they inflate to). */
enum input_format format_detect(const uint8_t *head, size_t n, bool *gzip);

const char *format_name(enum input_format f);

#endif
