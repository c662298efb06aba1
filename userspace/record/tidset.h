/* A set of positive 32-bit ids (tids, pids): open addressing with linear
 * probing and tombstones; cheap enough to consult on every record. */
#ifndef BTR_TIDSET_H
#define BTR_TIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tidset {
	int32_t *slots; /* 0 empty, -1 deleted, else the id */
	size_t cap, used, live;
};

bool tidset_has(const struct tidset *s, int32_t id);
/* 1 if added, 0 if present, -1 out of memory. */
int tidset_add(struct tidset *s, int32_t id);
void tidset_del(struct tidset *s, int32_t id);
void tidset_free(struct tidset *s);

#endif
