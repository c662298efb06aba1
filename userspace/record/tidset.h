/* A set of positive 32-bit ids (tids, pids) over util/hashmap: cheap
 * enough to consult on every record. Zeroed is empty. */
#ifndef BTR_TIDSET_H
#define BTR_TIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

struct tidset {
	struct hmap map; /* of int32_t ids, no values */
};

bool tidset_has(const struct tidset *s, int32_t id);
/* 1 if added, 0 if present (or not positive), -1 out of memory. */
int tidset_add(struct tidset *s, int32_t id);
void tidset_del(struct tidset *s, int32_t id);
void tidset_free(struct tidset *s);

#endif
