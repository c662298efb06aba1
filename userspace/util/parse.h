/* Parsing of command-line values: sizes (4M, 512K, 1G), durations (10, 2.5s,
 * 500ms, 1m) and bounded integers, with errno-checked strtoull and range
 * checks. Each returns 0, or -1 for a value that is malformed or out of
 * range. */
#ifndef BTR_PARSE_H
#define BTR_PARSE_H

#include <stdint.h>

int parse_size(const char *s, uint64_t *bytes);
int parse_duration_ns(const char *s, uint64_t *ns);
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
