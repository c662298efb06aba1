/* Test helper: prints CLOCK_BOOTTIME and CLOCK_REALTIME in ns, read back to
 * back (the tightest of 10 bracketed tries), as "BOOTTIME REALTIME". The
 * tests compare the offset between them with the trace's clock snapshots. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	uint64_t best = UINT64_MAX, boot = 0, real = 0;
	int i;

	for (i = 0; i < 10; i++) {
		uint64_t b1 = ns(CLOCK_BOOTTIME), r = ns(CLOCK_REALTIME);
		uint64_t b2 = ns(CLOCK_BOOTTIME);

		if (b2 - b1 < best) {
			best = b2 - b1;
			boot = b1 + (b2 - b1) / 2;
			real = r;
		}
	}
	printf("%llu %llu\n", (unsigned long long)boot, (unsigned long long)real);
	return 0;
}
