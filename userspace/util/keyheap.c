/* A binary min-heap of (key, index) pairs (keyheap.h). */
#include "util/keyheap.h"

static int before(const struct keyheap_ent *a, const struct keyheap_ent *b)
{
	return a->key != b->key ? a->key < b->key : a->idx < b->idx;
}

void keyheap_sift(struct keyheap_ent *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct keyheap_ent t;

		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

void keyheap_make(struct keyheap_ent *h, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		keyheap_sift(h, n, i);
}
