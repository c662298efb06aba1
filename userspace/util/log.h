/* Diagnostics on stderr, one small module for the whole program:
 * "bpftrace-rec: error: ..." lines, warnings, and verbose messages shown
 * only with -v. Data never goes through here. */
#ifndef BTR_LOG_H
#define BTR_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern int log_verbosity; /* -1 quiet, 0 normal, 1 verbose */

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An event worth a line even with --quiet (a trigger in the journal). */
void log_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A line logged at most once a period (a storm of the same event): due
 * at `now` when none was logged in the last `period` ns; *held then says
 * how many were held back since the last one logged. */
struct log_limit {
	uint64_t at;   /* when the last line was logged (0: never) */
	uint64_t held; /* held back since */
};
bool log_limit_due(struct log_limit *l, uint64_t now, uint64_t period,
		   uint64_t *held);

/* "NAME: offset N: " and the formatted rest into buf (cut to fit): the one
 * way every reader of an input names the place of a problem. Returns buf. */
char *msg_at(char *buf, size_t size, const char *name, uint64_t off,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
char *msg_vat(char *buf, size_t size, const char *name, uint64_t off,
	      const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Flushes standard output, where the commands print their data; false
 * after reporting the error when a write failed (a full disk, a closed
 * pipe), so that the command exits non-zero. */
bool log_stdout_ok(void);

#endif
