/* Splitting the memory budget between the central buffer and the rings
 * (budget.h has the rules and a worked example). */
#include "record/budget.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

static uint64_t pow2_floor(uint64_t v)
{
	uint64_t p = 1;

	if (!v)
		return 0;
	while (p <= v / 2)
		p <<= 1;
	return p;
}

const char *budget_fmt(uint64_t bytes, char *buf, size_t len)
{
	if (bytes && !(bytes & ((1ull << 30) - 1)))
		snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
	else if (bytes && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else if (bytes && !(bytes & 1023))
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	return buf;
}

/* What a split has to work with, apart from buffer and online rings. */
struct frame {
	uint64_t fixed, offline_rings;
	uint32_t nonline;
};

/* Splits m: buffer (fixed when *buffer is set on entry) and online ring
 * (fixed when *ring is). Returns 0, or -1 when m cannot hold them. */
static int split(uint64_t m, const struct frame *f, uint64_t *buffer,
		 uint64_t *ring)
{
	uint64_t ring_min = *ring ? *ring : BUDGET_RING_FLOOR;
	uint64_t need = f->fixed + f->offline_rings + f->nonline * ring_min;
	uint64_t left;

	if (!*buffer) {
		uint64_t b = m > need ? m - need : 0;

		if (b > m / 2)
			b = m / 2;
		b -= b % BUDGET_CHUNK;
		if (b < BUDGET_BUFFER_MIN)
			return -1;
		*buffer = b;
	}
	if (!*ring) {
		if (m < f->fixed + f->offline_rings + *buffer)
			return -1;
		left = (m - f->fixed - f->offline_rings - *buffer) / f->nonline;
		*ring = pow2_floor(left);
		if (*ring > BUDGET_RING_CAP)
			*ring = BUDGET_RING_CAP;
		if (*ring < BUDGET_RING_FLOOR)
			return -1;
	}
	return 0;
}

static void fill(struct budget *out, uint64_t m, const struct frame *f,
		 uint64_t buffer, uint64_t ring)
{
	out->memory = m;
	out->buffer = buffer;
	out->ring_online = ring;
	out->rings = f->nonline * ring + f->offline_rings;
	out->fixed = f->fixed;
	out->total = f->fixed + out->rings + buffer;
}

static void too_small(const struct budget_in *in, const struct frame *f,
		      uint64_t buffer, uint64_t ring, char *err, size_t errlen)
{
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t r = ring ? ring : BUDGET_RING_FLOOR;
	uint64_t bmin = buffer ? buffer : BUDGET_BUFFER_MIN;
	uint64_t need = f->fixed + f->offline_rings + f->nonline * r + bmin;

	/* The smallest budget that works, rounded up to a MiB. */
	need = (need + (1ull << 20) - 1) & ~((1ull << 20) - 1);
	if (!buffer)
		need = need > 2 * BUDGET_BUFFER_MIN ? need : 2 * BUDGET_BUFFER_MIN;
	snprintf(err, errlen,
		 "--memory %s is too small for %u online CPUs: it needs at "
		 "least %s (a ring of %s per online CPU, a buffer of %s, %s "
		 "for the readers and the rest)",
		 budget_fmt(in->memory, a, sizeof(a)), f->nonline,
		 budget_fmt(need, b, sizeof(b)), budget_fmt(r, c, sizeof(c)),
		 budget_fmt(bmin, d, sizeof(d)),
		 budget_fmt(f->fixed + f->offline_rings, e, sizeof(e)));
}

int budget_compute(const struct budget_in *in, struct budget *out,
		   char *err, size_t errlen)
{
	struct frame f;
	uint64_t page = in->page ? in->page : 4096;
	uint64_t buffer = in->buffer, ring = 0, m;
	uint32_t noffline;

	memset(out, 0, sizeof(*out));
	if (!in->nonline || in->nonline > in->nslots) {
		snprintf(err, errlen, "no online CPU among %u", in->nslots);
		return -1;
	}
	if (in->ring)
		ring = pow2_ceil(in->ring < page ? page : in->ring);
	noffline = in->nslots - in->nonline;
	f.nonline = in->nonline;
	f.offline_rings = (uint64_t)noffline * page;
	f.fixed = BUDGET_BASE + in->extra +
		  (uint64_t)in->nonline * BUDGET_READER_PER_CPU +
		  (uint64_t)noffline * BUDGET_READER_OFFLINE +
		  (uint64_t)in->nslots * 2 * page;
	out->nonline = in->nonline;
	out->noffline = noffline;
	out->ring_offline = page;
	if (in->memory) {
		uint64_t b = buffer, r = ring;

		if (split(in->memory, &f, &b, &r)) {
			too_small(in, &f, buffer, ring, err, errlen);
			return -1;
		}
		fill(out, in->memory, &f, b, r);
		if (out->total > in->memory) {
			char x[32], y[32];

			snprintf(err, errlen,
				 "-b and --ringbuf-size need %s for %u online "
				 "CPUs, more than --memory %s",
				 budget_fmt(out->total, x, sizeof(x)),
				 f.nonline, budget_fmt(in->memory, y, sizeof(y)));
			return -1;
		}
		out->ring_offline = page;
		return 0;
	}
	/* The default budget, grown for a host it cannot hold; then the
	 * overrides replace their part of its split. */
	m = BUDGET_DEFAULT;
	{
		uint64_t b = 0, r = 0;

		if (split(m, &f, &b, &r) || b < BUDGET_BUFFER_FLOOR) {
			m = f.fixed + f.offline_rings +
			    f.nonline * BUDGET_RING_FLOOR + BUDGET_BUFFER_FLOOR;
			m = (m + (1ull << 20) - 1) & ~((1ull << 20) - 1);
			b = r = 0;
			if (split(m, &f, &b, &r)) {
				snprintf(err, errlen, "cannot size the rings of "
					 "%u online CPUs", f.nonline);
				return -1;
			}
			out->default_grown = true;
		}
		fill(out, m, &f, buffer ? buffer : b, ring ? ring : r);
	}
	out->ring_offline = page;
	return 0;
}
