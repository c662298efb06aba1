/* Unit tests of the two offline passes (userspace/convert/convert.c,
 * input.c, snapshots.c, sync_info.c) on small trace files: the choice of
 * the trace clock and the default clock, rejected snapshots, packets
 * inside compressed_packets, a file recorded on a remote machine, the
 * trailer of a synced file (its drops by machine, and where an earlier
 * trailer's go), and input errors with their offsets. */
#include "convert/convert.h"
#include "trace/sync_info.h"
#include "util/wire.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#define BOOT BTR_CLOCK_BOOTTIME
#define MONO BTR_CLOCK_MONOTONIC

static char tmpdir[64];

/* What the second pass gave: sort keys of the kept packets, in order. */
struct got {
	int64_t key[64];
	size_t n, dropped, trailers;
};

static int collect(void *ctx, const struct input_packet *p,
		   const struct rewritten *res)
{
	struct got *g = ctx;

	(void)p;
	if (res->sync_info)
		g->trailers++;
	else if (res->dropped)
		g->dropped++;
	else if (g->n < 64)
		g->key[g->n++] = res->key;
	return 0;
}

/* A trace being built: packets framed as Trace.packet. */
static void frame(struct wbuf *file, const struct wbuf *pkt)
{
	wbuf_put(file, "\x0a", 1);
	wbuf_varint(file, pkt->len);
	wbuf_put(file, pkt->p, pkt->len);
}

/* snapshot {BOOT: boot, MONO: mono} on sequence 1, primary if nonzero. */
static void snapshot(struct wbuf *file, uint64_t boot, uint64_t mono,
		     uint32_t primary, uint32_t machine)
{
	struct wbuf p = { 0 };
	size_t m = wbuf_begin_len(&p, 6), c;

	c = wbuf_begin_len(&p, 1);
	wbuf_field_varint(&p, 1, BOOT);
	wbuf_field_varint(&p, 2, boot);
	wbuf_end_len(&p, c);
	c = wbuf_begin_len(&p, 1);
	wbuf_field_varint(&p, 1, MONO);
	wbuf_field_varint(&p, 2, mono);
	wbuf_end_len(&p, c);
	if (primary)
		wbuf_field_varint(&p, 2, primary);
	wbuf_end_len(&p, m);
	wbuf_field_varint(&p, 10, 1);
	if (machine)
		wbuf_field_varint(&p, 98, machine);
	frame(file, &p);
	wbuf_free(&p);
}

/* A packet at ts on clock (0: none), on machine (0: none). */
static void packet(struct wbuf *file, uint64_t ts, uint32_t clock,
		   uint32_t machine)
{
	struct wbuf p = { 0 };

	wbuf_field_varint(&p, 8, ts);
	if (clock)
		wbuf_field_varint(&p, 58, clock);
	wbuf_field_varint(&p, 10, 2);
	if (machine)
		wbuf_field_varint(&p, 98, machine);
	wbuf_field_bytes(&p, 1000, "payload", 7);
	frame(file, &p);
	wbuf_free(&p);
}

static const char *write_file(const char *name, const struct wbuf *b)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f))
		abort();
	return path;
}

/* Both passes on path, leaving in and tl open; returns the first
 * non-zero result. */
static int run_open(const char *path, uint32_t trace_clock, struct input *in,
		    struct timeline *tl, struct got *g, struct sync_stats *st)
{
	struct input *inputs[1] = { in }, *failed = NULL;
	int rc;

	memset(g, 0, sizeof(*g));
	memset(st, 0, sizeof(*st));
	if (input_open(in, path, 0) || timeline_init(tl))
		abort();
	rc = convert_prepare(inputs, 1, trace_clock, tl, st, &failed);
	if (!rc)
		rc = convert_input(in, tl, st, false, collect, g);
	return rc;
}

/* Both passes on path; returns the first non-zero result. */
static int run(const char *path, uint32_t trace_clock, struct got *g,
	       struct sync_stats *st, uint32_t *clock_used, char *err,
	       size_t errlen)
{
	struct input in;
	struct timeline tl;
	int rc = run_open(path, trace_clock, &in, &tl, g, st);

	if (clock_used)
		*clock_used = tl.trace_clock.clock_id;
	if (err)
		snprintf(err, errlen, "%s", in.err);
	timeline_free(&tl);
	input_close(&in);
	return rc;
}

