/* Test tool: builds a Perfetto trace from a text description, one packet a
 * line, so tests state scenarios instead of bytes.
 *
 *   gentrace [-o OUT] [DESCRIPTION]      (stdin and stdout by default)
 *
 * Lines (blank lines and '#' comments are skipped; CLOCK is a builtin
 * name such as BOOTTIME or a number; numbers are decimal):
 *
 *   snapshot [seq=N] [machine=N] [primary=CLOCK] CLOCK:VALUE[:uUNIT][:inc]...
 *       a ClockSnapshot; e.g. `snapshot seq=1 6:1000 3:900`
 *   packet [seq=N] [clock=CLOCK] [ts=N] [flags=N] [cleared] [machine=N]
 *          [field=N] [payload=TEXT | bytes=HEX] [raw=HEX]
 *       a packet with an unknown payload: field N (default 1000) holding
 *       TEXT or the bytes (empty with field= alone); raw appends bytes to
 *       the packet as they are
 *   unknown ...                 the same as packet
 *   defaults seq=N clock=CLOCK [cleared] [extra=TEXT]
 *       TracePacketDefaults{timestamp_clock_id}; extra adds an unknown
 *       field 1000 inside the defaults; cleared sets sequence flag 1
 *   bundle cpu=N [seq=N] [switch=T,T...] [waking=T,...] [events=T,...]
 *          [fclock=global|local|mono_raw|N ftrace_ts=N boot_ts=N]
 *          [prev_end=N] [lost] [ts=N] [clock=CLOCK]
 *       an FtraceEventBundle: compact switches (next_pid 100+i, comm "a"
 *       or "b") and wakings (pid 200+i) at absolute times T (stored as
 *       deltas), and regular sched_process_free events (pid 300+i)
 *   rsync [seq=N] [machine=N] CLIENT>HOST...
 *       a RemoteClockSync: one SyncedClocks per word, CLIENT and HOST
 *       each CLOCK:VALUE[,CLOCK:VALUE...] (client_clocks, host_clocks)
 *   sysinfo [name=NAME] [cpus=N] [seq=N] [machine=N]
 *       a SystemInfo with utsname sysname "Linux", machine_name NAME and
 *       num_cpus N
 *   raw HEX                     a record holding these packet bytes
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/clock_names.h"
#include "util/wire.h"

#define MAX_VALUES 4096

static unsigned long lineno;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "gentrace: line %lu: ", lineno);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		die("bad number '%s'", s);
	return v;
}

static uint32_t clock_arg(const char *s)
{
	uint32_t id;

	if (clock_parse(s, &id))
		die("bad clock '%s'", s);
	return id;
}

static void hex_bytes(struct wbuf *b, const char *s)
{
	size_t n = strlen(s), i;

	if (n % 2)
		die("odd hex '%s'", s);
	for (i = 0; i < n; i += 2) {
		char h[3] = { s[i], s[i + 1], 0 };
		char *end;
		uint8_t v = (uint8_t)strtoul(h, &end, 16);

		if (*end)
			die("bad hex '%s'", s);
		wbuf_put(b, &v, 1);
	}
}

/* "1,2,3" into v; returns the count. */
static size_t list(const char *s, uint64_t *v)
{
	char *copy = strdup(s), *save = NULL, *t;
	size_t n = 0;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == MAX_VALUES)
			die("too many values in '%s'", s);
		v[n++] = num(t);
	}
	free(copy);
	return n;
}

/* key=value options of a line. */
struct opts {
	char *key[64], *val[64];
	size_t n;
	bool used[64];
};

static const char *opt(struct opts *o, const char *key)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key)) {
			o->used[i] = true;
			return o->val[i] ? o->val[i] : "";
		}
	return NULL;
}

static void all_used(const struct opts *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (!o->used[i])
			die("unknown word '%s'", o->key[i]);
}

