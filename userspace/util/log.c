/* Diagnostics on stderr with the program name and a severity. */
#include "util/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int log_verbosity;

static void vlog(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "bpftrace-rec: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define LOG_FN(name, min, level)                                               \
	void name(const char *fmt, ...)                                        \
	{                                                                      \
		va_list ap;                                                    \
		if (log_verbosity < (min))                                     \
			return;                                                \
		va_start(ap, fmt);                                             \
		vlog(level, fmt, ap);                                          \
		va_end(ap);                                                    \
	}

LOG_FN(log_error, -1, "error: ")
LOG_FN(log_warn, 0, "warning: ")
LOG_FN(log_info, 0, "")
LOG_FN(log_event, -1, "")
LOG_FN(log_debug, 1, "debug: ")

char *msg_vat(char *buf, size_t size, const char *name, uint64_t off,
	      const char *fmt, va_list ap)
{
	int n = snprintf(buf, size, "%s: offset %" PRIu64 ": ", name, off);

	if (n < 0 || (size_t)n >= size)
		return buf;
	vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	return buf;
}

char *msg_at(char *buf, size_t size, const char *name, uint64_t off,
	     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vat(buf, size, name, off, fmt, ap);
	va_end(ap);
	return buf;
}

bool log_stdout_ok(void)
{
	int errnum = 0;

	if (fflush(stdout) != 0)
		errnum = errno;
	if (!errnum && !ferror(stdout))
		return true;
	log_error("standard output: write error%s%s", errnum ? ": " : "",
		  errnum ? strerror(errnum) : "");
	return false;
}

bool log_limit_due(struct log_limit *l, uint64_t now, uint64_t period,
		   uint64_t *held)
{
	if (l->at && now - l->at < period) {
		l->held++;
		return false;
	}
	*held = l->held;
	l->at = now;
	l->held = 0;
	return true;
}