static void test_trace_clock_choice(void)
{
	struct wbuf f = { 0 };
	struct sync_stats st;
	struct got g;
	uint32_t clock = 0;

	/* no snapshot: BOOTTIME, unlabelled times kept as they are */
	packet(&f, 500, 0, 0);
	CHECK(run(write_file("none.pb", &f), 0, &g, &st, &clock, NULL, 0) == 0);
	CHECK_EQ_I64(clock, BOOT);
	CHECK(g.n == 1 && g.key[0] == 500);
	/* ...but a MONOTONIC one has nothing to convert with */
	packet(&f, 500, MONO, 0);
	CHECK(run(write_file("none.pb", &f), 0, &g, &st, &clock, NULL, 0) == 0);
	CHECK_EQ_I64(g.dropped, 1);
	CHECK_EQ_I64(st.stat[SYNC_STAT_UNKNOWN_SOURCE], 1);
	/* the first snapshot naming a clock decides, for the trace clock
	 * and for unlabelled packets; a later different one is ignored */
	f.len = 0;
	packet(&f, 4100, 0, 0);
	snapshot(&f, 10000, 4000, MONO, 0);
	snapshot(&f, 20000, 14000, BOOT, 0);
	packet(&f, 10500, BOOT, 0);
	CHECK(run(write_file("prim.pb", &f), 0, &g, &st, &clock, NULL, 0) == 0);
	CHECK_EQ_I64(clock, MONO);
	CHECK(g.n == 4 && g.key[0] == 4100 && g.key[1] == 4000 &&
	      g.key[2] == 14000 && g.key[3] == 4500);
	/* asked for BOOTTIME: unlabelled packets are still MONOTONIC */
	CHECK(run(write_file("prim.pb", &f), BOOT, &g, &st, &clock, NULL, 0) ==
	      0);
	CHECK_EQ_I64(clock, BOOT);
	CHECK(g.n == 4 && g.key[0] == 10100 && g.key[3] == 10500);
	wbuf_free(&f);
}

static void test_invalid_snapshots(void)
{
	struct wbuf f = { 0 }, p = { 0 };
	struct sync_stats st;
	struct got g;
	size_t m, c;
	int i;

	/* {BOOT, clock 300, BOOT}: the same clock twice, rejected whole */
	m = wbuf_begin_len(&p, 6);
	for (i = 0; i < 3; i++) {
		c = wbuf_begin_len(&p, 1);
		wbuf_field_varint(&p, 1, i == 1 ? 300 : BOOT);
		wbuf_field_varint(&p, 2, 1000 + (uint64_t)i);
		wbuf_end_len(&p, c);
	}
	wbuf_end_len(&p, m);
	frame(&f, &p);
	/* {clock 70} on sequence 0: a sequence-scoped clock without one */
	p.len = 0;
	m = wbuf_begin_len(&p, 6);
	c = wbuf_begin_len(&p, 1);
	wbuf_field_varint(&p, 1, 70);
	wbuf_end_len(&p, c);
	wbuf_end_len(&p, m);
	frame(&f, &p);
	/* an empty snapshot is fine and says nothing */
	p.len = 0;
	wbuf_field_bytes(&p, 6, "", 0);
	frame(&f, &p);
	packet(&f, 1500, 300, 0);
	CHECK(run(write_file("invalid.pb", &f), 0, &g, &st, NULL, NULL, 0) ==
	      0);
	CHECK_EQ_I64(st.stat[SYNC_STAT_INVALID_SNAPSHOTS], 2);
	CHECK_EQ_I64(g.dropped, 1); /* clock 300 never became known */
	CHECK_EQ_I64(st.stat[SYNC_STAT_UNKNOWN_SOURCE], 1);
	CHECK_EQ_I64(g.n, 3); /* the snapshots themselves are kept */
	wbuf_free(&f);
	wbuf_free(&p);
}

