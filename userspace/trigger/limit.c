/* Rate limit and disk budget of triggers (limit.h). */
#include "trigger/limit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/parse.h"

int trig_rate_parse(const char *s, uint32_t *max, uint64_t *window,
		    char *err, size_t errlen)
{
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : 0;
	char num[16];
	uint64_t n;

	if (!strcmp(s, "none")) {
		*max = 0;
		*window = 0;
		return 0;
	}
	if (!slash) {
		snprintf(err, errlen, "neither N/TIME (e.g. 10/1h) nor none");
		return -1;
	}
	if (len < sizeof(num)) {
		memcpy(num, s, len);
		num[len] = 0;
	}
	if (len >= sizeof(num) || parse_u64(num, 1, 1000000, &n)) {
		snprintf(err, errlen, "N '%.*s' is not from 1 to 1000000 "
			 "(none: no limit)", (int)len, s);
		return -1;
	}
	if (parse_duration_ns(slash + 1, window) || !*window) {
		snprintf(err, errlen, "TIME '%s' is not a time over 0 "
			 "(e.g. 1h, 10m, 30s)", slash + 1);
		return -1;
	}
	*max = (uint32_t)n;
	return 0;
}

int trig_rate_init(struct trig_rate *r, uint32_t max, uint64_t window)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
	r->window = window;
	if (!max)
		return 0;
	r->times = calloc(max, sizeof(*r->times));
	return r->times ? 0 : -ENOMEM;
}

void trig_rate_free(struct trig_rate *r)
{
	free(r->times);
	r->times = NULL;
}

uint64_t trig_rate_next(const struct trig_rate *r, uint64_t now)
{
	uint64_t free_at;

	if (!r->max || r->n < r->max)
		return now;
	/* saturated: a window of centuries does not wrap round to "now" */
	free_at = r->window > UINT64_MAX - r->times[r->next]
			  ? UINT64_MAX
			  : r->times[r->next] + r->window;
	return free_at > now ? free_at : now;
}

bool trig_rate_allow(struct trig_rate *r, uint64_t now)
{
	if (!r->max)
		return true;
	/* the oldest of the last max allowed */
	if (r->n == r->max && now - r->times[r->next] < r->window)
		return false;
	r->times[r->next] = now;
	r->next = (r->next + 1) % r->max;
	if (r->n < r->max)
		r->n++;
	return true;
}

int trig_files_add(struct trig_files *f, const char *path, uint64_t size)
{
	size_t drop = 0, k;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct trig_file *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n].path = strdup(path);
	if (!f->v[f->n].path)
		return -ENOMEM;
	f->v[f->n++].size = size;
	f->total += size;
	while (f->budget && f->total > f->budget && f->n - drop > 1) {
		struct trig_file *o = &f->v[drop++];

		/* one that cannot be removed leaves the account (and is not
		 * counted as removed): the others are not removed for it */
		if (unlink(o->path) && errno != ENOENT) {
			log_warn("cannot remove snapshot %s for --trigger-disk: "
				 "%s; it is left, out of the budget's account",
				 o->path, strerror(errno));
		} else {
			log_info("removed snapshot %s (--trigger-disk)", o->path);
			f->removed++;
		}
		f->total -= o->size;
		free(o->path);
	}
	for (k = 0; k + drop < f->n; k++)
		f->v[k] = f->v[k + drop];
	f->n -= drop;
	return 0;
}

void trig_files_free(struct trig_files *f)
{
	size_t k;

	for (k = 0; k < f->n; k++)
		free(f->v[k].path);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
