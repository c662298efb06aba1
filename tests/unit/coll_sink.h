/* A packet sink for unit tests that keeps a copy of every packet written to
 * it (with its sequence id), and can be told to fail: always with `fail`,
 * or only on call number `fail_at` (1-based) with `err`. */
#ifndef BTR_COLL_SINK_H
#define BTR_COLL_SINK_H

#include <stdlib.h>
#include <string.h>

#include "output/sink.h"
#include "perfetto/trace.pb-c.h"

struct pkt {
	uint32_t seq;
	uint8_t *buf;
	size_t len;
};

struct coll {
	struct packet_sink sink;
	struct pkt *p;
	size_t n, cap;
	int fail;       /* when non-zero, every write returns it */
	size_t calls;   /* writes so far */
	size_t fail_at; /* fail only this call (1-based) with err; 0: never */
	int err;
};

static int coll_write(struct packet_sink *s, uint32_t seq, const uint8_t *buf,
		      size_t len)
{
	struct coll *c = s->ctx;

	if (c->fail)
		return c->fail;
	if (++c->calls == c->fail_at)
		return c->err;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->p = realloc(c->p, c->cap * sizeof(*c->p));
		if (!c->p)
			abort();
	}
	c->p[c->n].seq = seq;
	c->p[c->n].buf = malloc(len ? len : 1);
	if (!c->p[c->n].buf)
		abort();
	if (len)
		memcpy(c->p[c->n].buf, buf, len);
	c->p[c->n++].len = len;
	return 0;
}

static inline void coll_init(struct coll *c)
{
	memset(c, 0, sizeof(*c));
	c->sink.write = coll_write;
	c->sink.ctx = c;
}

/* Forgets the packets kept so far. */
static inline void coll_reset(struct coll *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->p[i].buf);
	c->n = 0;
}

static inline void coll_free(struct coll *c)
{
	coll_reset(c);
	free(c->p);
	memset(c, 0, sizeof(*c));
}

/* Packet i decoded (free with perfetto__protos__trace_packet__free_unpacked). */
static inline Perfetto__Protos__TracePacket *coll_unpack(const struct coll *c,
							 size_t i)
{
	return perfetto__protos__trace_packet__unpack(NULL, c->p[i].len,
						      c->p[i].buf);
}

#endif