/* compressed_packets: the packets inside come out one by one. */
static void test_compressed_packets(void)
{
	struct wbuf inner = { 0 }, f = { 0 }, p = { 0 };
	struct sync_stats st;
	struct got g;
	uLongf zlen;
	Bytef *z;
	char err[512];

	snapshot(&inner, 10000, 4000, 0, 0);
	packet(&inner, 4500, MONO, 0);
	packet(&inner, 4700, MONO, 0);
	zlen = compressBound(inner.len);
	z = malloc(zlen);
	CHECK(compress(z, &zlen, inner.p, inner.len) == Z_OK);
	packet(&f, 20000, 0, 0);
	wbuf_field_bytes(&p, 50, z, zlen);
	wbuf_field_varint(&p, 10, 1);
	frame(&f, &p);
	packet(&f, 10600, 0, 0);
	CHECK(run(write_file("zip.pb", &f), 0, &g, &st, NULL, err,
		  sizeof(err)) == 0);
	CHECK_EQ_I64(st.packets_in, 5);
	CHECK(g.n == 5 && g.key[1] == 10000 && g.key[2] == 10500 &&
	      g.key[3] == 10700 && g.key[4] == 10600);
	/* corrupt deflate data names the enclosing record */
	z[zlen / 2] ^= 0x55;
	z[zlen / 2 + 1] ^= 0xaa;
	p.len = 0;
	wbuf_field_bytes(&p, 50, z, zlen);
	f.len = 0;
	packet(&f, 20000, 0, 0);
	frame(&f, &p);
	CHECK(run(write_file("zip.pb", &f), 0, &g, &st, NULL, err,
		  sizeof(err)) == CONVERT_INPUT_ERROR);
	CHECK(strstr(err, "zip.pb: offset 18: corrupt compressed_packets"));
	/* zstd is refused */
	p.len = 0;
	wbuf_field_bytes(&p, 133, "zz", 2);
	f.len = 0;
	frame(&f, &p);
	CHECK(run(write_file("zstd.pb", &f), 0, &g, &st, NULL, err,
		  sizeof(err)) == CONVERT_INPUT_ERROR);
	CHECK(strstr(err, "zstd.pb: offset 0: zstd_compressed_packets are "
		     "not supported"));
	free(z);
	wbuf_free(&inner);
	wbuf_free(&f);
	wbuf_free(&p);
}

/* A file whose first packet is on machine 7 was recorded there: machine 7
 * is its own. Packets of another machine have their own clocks. */
static void test_machines(void)
{
	struct wbuf f = { 0 };
	struct sync_stats st;
	struct got g;

	snapshot(&f, 10000, 4000, 0, 7);
	packet(&f, 4500, MONO, 7);
	packet(&f, 4600, MONO, 0);
	CHECK(run(write_file("remote.pb", &f), 0, &g, &st, NULL, NULL, 0) ==
	      0);
	CHECK(g.n == 3 && g.key[1] == 10500 && g.key[2] == 10600);
	f.len = 0;
	snapshot(&f, 10000, 4000, 0, 0);
	packet(&f, 4500, MONO, 9); /* machine 9 has no snapshot */
	packet(&f, 10200, 0, 9);   /* its BOOTTIME: taken as the host's */
	packet(&f, 4600, MONO, 0);
	CHECK(run(write_file("two.pb", &f), 0, &g, &st, NULL, NULL, 0) == 0);
	CHECK_EQ_I64(g.dropped, 1);
	CHECK_EQ_I64(st.stat[SYNC_STAT_UNKNOWN_SOURCE], 1);
	CHECK(g.n == 3 && g.key[1] == 10200 && g.key[2] == 10600);
	wbuf_free(&f);
}

