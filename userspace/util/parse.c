/* Sizes, durations and integers from the command line. */
#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': mult = 1ull << 10; end++; break;
	case 'M': mult = 1ull << 20; end++; break;
	case 'G': mult = 1ull << 30; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > UINT64_MAX / mult)
		return -1;
	*bytes = v * mult;
	return 0;
}

/* Decimal number with an optional fraction and unit (ns, us, ms, s, m, h;
 * seconds when none), computed in integers: no rounding through double. */
int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *u; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ull }, { "m", 60000000000ull },
		{ "h", 3600000000000ull }, { "", 1000000000ull },
	};
	uint64_t whole = 0, frac = 0, frac_div = 1;
	const char *p = s;
	size_t i;

	if (!s || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div >= 1000000000000ull)
				continue; /* beyond picosecond precision */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_div *= 10;
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].u) == 0) {
			uint64_t f = (uint64_t)((unsigned __int128)frac *
						units[i].ns / frac_div);

			if (whole > UINT64_MAX / units[i].ns ||
			    whole * units[i].ns > UINT64_MAX - f)
				return -1;
			*ns = whole * units[i].ns + f;
			return 0;
		}
	}
	return -1;
}
