/* Whole-buffer writes (see fd_io.h). */
#include "util/fd_io.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

int fd_write_all(int fd, const void *p, size_t n, int64_t off, size_t *done)
{
	const uint8_t *b = p;
	size_t got = 0;
	int err = 0;

	while (got < n) {
		ssize_t w = off < 0 ? write(fd, b + got, n - got) :
				      pwrite(fd, b + got, n - got,
					     (off_t)(off + (int64_t)got));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -ENOSPC;
			break;
		}
		got += (size_t)w;
	}
	if (done)
		*done = got;
	return err;
}