/* The trailer: written, read back, recognised by the passes. */
static void test_trailer(void)
{
	struct sync_stats st = { 0 }, back = { 0 };
	struct wbuf t = { 0 }, f = { 0 };
	struct packet_info info;
	struct timeline tl;
	const char *why;
	uint32_t clock = 0;
	struct got g;

	st.stat[SYNC_STAT_NO_PATH] = 3;
	st.stat[SYNC_STAT_NEGATIVE] = 1;
	CHECK(timeline_init(&tl) == 0);
	timeline_set_trace_clock(&tl, MONO);
	sync_info_build(&t, &tl, &st);
	timeline_free(&tl);
	CHECK(packet_info_read(t.p, t.len, &info, &why) == 0);
	CHECK(info.sync_info != NULL);
	CHECK(sync_info_read(info.sync_info, info.sync_info_len, &clock,
			     &back));
	CHECK_EQ_I64(clock, MONO);
	CHECK_EQ_I64(back.stat[SYNC_STAT_NO_PATH], 3);
	CHECK_EQ_I64(back.stat[SYNC_STAT_NEGATIVE], 1);
	CHECK_EQ_I64(back.stat[SYNC_STAT_UNKNOWN_SOURCE], 0);
	/* a synced file's trailer is passed on, not counted */
	packet(&f, 100, 0, 0);
	frame(&f, &t);
	CHECK(run(write_file("trailer.pb", &f), 0, &g, &st, NULL, NULL, 0) ==
	      0);
	CHECK_EQ_I64(g.trailers, 1);
	CHECK_EQ_I64(st.packets_in, 1);
	wbuf_free(&t);
	wbuf_free(&f);
}

/* The Stats of a trailer as "name@machine_id=value" lines. */
struct stat_lines {
	char text[1024];
	size_t len;
};

static void stat_line(void *ctx, const struct sync_info_stat *s)
{
	struct stat_lines *l = ctx;
	int n = snprintf(l->text + l->len, sizeof(l->text) - l->len,
			 "%.*s@%u=%llu\n", (int)s->name_len, s->name,
			 s->machine_id, (unsigned long long)s->value);

	if (n > 0 && (size_t)n < sizeof(l->text) - l->len)
		l->len += (size_t)n;
}

/* The Stats of the trailer tl and st make. */
static const char *trailer_lines(const struct timeline *tl,
				 const struct sync_stats *st,
				 struct stat_lines *l)
{
	struct wbuf t = { 0 };
	struct packet_info info;
	const char *why;

	memset(l, 0, sizeof(*l));
	sync_info_build(&t, tl, st);
	if (packet_info_read(t.p, t.len, &info, &why) || !info.sync_info)
		abort();
	sync_info_each_machine_stat(info.sync_info, info.sync_info_len,
				    stat_line, l);
	wbuf_free(&t);
	return l->text;
}

/* The drops of each machine in the trailer, under the machine's output id;
 * an earlier trailer's go to the machines its ids name in its file. */
static void test_trailer_machines(void)
{
	struct wbuf f = { 0 }, t = { 0 };
	struct sync_stats st, back = { 0 };
	struct packet_info info;
	struct stat_lines l;
	struct timeline tl;
	struct input in;
	const char *why;
	uint32_t clock;
	struct got g;

	snapshot(&f, 10000, 4000, 0, 0);
	packet(&f, 4500, MONO, 9); /* no snapshot on machine 9: dropped */
	packet(&f, 4600, MONO, 9);
	packet(&f, 4700, 200, 0);  /* clock 200 unknown on the host */
	packet(&f, 4800, MONO, 0);
	CHECK(run_open(write_file("m.pb", &f), 0, &in, &tl, &g, &st) == 0);
	CHECK_EQ_I64(g.dropped, 3);
	CHECK_EQ_I64(st.stat[SYNC_STAT_UNKNOWN_SOURCE], 3);
	CHECK_EQ_I64(st.stat[SYNC_STAT_PACKET_LOSS], 3);
	/* machine 9 keeps its id; the global stat has no machine */
	st.stat[SYNC_STAT_NEGATIVE] = 4;
	CHECK_STR(trailer_lines(&tl, &st, &l),
		  "clock_sync_failure_unknown_source_clock@0=1\n"
		  "clock_sync_failure_unknown_source_clock@9=2\n"
		  "trace_sorter_negative_timestamp_dropped@0=4\n"
		  "clock_sync_failure_undeferrable_packet_loss@0=1\n"
		  "clock_sync_failure_undeferrable_packet_loss@9=2\n");
	/* read back: totals whatever the machine */
	sync_info_build(&t, &tl, &st);
	CHECK(packet_info_read(t.p, t.len, &info, &why) == 0);
	CHECK(sync_info_read(info.sync_info, info.sync_info_len, &clock,
			     &back));
	CHECK_EQ_I64(back.stat[SYNC_STAT_UNKNOWN_SOURCE], 3);
	CHECK_EQ_I64(back.stat[SYNC_STAT_PACKET_LOSS], 3);
	CHECK_EQ_I64(back.stat[SYNC_STAT_NEGATIVE], 4);
	/* re-sync: the earlier trailer's machine 9 is this file's machine 9
	 * again; its totals come with the input (prior) */
	sync_info_read_machines(info.sync_info, info.sync_info_len, &in.scan.fm,
				&tl);
	sync_stats_add(&st, &back);
	CHECK_STR(trailer_lines(&tl, &st, &l),
		  "clock_sync_failure_unknown_source_clock@0=2\n"
		  "clock_sync_failure_unknown_source_clock@9=4\n"
		  "trace_sorter_negative_timestamp_dropped@0=8\n"
		  "clock_sync_failure_undeferrable_packet_loss@0=2\n"
		  "clock_sync_failure_undeferrable_packet_loss@9=4\n");
	timeline_free(&tl);
	input_close(&in);
	wbuf_free(&t);
	wbuf_free(&f);
}