/* The fields every packet kind shares: ts, clock, seq, flags, machine. */
static void common(struct wbuf *p, struct opts *o)
{
	const char *v;
	uint64_t flags = 0;

	if ((v = opt(o, "ts")))
		wbuf_field_varint(p, 8, num(v));
	if ((v = opt(o, "clock")))
		wbuf_field_varint(p, 58, clock_arg(v));
	if ((v = opt(o, "seq")))
		wbuf_field_varint(p, 10, num(v));
	if ((v = opt(o, "flags")))
		flags = num(v);
	if (opt(o, "cleared"))
		flags |= 1;
	if (flags)
		wbuf_field_varint(p, 13, flags);
	if ((v = opt(o, "machine")))
		wbuf_field_varint(p, 98, num(v));
}

static void snapshot(struct wbuf *p, struct opts *o, char **clocks, size_t n)
{
	const char *v;
	size_t mark = wbuf_begin_len(p, 6), i;

	for (i = 0; i < n; i++) {
		char *save = NULL, *id = strtok_r(clocks[i], ":", &save);
		char *val = strtok_r(NULL, ":", &save), *x;
		size_t m = wbuf_begin_len(p, 1);

		if (!id || !val)
			die("bad clock reading '%s'", clocks[i]);
		wbuf_field_varint(p, 1, clock_arg(id));
		wbuf_field_varint(p, 2, num(val));
		while ((x = strtok_r(NULL, ":", &save))) {
			if (!strcmp(x, "inc"))
				wbuf_field_varint(p, 3, 1);
			else if (x[0] == 'u')
				wbuf_field_varint(p, 4, num(x + 1));
			else
				die("bad clock option '%s'", x);
		}
		wbuf_end_len(p, m);
	}
	if ((v = opt(o, "primary")))
		wbuf_field_varint(p, 2, clock_arg(v));
	wbuf_end_len(p, mark);
	common(p, o);
}

static void payload(struct wbuf *p, struct opts *o)
{
	const char *field = opt(o, "field"), *text = opt(o, "payload");
	const char *bytes = opt(o, "bytes"), *raw = opt(o, "raw");
	uint32_t num_field = field ? (uint32_t)num(field) : 1000;

	common(p, o);
	if (text)
		wbuf_field_bytes(p, num_field, text, strlen(text));
	if (bytes) {
		struct wbuf b = { 0 };

		hex_bytes(&b, bytes);
		wbuf_field_bytes(p, num_field, b.p, b.len);
		wbuf_free(&b);
	}
	if (field && !text && !bytes)
		wbuf_field_bytes(p, num_field, "", 0);
	if (raw)
		hex_bytes(p, raw);
}

static void defaults(struct wbuf *p, struct opts *o)
{
	const char *clock = opt(o, "clock"), *extra = opt(o, "extra");
	const char *seq = opt(o, "seq");
	size_t mark;

	if (!clock)
		die("defaults without clock=%s", "");
	mark = wbuf_begin_len(p, 59);
	if (extra)
		wbuf_field_bytes(p, 1000, extra, strlen(extra));
	wbuf_field_varint(p, 58, clock_arg(clock));
	wbuf_end_len(p, mark);
	if (seq)
		wbuf_field_varint(p, 10, num(seq));
	if (opt(o, "cleared"))
		wbuf_field_varint(p, 13, 1);
}

static void packed(struct wbuf *p, uint32_t field, const uint64_t *v,
		   size_t n)
{
	wbuf_field_packed(p, field, v, n);
}

/* Absolute times to the compact encoding: first absolute, then deltas. */
static void deltas(uint64_t *v, size_t n)
{
	size_t i;

	for (i = n; i-- > 1;)
		v[i] -= v[i - 1];
}

