/* Parser of `perf script` text (see perf_text.h): the grammars of a header
 * line and of a frame line, the classification of lines, and the state
 * machine that assembles samples from lines, with two sample buffers so that
 * the sample handed out stays valid while the next one is being read. */
#include "sync/perf/perf_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define NS_PER_SEC 1000000000ull
#define MAX_SEC (INT64_MAX / 1000000000ll) /* 9223372036 */
#define MAX_PIECE 32 /* longest "pid/tid" or "[cpu]" piece, and ts token */

/* A slice of a line; not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

struct frame_fields {
	uint64_t addr;
	struct span sym, dso;
};

struct header {
	struct span comm, event;
	int32_t pid, tid, cpu;
	int64_t ts;
	uint64_t period;
	bool has_frame;
	struct frame_fields frame;
};

enum line_kind { LINE_BLANK, LINE_COMMENT, LINE_HEADER, LINE_FRAME, LINE_BAD };
enum state { ST_IDLE, ST_SAMPLE, ST_SKIP };

/* Where a sample is built: strings in `text` (NUL-terminated, referenced by
 * offset until the sample is complete), frames in `fo` then `fr`. */
struct sbuf {
	struct perf_sample s;
	size_t comm_off, event_off;
	char *text;
	size_t tlen, tcap;
	struct frame_ofs {
		uint64_t addr;
		size_t sym, dso;
	} *fo;
	struct perf_frame *fr;
	size_t nfr, frcap;
};

struct perf_text {
	FILE *f;
	bool own;
	char *line;
	size_t cap;
	uint64_t lineno;
	enum state state;
	struct sbuf buf[2];
	int cur;
	bool eof;
	int fatal;
	uint64_t stats[PERF_TEXT_STAT_COUNT];
	const char *err;
	uint64_t err_line;
};