/* An earlier trailer's machine the file has no packet of falls on the
 * file's own machine, as such a packet would; the others on theirs. */
static void test_trailer_unknown_machine(void)
{
	struct wbuf f = { 0 }, s = { 0 };
	struct sync_stats st;
	struct packet_info info;
	struct stat_lines l;
	struct timeline tl;
	struct input in;
	const char *why;
	struct got g;
	size_t m, k;

	uint32_t id;

	snapshot(&f, 10000, 4000, 0, 0);
	packet(&f, 4500, MONO, 0);
	packet(&f, 10100, 0, 9);
	CHECK(run_open(write_file("u.pb", &f), 0, &in, &tl, &g, &st) == 0);
	CHECK_EQ_I64(g.dropped, 0);
	/* a BtrSyncInfo with no_path 5 on machine 3, 2 on machine 9 */
	m = wbuf_begin_len(&s, SYNC_INFO_FIELD);
	for (id = 3; id <= 9; id += 6) {
		k = wbuf_begin_len(&s, 2);
		wbuf_field_bytes(&s, 1, "clock_sync_failure_no_path", 26);
		wbuf_field_varint(&s, 2, id == 3 ? 5 : 2);
		wbuf_field_varint(&s, 3, id);
		wbuf_end_len(&s, k);
	}
	wbuf_end_len(&s, m);
	CHECK(packet_info_read(s.p, s.len, &info, &why) == 0);
	sync_info_read_machines(info.sync_info, info.sync_info_len, &in.scan.fm,
				&tl);
	st.stat[SYNC_STAT_NO_PATH] = 7;
	CHECK_STR(trailer_lines(&tl, &st, &l),
		  "clock_sync_failure_no_path@0=5\n"
		  "clock_sync_failure_no_path@9=2\n");
	timeline_free(&tl);
	input_close(&in);
	wbuf_free(&s);
	wbuf_free(&f);
}

static void test_input_errors(void)
{
	struct wbuf f = { 0 }, p = { 0 };
	struct sync_stats st;
	struct got g;
	char err[512], path[128];

	snprintf(path, sizeof(path), "%s/missing.pb", tmpdir);
	{
		struct input in;

		CHECK(input_open(&in, path, 0) == 0);
		CHECK(input_scan(&in) == -1);
		CHECK(strstr(in.err, "missing.pb: No such file"));
		input_close(&in);
	}
	packet(&f, 1, 0, 0);
	wbuf_field_bytes(&p, 6, "\x0a\x02\x08", 3); /* clock cut short */
	frame(&f, &p);
	CHECK(run(write_file("badsnap.pb", &f), 0, &g, &st, NULL, err,
		  sizeof(err)) == CONVERT_INPUT_ERROR);
	CHECK(strstr(err, "badsnap.pb: offset 16: malformed"));
	wbuf_free(&f);
	wbuf_free(&p);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_sync.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_trace_clock_choice);
	RUN(test_invalid_snapshots);
	RUN(test_compressed_packets);
	RUN(test_machines);
	RUN(test_trailer);
	RUN(test_trailer_machines);
	RUN(test_trailer_unknown_machine);
	RUN(test_input_errors);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return unit_finish();
}
