/* Writing a whole buffer to a file descriptor: the loop over short writes
 * and EINTR that the trace file writer, the sorter's runs, archive
 * extraction and the stdin spool all need. */
#ifndef BTR_FD_IO_H
#define BTR_FD_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes the n bytes of p to fd at offset off (pwrite), or at the file
 * position when off < 0 (write). Returns 0, or a negative errno (-ENOSPC
 * when a write takes no byte); *done, unless NULL, holds the bytes
 * written either way. */
int fd_write_all(int fd, const void *p, size_t n, int64_t off, size_t *done);

#endif
