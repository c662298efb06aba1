/* Growing a heap array of the offline tools to hold `need` elements of
 * `size` bytes: the capacity doubles from `first`. */
#ifndef BTR_GROW_H
#define BTR_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

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

#endif
