/* Growing heap arrays: to hold `need` elements of `size` bytes with the
 * capacity doubling from `first` (grow_array), or to exactly `need`
 * zeroed elements for arrays indexed by an id (grow_zeroed). */
#ifndef BTR_GROW_H
#define BTR_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Returns 0 (*p and *cap updated when it grew) or -ENOMEM (unchanged). */
static inline int grow_array(void **p, size_t *cap, size_t need, size_t size,
			     size_t first)
{
	size_t c = *cap ? *cap : first;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need && c <= SIZE_MAX / 2)
		c *= 2;
	if (c < need || c > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Makes *p hold at least `need` elements, *n of them so far, the new ones
 * zeroed. Returns 0 or -ENOMEM (unchanged). */
static inline int grow_zeroed(void **p, size_t *n, size_t need, size_t size)
{
	void *q;

	if (need <= *n)
		return 0;
	if (need > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, need * size);
	if (!q)
		return -ENOMEM;
	memset((char *)q + *n * size, 0, (need - *n) * size);
	*p = q;
	*n = need;
	return 0;
}

#endif
