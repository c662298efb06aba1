/* Bracketed clock reads and the assembly of one clock snapshot. */
#include "record/clocks.h"

#include <time.h>

#include "perfetto/clock_snapshot.pb-c.h"
#include "util/clock_ns.h"

#define TRIES 5

static const struct {
	clockid_t clk;
	uint32_t id;
} user_clocks[CLOCKS_USER_N] = {
	{ CLOCK_REALTIME, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME },
	{ CLOCK_REALTIME_COARSE,
	  PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME_COARSE },
	{ CLOCK_MONOTONIC_COARSE,
	  PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_COARSE },
	{ CLOCK_MONOTONIC_RAW,
	  PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_RAW },
};

uint64_t clocks_boottime_ns(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

void clocks_read_user(struct user_clocks *u)
{
	int c, t;

	for (c = 0; c < CLOCKS_USER_N; c++) {
		uint64_t best = UINT64_MAX;

		for (t = 0; t < TRIES; t++) {
			uint64_t b1 = clock_ns(CLOCK_BOOTTIME);
			uint64_t v = clock_ns(user_clocks[c].clk);
			uint64_t b2 = clock_ns(CLOCK_BOOTTIME);

			if (b2 - b1 < best) {
				best = b2 - b1;
				u->boot[c] = b1 + (b2 - b1) / 2;
				u->value[c] = v;
			}
		}
	}
}

int clocks_combine(const struct btr_clock *k, const struct user_clocks *u,
		   struct clock_value out[CLOCKS_MAX])
{
	uint64_t t = k->h.ts; /* the instant of the snapshot, BOOTTIME */
	int n = 0, c;

	out[n++] = (struct clock_value){
		PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME, t };
	out[n++] = (struct clock_value){
		PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC, k->mono };
	for (c = 0; c < CLOCKS_USER_N; c++) {
		/* Same rate over microseconds: shift to the kernel instant. */
		out[n++] = (struct clock_value){
			user_clocks[c].id,
			u->value[c] + (t - u->boot[c]) };
	}
	if (k->tai)
		out[n++] = (struct clock_value){ BTR_CLOCK_TAI, k->tai };
	return n;
}
