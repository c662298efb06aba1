/* In-memory packet list, replayable into any sink. */
#include "output/mem_sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int mem_write(struct packet_sink *s, uint32_t seq, const uint8_t *pkt,
		     size_t len)
{
	struct mem_sink *m = s->ctx;
	uint32_t l = (uint32_t)len;

	if (len > UINT32_MAX)
		return -EFBIG;
	if (m->len + 8 + len > m->cap) {
		size_t cap = (m->len + 8 + len) * 2;
		uint8_t *b = realloc(m->buf, cap);

		if (!b)
			return -ENOMEM;
		m->buf = b;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, &seq, 4);
	memcpy(m->buf + m->len + 4, &l, 4);
	memcpy(m->buf + m->len + 8, pkt, len);
	m->len += 8 + len;
	return 0;
}

void mem_sink_init(struct mem_sink *m)
{
	memset(m, 0, sizeof(*m));
	m->sink.write = mem_write;
	m->sink.ctx = m;
}

int mem_sink_replay(const struct mem_sink *m, struct packet_sink *out)
{
	size_t off = 0;
	int e = 0;

	while (!e && off < m->len) {
		uint32_t seq, len;

		memcpy(&seq, m->buf + off, 4);
		memcpy(&len, m->buf + off + 4, 4);
		e = sink_write(out, seq, m->buf + off + 8, len);
		off += 8 + len;
	}
	return e;
}

void mem_sink_free(struct mem_sink *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}
