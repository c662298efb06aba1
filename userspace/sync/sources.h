/* The inputs of `sync` as given on its command line, opened and sorted in
 * processing order (the order below): each argument's format comes from
 * its content (format.h); an archive gives its members (archive.h), a
 * manifest (there may be one, in an archive, as an argument, or with
 * --manifest) is parsed, not an input. Order: trace files first, then
 * archives' members (by archive, then trace members before others, by
 * member name), then perf text files; arguments of a kind in command line
 * order. The first input in that order that claims a trace clock owns
 * trace time (unless the manifest says otherwise). Inputs get file ids 1,
 * 2, ... in that order. */
#ifndef BTR_SOURCES_H
#define BTR_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "convert/manifest.h"

struct sources {
	struct input **in;     /* processing order */
	size_t n;
	struct manifest manifest;
	bool has_manifest;
	char err[1024];
};

enum {
	SOURCES_INPUT_ERROR = -1,    /* unreadable or of no known format */
	SOURCES_MANIFEST_ERROR = -2, /* the manifest is wrong or not alone */
	SOURCES_NO_MEMORY = -3,
};

/* Opens paths[0..n) ("-" is stdin, at most once) and the manifest file
 * `manifest` (NULL: none); perf text inputs take clock perf_clock; the
 * members of all archives together take at most max_extract bytes in
 * temporary files. Returns 0 or a SOURCES_ error with s->err set (what was
 * opened is closed). */
int sources_open(struct sources *s, char *const *paths, size_t n,
		 const char *manifest, uint32_t perf_clock,
		 uint64_t max_extract);
void sources_close(struct sources *s);

#endif
