/* The manifest's attributes as a TraceAttributes packet (attributes.h). */
#include "sync/attributes.h"

#include <string.h>

enum {
	PKT_TRACE_ATTRIBUTES = 126, /* TracePacket.trace_attributes */
	TA_ATTRIBUTE = 1,           /* TraceAttributes.attribute */
	ATTR_KEY = 1,               /* Attribute.key */
	ATTR_LONG = 2,              /* Attribute.long_value */
	ATTR_STRING = 3,            /* Attribute.string_value */
};

void attributes_build(struct wbuf *b, const struct manifest_attr *attrs,
		      size_t n)
{
	size_t pkt, a, i;

	b->len = 0;
	pkt = wbuf_begin_len(b, PKT_TRACE_ATTRIBUTES);
	for (i = 0; i < n; i++) {
		a = wbuf_begin_len(b, TA_ATTRIBUTE);
		wbuf_field_bytes(b, ATTR_KEY, attrs[i].key,
				 strlen(attrs[i].key));
		if (attrs[i].is_int)
			wbuf_field_varint(b, ATTR_LONG,
					  (uint64_t)attrs[i].ival);
		else
			wbuf_field_bytes(b, ATTR_STRING, attrs[i].value,
					 strlen(attrs[i].value));
		wbuf_end_len(b, a);
	}
	wbuf_end_len(b, pkt);
}
