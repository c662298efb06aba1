/* JSON Lines form of a `dump` line: {"ts":N|null,"cpu":N|null,"kind":...}
 * followed by the fields with their natural JSON types, built with json-c
 * (which does the string escaping). */
#include <json-c/json.h>
#include <stdio.h>

#include "dump/line.h"

static json_object *value(const struct field *f)
{
	json_object *a;
	size_t i;

	switch (f->type) {
	case F_INT:
	case F_STATE:
		return json_object_new_int64(f->i);
	case F_UINT:
	case F_HEX:
		return json_object_new_uint64(f->u);
	case F_BOOL:
		return json_object_new_boolean(f->u != 0);
	case F_STR:
		return json_object_new_string(f->s);
	case F_STRV:
		a = json_object_new_array_ext((int)f->sv.n);
		for (i = 0; i < f->sv.n; i++)
			json_object_array_add(a, json_object_new_string(
				f->sv.v[i] ? f->sv.v[i] : ""));
		return a;
	case F_UINTV:
		a = json_object_new_array_ext((int)f->uv.n);
		for (i = 0; i < f->uv.n; i++)
			json_object_array_add(a,
					      json_object_new_uint64(f->uv.v[i]));
		return a;
	case F_FLAG:
		return json_object_new_boolean(1);
	case F_UNKNOWN:
		break;
	}
	return NULL; /* null */
}

void json_print(const struct line *l)
{
	json_object *o = json_object_new_object();
	size_t i;

	json_object_object_add(o, "ts", l->has_ts ?
			       json_object_new_uint64(l->ts) : NULL);
	json_object_object_add(o, "cpu", l->has_cpu ?
			       json_object_new_uint64(l->cpu) : NULL);
	json_object_object_add(o, "kind", json_object_new_string(l->kind));
	for (i = 0; i < l->n; i++) {
		const struct field *f = &l->f[i];

		json_object_object_add(o, f->key, value(f));
		if (f->type == F_STATE) {
			char key[128];

			snprintf(key, sizeof(key), "%s_str", f->key);
			json_object_object_add(o, key,
					       json_object_new_string(f->label));
		}
	}
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}
