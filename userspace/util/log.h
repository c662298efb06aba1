/* Diagnostics on stderr, one small module for the whole program:
 * "bpftrace-rec: error: ..." lines, warnings, and verbose messages shown
 * only with -v. Data never goes through here. */
#ifndef BTR_LOG_H
#define BTR_LOG_H

#include <stdbool.h>

extern int log_verbosity; /* -1 quiet, 0 normal, 1 verbose */

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Flushes standard output, where the commands print their data; false
 * after reporting the error when a write failed (a full disk, a closed
 * pipe), so that the command exits non-zero. */
bool log_stdout_ok(void);

#endif
