/* Interning of task names (names.h). */
#include "report/names.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

int names_init(struct names *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->ids, NAME_MAX_LEN + 1, sizeof(uint32_t),
		  hmap_random_seed());
	return names_id(t, "", 0) == 0 ? 0 : -1;
}

void names_free(struct names *t)
{
	hmap_free(&t->ids);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

uint32_t names_id(struct names *t, const void *s, size_t len)
{
	char key[NAME_MAX_LEN + 1] = { 0 };
	uint32_t *id;
	bool added;

	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	memcpy(key, s, len);
	/* a NUL inside ends the name, as the kernel's comm */
	len = strnlen(key, len);
	memset(key + len, 0, sizeof(key) - len);
	id = hmap_insert(&t->ids, key, &added);
	if (!id)
		return UINT32_MAX;
	if (added) {
		if (grow_array((void **)&t->str, &t->cap, t->n + 1,
			       sizeof(*t->str), 256)) {
			hmap_remove(&t->ids, key);
			return UINT32_MAX;
		}
		memcpy(t->str[t->n], key, sizeof(key));
		*id = (uint32_t)t->n++;
	}
	return *id;
}

const char *names_str(const struct names *t, uint32_t id)
{
	return id < t->n ? t->str[id] : "";
}