static void compact(struct wbuf *p, const char *sw, const char *wk,
		    uint64_t cpu)
{
	static uint64_t t[MAX_VALUES], a[MAX_VALUES];
	size_t n, i, mark = wbuf_begin_len(p, 4);

	wbuf_field_bytes(p, 5, "a", 1);
	wbuf_field_bytes(p, 5, "b", 1);
	n = sw ? list(sw, t) : 0;
	if (n) {
		deltas(t, n);
		packed(p, 1, t, n);
		for (i = 0; i < n; i++)
			a[i] = i % 3 == 1; /* prev_state R, S, R, ... */
		packed(p, 2, a, n);
		for (i = 0; i < n; i++)
			a[i] = 100 + i;
		packed(p, 3, a, n);
		for (i = 0; i < n; i++)
			a[i] = 120;
		packed(p, 4, a, n);
		for (i = 0; i < n; i++)
			a[i] = i % 2;
		packed(p, 6, a, n);
	}
	n = wk ? list(wk, t) : 0;
	if (n) {
		deltas(t, n);
		packed(p, 7, t, n);
		for (i = 0; i < n; i++)
			a[i] = 200 + i;
		packed(p, 8, a, n);
		for (i = 0; i < n; i++)
			a[i] = cpu;
		packed(p, 9, a, n);
		for (i = 0; i < n; i++)
			a[i] = 120;
		packed(p, 10, a, n);
		for (i = 0; i < n; i++)
			a[i] = 0;
		packed(p, 11, a, n);
		packed(p, 12, a, n);
	}
	wbuf_end_len(p, mark);
}

static void bundle(struct wbuf *p, struct opts *o)
{
	static uint64_t t[MAX_VALUES];
	const char *cpu = opt(o, "cpu"), *sw = opt(o, "switch");
	const char *wk = opt(o, "waking"), *ev = opt(o, "events");
	const char *fclock = opt(o, "fclock"), *v;
	size_t mark = wbuf_begin_len(p, 1), n, i;

	if (!cpu)
		die("bundle without cpu=%s", "");
	wbuf_field_varint(p, 1, num(cpu));
	n = ev ? list(ev, t) : 0;
	for (i = 0; i < n; i++) {
		size_t e = wbuf_begin_len(p, 2), f;

		wbuf_field_varint(p, 1, t[i]);
		wbuf_field_varint(p, 2, 1);
		f = wbuf_begin_len(p, 240); /* sched_process_free */
		wbuf_field_bytes(p, 1, "x", 1);
		wbuf_field_varint(p, 2, 300 + i);
		wbuf_end_len(p, f);
		wbuf_end_len(p, e);
	}
	if (opt(o, "lost"))
		wbuf_field_varint(p, 3, 1);
	if (sw || wk)
		compact(p, sw, wk, num(cpu));
	if (fclock) {
		uint64_t c = !strcmp(fclock, "global") ? 2 :
			     !strcmp(fclock, "local") ? 3 :
			     !strcmp(fclock, "mono_raw") ? 4 : num(fclock);

		wbuf_field_varint(p, 5, c);
	}
	if ((v = opt(o, "ftrace_ts")))
		wbuf_field_varint(p, 6, num(v));
	if ((v = opt(o, "boot_ts")))
		wbuf_field_varint(p, 7, num(v));
	if ((v = opt(o, "prev_end")))
		wbuf_field_varint(p, 10, num(v));
	wbuf_end_len(p, mark);
	common(p, o);
}

/* A ClockSnapshot field `field` from "CLOCK:VALUE,CLOCK:VALUE". */
static void readings(struct wbuf *p, uint32_t field, char *list)
{
	char *save = NULL, *r;
	size_t mark = wbuf_begin_len(p, field);

	for (r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(r, ':');
		size_t m = wbuf_begin_len(p, 1);

		if (!colon)
			die("bad clock reading '%s'", r);
		*colon = '\0';
		wbuf_field_varint(p, 1, clock_arg(r));
		wbuf_field_varint(p, 2, num(colon + 1));
		wbuf_end_len(p, m);
	}
	wbuf_end_len(p, mark);
}

static void rsync(struct wbuf *p, struct opts *o, char **words, size_t n)
{
	size_t mark = wbuf_begin_len(p, 107), i;

	for (i = 0; i < n; i++) {
		char *host = strchr(words[i], '>');
		size_t m = wbuf_begin_len(p, 1);

		if (!host)
			die("rsync word without '>': '%s'", words[i]);
		*host++ = '\0';
		readings(p, 2, words[i]);
		readings(p, 3, host);
		wbuf_end_len(p, m);
	}
	wbuf_end_len(p, mark);
	common(p, o);
}

