/* A binary min-heap of (key, index) pairs, in an array the caller owns:
 * the least key on top, equal keys by index (a stable k-way merge). The
 * merges of sorted runs use it: the sync sorter's run files and the
 * recorder's rings read in time order. */
#ifndef BTR_UTIL_KEYHEAP_H
#define BTR_UTIL_KEYHEAP_H

#include <stddef.h>
#include <stdint.h>

struct keyheap_ent {
	uint64_t key;
	uint32_t idx;
};

/* Restores the heap's order below slot i of h[0..n), h[i] changed. */
void keyheap_sift(struct keyheap_ent *h, size_t n, size_t i);
/* Makes h[0..n) a heap. */
void keyheap_make(struct keyheap_ent *h, size_t n);

#endif
