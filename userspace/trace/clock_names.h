/* Names of the builtin clocks (builtin_clock.proto, without the
 * BUILTIN_CLOCK_ prefix) and the parsing of a clock given on the command
 * line as a name or a number. */
#ifndef BTR_CLOCK_NAMES_H
#define BTR_CLOCK_NAMES_H

#include <stdint.h>

/* "BOOTTIME" for 6, ...; NULL for an id without a name. */
const char *clock_name(uint32_t id);

/* A builtin clock's name exactly as clock_name() spells it. Returns 0, or
 * -1 for anything else. */
int clock_by_name(const char *s, uint32_t *id);

/* A name (any case, with or without the BUILTIN_CLOCK_ prefix) or a
 * decimal id from 1 to UINT32_MAX. Returns 0, or -1 if it is neither. */
int clock_parse(const char *s, uint32_t *id);

#endif
