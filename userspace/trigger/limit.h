/* What keeps an unattended flight recorder within bounds: a rate limit on
 * the triggers that act (at most N in any window of TIME, --trigger-max;
 * none turns it off)
 * and a disk budget for the snapshot files they write (the oldest removed
 * first, --trigger-disk). */
#ifndef BTR_TRIGGER_LIMIT_H
#define BTR_TRIGGER_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trig_rate {
	uint32_t max;    /* 0: no limit */
	uint64_t window; /* ns */
	uint64_t *times; /* the last `max` times allowed, a ring */
	uint32_t next, n;
};

/* "N/TIME" (e.g. 10/1h, N from 1 to 1000000, TIME not 0) into max and
 * window, or "none" (no limit: max and window 0). 0, or -1 with the reason
 * in err. */
int trig_rate_parse(const char *s, uint32_t *max, uint64_t *window,
		    char *err, size_t errlen);
int trig_rate_init(struct trig_rate *r, uint32_t max, uint64_t window);
void trig_rate_free(struct trig_rate *r);
/* When the next trigger may act, from `now`: now when one may. */
uint64_t trig_rate_next(const struct trig_rate *r, uint64_t now);
/* Whether a trigger at `now` may act; if so it counts. */
bool trig_rate_allow(struct trig_rate *r, uint64_t now);

struct trig_files {
	uint64_t budget; /* bytes; 0: no limit */
	struct trig_file {
		char *path;
		uint64_t size;
	} *v;
	size_t n, cap;
	uint64_t total;
	uint64_t removed; /* files removed for the budget */
};

/* A snapshot file was written: removes the oldest ones (never the one
 * just written) until the files fit the budget. Returns 0 or -ENOMEM. */
int trig_files_add(struct trig_files *f, const char *path, uint64_t size);
void trig_files_free(struct trig_files *f);

#endif