/* ---- characters and spans ---- */

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_digit(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static struct span span_make(const char *p, size_t n)
{
	struct span s = { p, n };

	return s;
}

static struct span span_trim(struct span s)
{
	while (s.n && is_ws(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n && is_ws(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* First whitespace-delimited token of s; *rest is what follows it, trimmed. */
static struct span first_token(struct span s, struct span *rest)
{
	size_t i = 0;

	s = span_trim(s);
	while (i < s.n && !is_ws(s.p[i]))
		i++;
	*rest = span_trim(span_make(s.p + i, s.n - i));
	return span_make(s.p, i);
}

/* Last token of s, if at most MAX_PIECE long (else an empty span); *before
 * is the text before it. */
static struct span last_piece(struct span s, struct span *before)
{
	size_t end = s.n, start;

	while (end && is_ws(s.p[end - 1]))
		end--;
	start = end;
	while (start && !is_ws(s.p[start - 1])) {
		if (end - start == MAX_PIECE)
			return span_make(s.p, 0);
		start--;
	}
	*before = span_make(s.p, start);
	return span_make(s.p + start, end - start);
}

/* ---- numbers ---- */

static bool parse_u64(struct span s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s.n)
		return false;
	for (i = 0; i < s.n; i++) {
		if (!is_digit(s.p[i]) || v > (max - (uint64_t)(s.p[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s.p[i] - '0');
	}
	*out = v;
	return true;
}

static bool parse_i32(struct span s, int32_t *out)
{
	uint64_t v;

	if (!parse_u64(s, INT32_MAX, &v))
		return false;
	*out = (int32_t)v;
	return true;
}

static bool parse_hex(struct span s, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		s.p += 2;
		s.n -= 2;
	}
	if (!s.n || s.n > 16)
		return false;
	for (i = 0; i < s.n; i++) {
		int d = hex_digit(s.p[i]);

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

int perf_text_parse_time(const char *s, size_t n, int64_t *ns)
{
	const char *dot = n ? memchr(s, '.', n) : NULL;
	uint64_t sec, frac;
	size_t nint, nfrac;

	if (!dot)
		return -1;
	nint = (size_t)(dot - s);
	nfrac = n - nint - 1;
	/* An empty integer part is 0 s (".123456" is 0.123456 s), as
	 * Perfetto's importer reads it. */
	sec = 0;
	if (nfrac < 1 || nfrac > 9 ||
	    (nint && !parse_u64(span_make(s, nint), (uint64_t)MAX_SEC, &sec)) ||
	    !parse_u64(span_make(dot + 1, nfrac), NS_PER_SEC, &frac))
		return -1;
	for (; nfrac < 9; nfrac++)
		frac *= 10;
	if (sec * NS_PER_SEC > (uint64_t)INT64_MAX - frac)
		return -1;
	*ns = (int64_t)(sec * NS_PER_SEC + frac);
	return 0;
}

/* ---- text validity ---- */

/* Length of the UTF-8 sequence at s[0..n) (1..4), 0 if invalid, or -1 if s
 * is a valid but incomplete sequence. */
static int utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	for (i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/* No NUL byte and valid UTF-8; a sequence cut by the end is accepted when
 * cut_ok (a detection buffer may end inside a character). */
static bool is_text(struct span s, bool cut_ok)
{
	const unsigned char *u = (const unsigned char *)s.p;
	size_t i = 0;

	if (memchr(s.p, 0, s.n))
		return false;
	while (i < s.n) {
		int len = utf8_seq(u + i, s.n - i);

		if (len < 0)
			return cut_ok;
		if (len == 0)
			return false;
		i += (size_t)len;
	}
	return true;
}

/* ---- frame line: address [symbol] (dso) ---- */

/* Index of the '(' that matches the final ')' of s, or -1. */
static ssize_t matching_open(struct span s)
{
	size_t depth = 0, i = s.n;

	while (i--) {
		if (s.p[i] == ')')
			depth++;
		else if (s.p[i] == '(' && --depth == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* Cuts a trailing "+0x<hex>" off a symbol, and nothing else. */
static struct span cut_offset(struct span sym)
{
	size_t i = sym.n, digits = 0;

	while (i && hex_digit(sym.p[i - 1]) >= 0) {
		i--;
		digits++;
	}
	if (digits && i >= 3 && sym.p[i - 1] == 'x' && sym.p[i - 2] == '0' &&
	    sym.p[i - 3] == '+')
		sym.n = i - 3;
	return sym;
}

static bool parse_frame(struct span s, struct frame_fields *f)
{
	struct span head, sym;
	ssize_t open;

	s = span_trim(s);
	if (s.n < 3 || s.p[s.n - 1] != ')')
		return false;
	open = matching_open(s);
	if (open < 0)
		return false;
	head = span_make(s.p, (size_t)open);
	if (!parse_hex(first_token(head, &sym), &f->addr))
		return false;
	f->sym = cut_offset(sym);
	f->dso = span_make(s.p + open + 1, s.n - (size_t)open - 2);
	return true;
}

/* ---- header line ---- */

/* "[N]" -> N. */
static bool parse_cpu(struct span s, int32_t *cpu)
{
	return s.n >= 3 && s.p[0] == '[' && s.p[s.n - 1] == ']' &&
	       parse_i32(span_make(s.p + 1, s.n - 2), cpu);
}

static bool parse_pid_tid(struct span s, int32_t *pid, int32_t *tid)
{
	const char *slash = memchr(s.p, '/', s.n);
	size_t np;

	if (!slash) {
		*pid = -1;
		return parse_i32(s, tid);
	}
	np = (size_t)(slash - s.p);
	return parse_i32(span_make(s.p, np), pid) &&
	       parse_i32(span_make(slash + 1, s.n - np - 1), tid);
}

/* meta = "comm pid/tid [cpu]" (the text before the timestamp). */
static bool parse_meta(struct span meta, struct header *h)
{
	struct span before = meta, piece = last_piece(meta, &before);

	h->cpu = -1;
	if (piece.n && piece.p[0] == '[') {
		if (!parse_cpu(piece, &h->cpu))
			return false;
		piece = last_piece(before, &before);
	}
	if (!piece.n || !parse_pid_tid(piece, &h->pid, &h->tid))
		return false;
	h->comm = span_trim(before);
	return true;
}

/* Takes a leading period (all digits) off *s. */
static bool take_period(struct span *s, uint64_t *period)
{
	struct span rest, tok = first_token(*s, &rest);

	if (!parse_u64(tok, UINT64_MAX, period))
		return false;
	*s = rest;
	return true;
}

/* Takes a leading event name ("name:", one token) off *s. */
static bool take_event(struct span *s, struct span *event)
{
	struct span rest, tok = first_token(*s, &rest);

	if (tok.n < 2 || tok.p[tok.n - 1] != ':')
		return false;
	*event = span_make(tok.p, tok.n - 1);
	*s = rest;
	return true;
}

/* What follows the timestamp's colon: [period] [event:] [ip sym (dso)], the
 * frame present without -g. Readings are tried from the one that takes the
 * most fields; the first whose remainder is empty or a frame wins. If none,
 * the remainder is something else (tracepoint fields) and is ignored. */
static void parse_rest(struct span rest, struct header *h)
{
	struct reading {
		uint64_t period;
		struct span event, rem;
	} r[4];
	struct span s = span_trim(rest), t;
	uint64_t period;
	size_t n = 0, i;

	memset(r, 0, sizeof(r));
	t = s;
	if (take_period(&t, &period)) {
		r[n].period = period;
		r[n].rem = t;
		if (take_event(&r[n].rem, &r[n].event))
			n++;
		r[n].period = period;
		r[n++].rem = t;
	}
	r[n].rem = s;
	if (take_event(&r[n].rem, &r[n].event))
		n++;
	r[n++].rem = s;
	for (i = 0; i < n; i++) {
		h->has_frame = r[i].rem.n && parse_frame(r[i].rem, &h->frame);
		if (!r[i].rem.n || h->has_frame)
			break;
	}
	if (i == n)
		i = 0;
	h->period = r[i].period;
	h->event = r[i].event;
}

/* Is line[start..colon) a timestamp token preceded by whitespace? */
static bool ts_token_at(struct span line, size_t colon, size_t *start)
{
	size_t i = colon;

	while (i && !is_ws(line.p[i - 1])) {
		if (colon - i == MAX_PIECE)
			return false;
		i--;
	}
	*start = i;
	return i > 0 && i < colon;
}

static bool header_at(struct span line, size_t colon, struct header *h)
{
	size_t start;

	if (!ts_token_at(line, colon, &start) ||
	    perf_text_parse_time(line.p + start, colon - start, &h->ts) ||
	    !parse_meta(span_make(line.p, start), h))
		return false;
	parse_rest(span_make(line.p + colon + 1, line.n - colon - 1), h);
	return true;
}

/* The leftmost colon that ends a timestamp and whose left part parses. */
static bool parse_header(struct span line, struct header *h)
{
	const char *c = line.p, *end = line.p + line.n;

	while ((c = memchr(c, ':', (size_t)(end - c)))) {
		if (c > line.p && is_digit(c[-1]) &&
		    header_at(line, (size_t)(c - line.p), h))
			return true;
		c++;
	}
	return false;
}

/* ---- lines ---- */

static bool is_comment(struct span s)
{
	return s.n && s.p[0] == '#';
}

/* s is trimmed and valid text. */
static enum line_kind classify(struct span s, struct header *h)
{
	if (!s.n)
		return LINE_BLANK;
	if (parse_header(s, h))
		return LINE_HEADER;
	if (parse_frame(s, &h->frame))
		return LINE_FRAME;
	return is_comment(s) ? LINE_COMMENT : LINE_BAD;
}

bool perf_text_detect(const uint8_t *head, size_t n)
{
	const char *p = (const char *)head, *end = p + n;
	struct header h;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct span s = span_make(p, (size_t)((nl ? nl : end) - p));

		if (s.n > PERF_TEXT_MAX_LINE || !is_text(s, !nl))
			return false;
		s = span_trim(s);
		if (s.n && !is_comment(s))
			return parse_header(s, &h);
		p = nl ? nl + 1 : end;
	}
	return false;
}

/* ---- sample buffers ---- */

static void sbuf_reset(struct sbuf *b)
{
	b->tlen = 0;
	b->nfr = 0;
}

static void sbuf_free(struct sbuf *b)
{
	free(b->text);
	free(b->fo);
	free(b->fr);
}

/* Appends s + NUL; *off is where. -E2BIG over the sample limit. */
static int sbuf_str(struct sbuf *b, struct span s, size_t *off)
{
	size_t need = b->tlen + s.n + 1;

	if (need > PERF_TEXT_MAX_SAMPLE_TEXT)
		return -E2BIG;
	if (need > b->tcap) {
		size_t cap = need < 4096 ? 4096 : need * 2;
		char *t = realloc(b->text, cap);

		if (!t)
			return -ENOMEM;
		b->text = t;
		b->tcap = cap;
	}
	if (s.n)
		memcpy(b->text + b->tlen, s.p, s.n);
	b->text[b->tlen + s.n] = '\0';
	*off = b->tlen;
	b->tlen = need;
	return 0;
}

static int sbuf_frame(struct sbuf *b, const struct frame_fields *f)
{
	struct frame_ofs *o;
	int err;

	if (b->nfr == PERF_TEXT_MAX_FRAMES)
		return -E2BIG;
	if (b->nfr == b->frcap) {
		size_t cap = b->frcap ? b->frcap * 2 : 64;
		struct frame_ofs *fo = realloc(b->fo, cap * sizeof(*fo));
		struct perf_frame *fr;

		if (!fo)
			return -ENOMEM;
		b->fo = fo;
		fr = realloc(b->fr, cap * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		b->fr = fr;
		b->frcap = cap;
	}
	o = &b->fo[b->nfr];
	o->addr = f->addr;
	err = sbuf_str(b, f->sym, &o->sym);
	if (!err)
		err = sbuf_str(b, f->dso, &o->dso);
	if (!err)
		b->nfr++;
	return err;
}

/* Turns offsets into pointers: the sample is handed out. */
static void sbuf_publish(struct sbuf *b, struct perf_sample *out)
{
	size_t i;

	for (i = 0; i < b->nfr; i++) {
		b->fr[i] = (struct perf_frame){
			.address = b->fo[i].addr,
			.symbol = b->text + b->fo[i].sym,
			.dso = b->text + b->fo[i].dso,
		};
	}
	b->s.comm = b->text + b->comm_off;
	b->s.event = b->text + b->event_off;
	b->s.frames = b->fr;
	b->s.nframes = b->nfr;
	*out = b->s;
}

/* ---- state machine ---- */

static void drop(struct perf_text *p, enum perf_text_stat stat,
		 const char *why)
{
	p->stats[stat]++;
	p->err = why;
	p->err_line = p->lineno;
	p->state = ST_SKIP;
}

/* A sample-building error: over a limit drops the sample; ENOMEM is fatal. */
static int build_error(struct perf_text *p, int err)
{
	if (err != -E2BIG)
		return p->fatal = err;
	drop(p, PERF_TEXT_STAT_TOO_LARGE, "sample too large");
	return 0;
}

/* Ends the current sample: 1 if it went to *out, else 0. */
static int finish(struct perf_text *p, struct perf_sample *out)
{
	struct sbuf *b = &p->buf[p->cur];

	p->state = ST_IDLE;
	if (!b->nfr) {
		p->stats[PERF_TEXT_STAT_NO_FRAMES]++;
		p->err = "sample without frames";
		p->err_line = b->s.line;
		return 0;
	}
	sbuf_publish(b, out);
	p->stats[PERF_TEXT_STAT_SAMPLES]++;
	p->cur ^= 1;
	return 1;
}

static int start_sample(struct perf_text *p, const struct header *h)
{
	struct sbuf *b = &p->buf[p->cur];
	int err;

	sbuf_reset(b);
	b->s.pid = h->pid;
	b->s.tid = h->tid;
	b->s.cpu = h->cpu;
	b->s.ts_ns = h->ts;
	b->s.period = h->period;
	b->s.line = p->lineno;
	p->state = ST_SAMPLE;
	err = sbuf_str(b, h->comm, &b->comm_off);
	if (!err)
		err = sbuf_str(b, h->event, &b->event_off);
	if (!err && h->has_frame)
		err = sbuf_frame(b, &h->frame);
	return err ? build_error(p, err) : 0;
}

static int on_header(struct perf_text *p, const struct header *h,
		     struct perf_sample *out)
{
	int done = p->state == ST_SAMPLE ? finish(p, out) : 0;
	int err = start_sample(p, h);

	return err ? err : done;
}

static int on_frame(struct perf_text *p, const struct frame_fields *f)
{
	int err;

	if (p->state == ST_IDLE)
		drop(p, PERF_TEXT_STAT_MALFORMED_SAMPLE,
		     "frame line without a sample header");
	if (p->state != ST_SAMPLE)
		return 0;
	err = sbuf_frame(&p->buf[p->cur], f);
	return err ? build_error(p, err) : 0;
}

static void on_bad(struct perf_text *p, const char *why)
{
	if (p->state == ST_SAMPLE)
		drop(p, PERF_TEXT_STAT_MALFORMED_FRAME, why);
	else if (p->state == ST_IDLE)
		drop(p, PERF_TEXT_STAT_MALFORMED_SAMPLE, why);
}

/* Feeds one line (without '\n'); 1 when a sample went to *out. */
static int feed(struct perf_text *p, struct span line,
		struct perf_sample *out)
{
	struct header h;
	struct span s = span_trim(line);

	if (!is_text(s, false)) {
		p->stats[PERF_TEXT_STAT_LINE_NOT_TEXT]++;
		on_bad(p, "NUL byte or invalid UTF-8");
		return 0;
	}
	switch (classify(s, &h)) {
	case LINE_BLANK:
		if (p->state == ST_SAMPLE)
			return finish(p, out);
		p->state = ST_IDLE;
		return 0;
	case LINE_HEADER:
		return on_header(p, &h, out);
	case LINE_FRAME:
		return on_frame(p, &h.frame);
	case LINE_COMMENT:
		if (p->state != ST_SAMPLE) {
			p->stats[PERF_TEXT_STAT_COMMENT_LINES]++;
			return 0;
		}
		break;
	case LINE_BAD:
		break;
	}
	on_bad(p, p->state == ST_SAMPLE ? "not a frame line"
					: "not a sample header");
	return 0;
}

/* Room for byte n of the line and a NUL after it (the buffer never grows
 * past PERF_TEXT_MAX_LINE + 1). */
static int line_room(struct perf_text *p, size_t n)
{
	size_t cap = p->cap ? p->cap : 256;
	char *b;

	if (n + 1 < p->cap)
		return 0;
	while (cap <= n + 1)
		cap *= 2;
	if (cap > PERF_TEXT_MAX_LINE + 1)
		cap = PERF_TEXT_MAX_LINE + 1;
	b = realloc(p->line, cap);
	if (!b)
		return -ENOMEM;
	p->line = b;
	p->cap = cap;
	return 0;
}

/* 1: a line is in *line (longer than PERF_TEXT_MAX_LINE: *too_long, its
 * bytes past the limit read and dropped, never held); 0: end of input;
 * -errno. */
static int read_line(struct perf_text *p, struct span *line, bool *too_long)
{
	size_t n = 0;
	int c;

	*too_long = false;
	errno = 0;
	while ((c = getc_unlocked(p->f)) != EOF && c != '\n') {
		if (n == PERF_TEXT_MAX_LINE) {
			*too_long = true;
			continue;
		}
		if (line_room(p, n))
			return -ENOMEM;
		p->line[n++] = (char)c;
	}
	if (c == EOF && ferror(p->f))
		return -(errno ? errno : EIO);
	if (c == EOF && !n && !*too_long)
		return 0;
	if (line_room(p, n))
		return -ENOMEM;
	p->line[n] = '\0';
	p->lineno++;
	*line = span_make(p->line, n);
	return 1;
}

/* A line over the limit is bad; its buffer is given back at once. */
static void on_long_line(struct perf_text *p)
{
	free(p->line);
	p->line = NULL;
	p->cap = 0;
	p->stats[PERF_TEXT_STAT_LINE_TOO_LONG]++;
	on_bad(p, "line too long");
}

int perf_text_next(struct perf_text *p, struct perf_sample *out)
{
	struct span line;
	bool too_long;
	int r;

	while (!p->fatal && !p->eof) {
		r = read_line(p, &line, &too_long);
		if (r < 0)
			return p->fatal = r;
		if (r == 0) {
			p->eof = true;
			return p->state == ST_SAMPLE ? finish(p, out) : 0;
		}
		if (too_long) {
			on_long_line(p);
			continue;
		}
		r = feed(p, line, out);
		if (r)
			return r;
	}
	return p->fatal;
}

/* ---- life cycle and accessors ---- */

struct perf_text *perf_text_open_file(FILE *f)
{
	struct perf_text *p = calloc(1, sizeof(*p));

	if (p)
		p->f = f;
	return p;
}

struct perf_text *perf_text_open(const char *path)
{
	FILE *f = fopen(path, "r");
	struct perf_text *p;
	int err;

	if (!f)
		return NULL;
	p = perf_text_open_file(f);
	if (!p) {
		err = errno;
		fclose(f);
		errno = err;
		return NULL;
	}
	p->own = true;
	return p;
}

void perf_text_close(struct perf_text *p)
{
	if (!p)
		return;
	if (p->own)
		fclose(p->f);
	free(p->line);
	sbuf_free(&p->buf[0]);
	sbuf_free(&p->buf[1]);
	free(p);
}

uint64_t perf_text_stat(const struct perf_text *p, enum perf_text_stat stat)
{
	return stat < PERF_TEXT_STAT_COUNT ? p->stats[stat] : 0;
}

uint64_t perf_text_lines(const struct perf_text *p)
{
	return p->lineno;
}

const char *perf_text_last_error(const struct perf_text *p, uint64_t *line)
{
	if (line)
		*line = p->err_line;
	return p->err;
}
