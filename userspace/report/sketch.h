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
 * functions: the off-CPU time that followed). */
#ifndef BTR_REPORT_SKETCH_H
#define BTR_REPORT_SKETCH_H

#include <stddef.h>
#include <stdint.h>

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

#endif