static void sysinfo(struct wbuf *p, struct opts *o)
{
	const char *name = opt(o, "name");
	size_t mark = wbuf_begin_len(p, 45), u;

	u = wbuf_begin_len(p, 1);
	wbuf_field_bytes(p, 1, "Linux", 5);
	wbuf_end_len(p, u);
	if (name)
		wbuf_field_bytes(p, 17, name, strlen(name));
	if (opt(o, "cpus"))
		wbuf_field_varint(p, 8, num(opt(o, "cpus")));
	wbuf_end_len(p, mark);
	common(p, o);
}

/* Builds the packet of one line into p; false for a blank line. */
static bool build(char *line, struct wbuf *p)
{
	char *save = NULL, *kind = strtok_r(line, " \t\r\n", &save), *w;
	char *clocks[64];
	size_t nclocks = 0;
	struct opts o = { 0 };

	if (!kind || kind[0] == '#')
		return false;
	while ((w = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(w, '=');

		if (!eq && strchr(w, ':') && nclocks < 64) {
			clocks[nclocks++] = w;
			continue;
		}
		if (o.n == 64)
			die("too many words%s", "");
		if (eq)
			*eq = '\0';
		o.key[o.n] = w;
		o.val[o.n++] = eq ? eq + 1 : NULL;
	}
	if (!strcmp(kind, "snapshot")) {
		snapshot(p, &o, clocks, nclocks);
	} else if (!strcmp(kind, "packet") || !strcmp(kind, "unknown")) {
		payload(p, &o);
	} else if (!strcmp(kind, "defaults")) {
		defaults(p, &o);
	} else if (!strcmp(kind, "bundle")) {
		bundle(p, &o);
	} else if (!strcmp(kind, "sysinfo")) {
		sysinfo(p, &o);
	} else if (!strcmp(kind, "rsync")) {
		rsync(p, &o, clocks, nclocks);
		nclocks = 0;
	} else if (!strcmp(kind, "raw")) {
		if (o.n != 1 || o.val[0])
			die("raw takes one HEX word%s", "");
		hex_bytes(p, o.key[0]);
		o.used[0] = true;
	} else {
		die("unknown kind '%s'", kind);
	}
	if (nclocks && strcmp(kind, "snapshot"))
		die("clock reading outside a snapshot: '%s'", clocks[0]);
	all_used(&o);
	return true;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL;
	struct wbuf p = { 0 }, file = { 0 };
	FILE *fin = stdin, *fout = stdout;
	char *line = NULL;
	size_t cap = 0;
	int c;

	while ((c = getopt(argc, argv, "o:h")) != -1) {
		if (c != 'o') {
			fprintf(stderr, "usage: gentrace [-o OUT] [DESCRIPTION]\n");
			return c == 'h' ? 0 : 64;
		}
		out = optarg;
	}
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "usage: gentrace [-o OUT] [DESCRIPTION]\n");
		return 64;
	}
	if (in && !(fin = fopen(in, "r"))) {
		perror(in);
		return 1;
	}
	while (getline(&line, &cap, fin) > 0) {
		lineno++;
		p.len = 0;
		if (!build(line, &p))
			continue;
		wbuf_put(&file, "\x0a", 1);
		wbuf_varint(&file, p.len);
		wbuf_put(&file, p.p, p.len);
	}
	if (p.oom || file.oom) {
		fprintf(stderr, "gentrace: out of memory\n");
		return 1;
	}
	if (out && !(fout = fopen(out, "wb"))) {
		perror(out);
		return 1;
	}
	if (file.len && fwrite(file.p, 1, file.len, fout) != file.len) {
		perror(out ? out : "stdout");
		return 1;
	}
	if (fclose(fout)) {
		perror(out ? out : "stdout");
		return 1;
	}
	free(line);
	wbuf_free(&p);
	wbuf_free(&file);
	return 0;
}
