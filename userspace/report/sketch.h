/* The space-saving sketch (Metwally, Agrawal, El Abbadi 2005) over a
 * fixed array of slots: the heaviest keys of a stream in bounded memory.
 * A key already in a slot adds to it; a new key takes a free slot (the
 * used slots are a prefix, count 0: free); when every slot is used, the
 * lightest slot (the first of equals) gives way, and the new key inherits
 * its count and weight, so a figure may exceed the truth by what it
 * inherited. With at most n distinct keys every figure is exact.
 *
 * A slot's weight decides which one is lightest: its count (weights NULL:
 * wakers, one per latency), or a weight summed beside it (blocked
 * functions: the off-CPU time that followed).
 *
 * The wakers' sketch, noted at every latency, has its own layout (struct
 * sketch16: keys and counts apart, 16 of each, two cache lines) so that
 * a key is found, or the lightest slot chosen, without a branch a slot:
 * with SSE2, four slots at a time. It gives what sketch_note with
 * weights NULL gives on the same stream. */
#ifndef BTR_REPORT_SKETCH_H
#define BTR_REPORT_SKETCH_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct sketch_slot {
	uint32_t key;
	uint32_t count;
};

/* Notes key, with weight w when weights is not NULL, in s[0..n). Inline:
 * the report notes a waker at every latency. */
static inline void sketch_note(struct sketch_slot *s, uint64_t *weights,
			       size_t n, uint32_t key, uint64_t w)
{
	size_t i, min = 0;

	for (i = 0; i < n && s[i].count; i++) {
		if (s[i].key == key) {
			s[i].count++;
			if (weights)
				weights[i] += w;
			return;
		}
		if (weights ? weights[i] < weights[min] :
			      s[i].count < s[min].count)
			min = i;
	}
	if (i < n) { /* a free slot */
		s[i] = (struct sketch_slot){ key, 1 };
		if (weights)
			weights[i] = w;
		return;
	}
	s[min] = (struct sketch_slot){ key, s[min].count + 1 };
	if (weights)
		weights[min] += w;
}

/* 16 slots weighed by count; count 0: free (key meaningless). */
#define SKETCH16_SLOTS 16
struct sketch16 {
	_Alignas(64) uint32_t key[SKETCH16_SLOTS];
	uint32_t count[SKETCH16_SLOTS];
};

/* The slot key goes to in s, as in sketch_note: the one holding key (a
 * used one), else the first with the least count (a free one first). */
static inline unsigned sketch16_slot_scalar(const struct sketch16 *s,
					    uint32_t key)
{
	unsigned i, min = 0;

	for (i = 0; i < SKETCH16_SLOTS; i++) {
		if (s->count[i] && s->key[i] == key)
			return i;
		if (s->count[i] < s->count[min])
			min = i;
	}
	return min;
}

#ifdef __SSE2__
/* The least of a and b, unsigned (both biased by 2^31: signed compare). */
static inline __m128i sketch16_min(__m128i a, __m128i b)
{
	__m128i gt = _mm_cmpgt_epi32(a, b);

	return _mm_or_si128(_mm_and_si128(gt, b), _mm_andnot_si128(gt, a));
}

static inline unsigned sketch16_slot(const struct sketch16 *s, uint32_t key)
{
	const __m128i bias = _mm_set1_epi32(INT32_MIN), zero = _mm_setzero_si128(),
		      k = _mm_set1_epi32((int)key);
	__m128i c[4], m;
	unsigned hit = 0, low = 0, i;

	for (i = 0; i < 4; i++) {
		__m128i kv = _mm_load_si128((const __m128i *)&s->key[4 * i]);
		__m128i cv = _mm_load_si128((const __m128i *)&s->count[4 * i]);
		__m128i eq = _mm_andnot_si128(_mm_cmpeq_epi32(cv, zero),
					      _mm_cmpeq_epi32(kv, k));

		hit |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(eq)) << (4 * i);
		c[i] = _mm_xor_si128(cv, bias);
	}
	m = sketch16_min(sketch16_min(c[0], c[1]), sketch16_min(c[2], c[3]));
	m = sketch16_min(m, _mm_shuffle_epi32(m, 0x4e));
	m = sketch16_min(m, _mm_shuffle_epi32(m, 0xb1));
	for (i = 0; i < 4; i++)
		low |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
			       _mm_cmpeq_epi32(c[i], m))) << (4 * i);
	/* a hit, else the first of the least (low is never 0) */
	return (unsigned)__builtin_ctz(hit ? hit : low);
}
#else
#define sketch16_slot sketch16_slot_scalar
#endif

/* Notes key once: the slot holding it counts one more; else the lightest
 * slot gives way, the key inheriting its count plus one. Inline and
 * without a branch on the slots: the report notes a waker at most
 * latencies. */
static inline void sketch16_note(struct sketch16 *s, uint32_t key)
{
	unsigned i = sketch16_slot(s, key);

	s->key[i] = key;
	s->count[i]++;
}

/* The slots of s as sketch_slot pairs (for the tables). */
static inline void sketch16_slots(const struct sketch16 *s,
				  struct sketch_slot *out)
{
	unsigned i;

	for (i = 0; i < SKETCH16_SLOTS; i++)
		out[i] = (struct sketch_slot){ s->key[i], s->count[i] };
}

#endif
