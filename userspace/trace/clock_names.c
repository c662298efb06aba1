/* Builtin clock names (see clock_names.h). */
#include "trace/clock_names.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "util/parse.h"

static const char *const names[] = {
	[1] = "REALTIME",
	[2] = "REALTIME_COARSE",
	[3] = "MONOTONIC",
	[4] = "MONOTONIC_COARSE",
	[5] = "MONOTONIC_RAW",
	[6] = "BOOTTIME",
	[9] = "TSC",
	[10] = "PERF",
	[11] = "TRACE_FILE",
};

const char *clock_name(uint32_t id)
{
	return id < sizeof(names) / sizeof(names[0]) ? names[id] : NULL;
}

int clock_by_name(const char *s, uint32_t *id)
{
	size_t i;

	for (i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i] && strcmp(s, names[i]) == 0) {
			*id = (uint32_t)i;
			return 0;
		}
	}
	return -1;
}

int clock_parse(const char *s, uint32_t *id)
{
	uint64_t v;
	size_t i;

	if (!s)
		return -1;
	if (strncasecmp(s, "BUILTIN_CLOCK_", 14) == 0)
		s += 14;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i] && strcasecmp(s, names[i]) == 0) {
			*id = (uint32_t)i;
			return 0;
		}
	}
	if (parse_u64(s, 1, UINT32_MAX, &v))
		return -1;
	*id = (uint32_t)v;
	return 0;
}
