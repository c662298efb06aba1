/* Streaming parser of the text `perf script` prints: one stack sample at a
 * time, from perf's default output and the usual -F field sets, with or
 * without call chains, with or without --ns. Our own implementation of
 * Perfetto's perf text importer (docs/clock-model.md, 'perf script text'),
 * made more robust:
 *
 * - Header line: `comm pid/tid [cpu] seconds.fraction: [period] [event:]
 *   [ip sym (dso)]`. As in the model, the header is cut at the leftmost colon
 *   that follows a timestamp token and whose left part parses as comm (may be
 *   empty, hold spaces, digits and colons), `pid/tid` or `tid`, optional
 *   `[cpu]`. The timestamp has 1 to 9 decimals (--ns prints 9) and is parsed
 *   exactly with integers: 1.000001 -> 1000001000 ns. The comm keeps its inner
 *   spacing. Without -g perf prints the sample's only frame on the header line
 *   and no blank line between samples: that frame is taken from the header.
 * - Frame lines, leaf first: `address symbol[+0xoff] (dso)`. The address is
 *   hex (optional 0x); the dso is inside the parenthesis that closes the line,
 *   matched with nesting ("(/x (deleted))" gives "/x (deleted)"); the symbol
 *   may be empty or hold spaces, parentheses or '+'; only a trailing
 *   "+0x<hex>" is cut ("operator+" stays).
 * - A sample ends at a blank line, at the next header or at end of input.
 *   Several blank lines, CRLF line ends, tabs, a missing final blank line and
 *   '#' comment lines (perf script --header) are accepted.
 * - Nothing aborts the import: a malformed line drops the sample it belongs
 *   to (and the lines up to the next blank line or header), counted in one
 *   of the stats below; so does a line with a NUL byte, invalid UTF-8 or more
 *   than PERF_TEXT_MAX_LINE bytes (whose buffer is released right after).
 *
 * Known ambiguity of the format (as in the reference): a comm that itself
 * ends with " <digits> <digits>.<digits>:" is cut there. */
#ifndef BTR_PERF_TEXT_H
#define BTR_PERF_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "encode/perf_samples.h"

#define PERF_TEXT_MAX_LINE (1u << 20)         /* longer lines are malformed */
#define PERF_TEXT_MAX_FRAMES 65536u           /* frames of one sample */
#define PERF_TEXT_MAX_SAMPLE_TEXT (16u << 20) /* string bytes of one sample */


/* Counters. Every sample the input holds ends in exactly one of SAMPLES,
 * NO_FRAMES, MALFORMED_SAMPLE, MALFORMED_FRAME or TOO_LARGE; the LINE_* and
 * COMMENT_LINES counters count lines. The ones a merge counts as drops
 * have Perfetto-style stat names in timeline.h (SYNC_STAT_PERF_*); the
 * reference has only perf_text_importer_sample_no_frames. */
enum perf_text_stat {
	PERF_TEXT_STAT_SAMPLES,          /* returned by perf_text_next */
	PERF_TEXT_STAT_NO_FRAMES,        /* header without frame: skipped */
	PERF_TEXT_STAT_MALFORMED_SAMPLE, /* bad line where a header was due,
					  * or frames with no header */
	PERF_TEXT_STAT_MALFORMED_FRAME,  /* bad line among a sample's frames */
	PERF_TEXT_STAT_TOO_LARGE,        /* over MAX_FRAMES or MAX_SAMPLE_TEXT */
	PERF_TEXT_STAT_LINE_TOO_LONG,    /* lines over PERF_TEXT_MAX_LINE */
	PERF_TEXT_STAT_LINE_NOT_TEXT,    /* lines with NUL or invalid UTF-8 */
	PERF_TEXT_STAT_COMMENT_LINES,    /* '#' lines outside samples */
	PERF_TEXT_STAT_COUNT,
};

struct perf_text;

/* NULL with errno set on failure. perf_text_open_file() reads f and leaves
 * it open at perf_text_close(). */
struct perf_text *perf_text_open(const char *path);
struct perf_text *perf_text_open_file(FILE *f);
void perf_text_close(struct perf_text *p);

/* 1: *out holds the next sample; 0: end of input; -errno: read error or
 * out of memory (the parser can then only be closed). */
int perf_text_next(struct perf_text *p, struct perf_sample *out);

uint64_t perf_text_stat(const struct perf_text *p, enum perf_text_stat stat);
/* Lines read so far. */
uint64_t perf_text_lines(const struct perf_text *p);
/* Why the last sample was dropped, and its line; NULL if none was. */
const char *perf_text_last_error(const struct perf_text *p, uint64_t *line);

/* True when the first line of head[0..n) that is neither blank nor a '#'
 * comment parses as a sample header (a line cut by n is tried as is). */
bool perf_text_detect(const uint8_t *head, size_t n);

/* "seconds.fraction", 1 to 9 decimals, no sign or spaces -> exact ns; the
 * seconds may be empty (".5" is 0.5 s).
 * Returns 0, or -1 when malformed or above INT64_MAX ns. */
int perf_text_parse_time(const char *s, size_t n, int64_t *ns);

#endif
