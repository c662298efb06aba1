/* Clock snapshots: relates BOOTTIME (the trace clock) to the other clocks.
 * The kernel stamps BOOTTIME, MONOTONIC and TAI back to back (a
 * btr_clock record); userspace adds REALTIME, REALTIME_COARSE,
 * MONOTONIC_COARSE and MONOTONIC_RAW, each read between two BOOTTIME reads,
 * keeping the tightest of several tries, and moves every reading to the
 * kernel's BOOTTIME instant. */
#ifndef BTR_CLOCKS_H
#define BTR_CLOCKS_H

#include <stdint.h>

#include "record.h"

/* TAI has no Perfetto builtin id: a global clock id (>= 128), derived as
 * Perfetto recommends for custom global clocks from a hash of a fully
 * qualified name, meeting both forms of that advice (the docs' "| 0x80000000"
 * and clock_snapshot.proto's "& ~127"):
 * (FNV-1a("bpftrace_rec.CLOCK_TAI") | 0x80000000) & ~127 = 2690924160. */
#define BTR_CLOCK_TAI 0xa0643e80u

enum { CLOCKS_USER_N = 4 };

struct user_clocks {
	uint64_t boot[CLOCKS_USER_N];  /* BOOTTIME at the middle of each read */
	uint64_t value[CLOCKS_USER_N]; /* the clock's reading */
};

struct clock_value {
	uint32_t id; /* Perfetto clock id */
	uint64_t ns;
};

enum { CLOCKS_MAX = 8 };

/* Reads the userspace clocks, bracketed. */
void clocks_read_user(struct user_clocks *u);
/* Combines a kernel clock record with userspace readings into one instant;
 * BOOTTIME first. Returns the number of clocks written to out. */
int clocks_combine(const struct btr_clock *k, const struct user_clocks *u,
		   struct clock_value out[CLOCKS_MAX]);
/* Current CLOCK_BOOTTIME in ns. */
uint64_t clocks_boottime_ns(void);

#endif
