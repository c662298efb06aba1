/* A clock's reading in nanoseconds: the one conversion from struct
 * timespec that the recorder's modules share. */
#ifndef BTR_UTIL_CLOCK_NS_H
#define BTR_UTIL_CLOCK_NS_H

#include <stdint.h>
#include <time.h>

/* clock id's time in ns; 0 when it cannot be read. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
