/* A manifest's `attributes` in the merged trace: `sync` consumes the
 * manifest, so the key/value pairs that annotated the archive go into one
 * TraceAttributes packet (TracePacket field 126) of the output, where
 * trace_processor shows each as a metadata row `trace_attribute.KEY` and
 * `dump` prints them. Integers stay integers (long_value), the rest are
 * strings (string_value). */
#ifndef BTR_ATTRIBUTES_H
#define BTR_ATTRIBUTES_H

#include <stddef.h>

#include "convert/manifest.h"
#include "util/wire.h"

/* The TracePacket holding attrs[0..n) into b (b->len reset first). */
void attributes_build(struct wbuf *b, const struct manifest_attr *attrs,
		      size_t n);

#endif
