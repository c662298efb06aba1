/* Log-linear histogram (hist.h). Worked example: 1000 ns is 0b1111101000,
 * its top bit 9; the three bits after it, 111, pick sub-bucket 7 of the
 * power-of-two range [512, 1024): bucket 16 + (9 - 4) * 8 + 7 = 63, which
 * holds [960, 1024) and reports its middle, 992. */
#include "report/hist.h"

#include <math.h>
#include <stdlib.h>

/* [lo, hi] of bucket i. */
static void bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (i < 16) {
		*lo = *hi = i;
		return;
	}
	e = (i - 16u) / 8u + 4u;
	sub = (i - 16u) % 8u;
	*lo = (uint64_t)(8u + sub) << (e - 3u);
	*hi = *lo + ((uint64_t)1 << (e - 3u)) - 1u;
}

int hist_grow(struct hist *h)
{
	unsigned i;

	h->b = calloc(HIST_BUCKETS, sizeof(*h->b));
	if (!h->b)
		return -1;
	for (i = 0; i < HIST_SMALL; i++)
		h->b[i] = h->s[i];
	return 0;
}

static uint32_t count(const struct hist *h, unsigned i)
{
	if (h->b)
		return h->b[i];
	return i < HIST_SMALL ? h->s[i] : 0;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned i;

	if (!src->n)
		return 0;
	if (!dst->b && hist_grow(dst))
		return -1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		uint64_t s = (uint64_t)dst->b[i] + count(src, i);

		dst->b[i] = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
	}
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	return 0;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi, mid;
	unsigned i;

	if (!h->n)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += count(h, i);
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return h->max;
	bounds(i, &lo, &hi);
	mid = lo + (hi - lo) / 2;
	if (mid < h->min)
		mid = h->min;
	if (mid > h->max)
		mid = h->max;
	return mid;
}

void hist_release(struct hist *h)
{
	free(h->b);
	h->b = NULL;
}
