/* The report's table of task names: each distinct comm (up to 15 bytes,
 * as the kernel's TASK_COMM_LEN keeps them; longer names are cut) gets a
 * small id once, so events and threads carry a 32-bit id instead of a
 * string. Id 0 is the empty name. Kernel function names (blocked
 * reasons) are longer: they have a second table, whose ids have
 * NAMES_LONG set. */
#ifndef BTR_REPORT_NAMES_H
#define BTR_REPORT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

#define NAME_MAX_LEN 15
#define NAMES_LONG 0x80000000u
#define NAMES_LONG_MAX_LEN 255
#define NAMES_CACHE 256

/* A name (zero-padded to 16 bytes) and its id, in the cache. */
struct name_cached {
	uint64_t k[2];
	uint32_t id;
};

struct names {
	/* recent names by a cheap hash, before the table (every bundle
	 * interns its comms again); zeroed, each slot says "" is 0 */
	struct name_cached cache[NAMES_CACHE];
	struct hmap ids;         /* 16-byte zero-padded name -> id */
	char (*str)[NAME_MAX_LEN + 1];
	size_t n, cap;
	struct hmap long_ids;    /* hash of a long name -> index */
	char **lstr;
	size_t nlong, caplong;
};

int names_init(struct names *t);  /* 0 or -1 (out of memory) */
void names_free(struct names *t);
/* The id of s[0..len) (cut to NAME_MAX_LEN); UINT32_MAX when out of
 * memory. */
uint32_t names_id(struct names *t, const void *s, size_t len);
/* The id of a name of up to NAMES_LONG_MAX_LEN bytes (cut there), in
 * the long names' table; UINT32_MAX when out of memory. */
uint32_t names_long_id(struct names *t, const void *s, size_t len);
const char *names_str(const struct names *t, uint32_t id);

#endif
