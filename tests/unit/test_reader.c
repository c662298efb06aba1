/* Unit tests of the trace reader (framing, foreign fields, gzip, truncated
 * and hostile input) and of `dump` on small traces built with protobuf-c. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "commands.h"
#include "perfetto/trace.pb-c.h"
#include "trace/reader.h"
#include "unit.h"

static char tmpdir[64];
static char path_buf[4][256];

/* ---- building input ---------------------------------------------------- */

struct bytes {
	uint8_t *p;
	size_t len;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	if (!b->p)
		abort();
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_byte(struct bytes *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_varint(struct bytes *b, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(b, (uint8_t)v);
}

/* Appends a framed record holding `pkt` (field 1, length-delimited). */
static void put_record(struct bytes *b, const struct bytes *pkt)
{
	put_byte(b, 0x0a);
	put_varint(b, pkt->len);
	put(b, pkt->p, pkt->len);
}

static struct bytes pack_packet(const Perfetto__Protos__TracePacket *p)
{
	struct bytes b = { 0 };

	b.len = perfetto__protos__trace_packet__get_packed_size(p);
	b.p = malloc(b.len + 1);
	if (!b.p)
		abort();
	perfetto__protos__trace_packet__pack(p, b.p);
	return b;
}

/* A small packet carrying only a timestamp. */
static struct bytes ts_packet(uint64_t ts)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	p.has_timestamp = 1;
	p.timestamp = ts;
	return pack_packet(&p);
}

static const char *write_file(int slot, const char *name, const struct bytes *b)
{
	FILE *f;

	snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", tmpdir, name);
	f = fopen(path_buf[slot], "wb");
	if (!f)
		abort();
	if (b->len)
		fwrite(b->p, 1, b->len, f);
	fclose(f);
	return path_buf[slot];
}

static const char *write_gzip(int slot, const char *name, const struct bytes *b)
{
	gzFile gz;

	snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", tmpdir, name);
	gz = gzopen(path_buf[slot], "wb");
	if (!gz)
		abort();
	if (b->len)
		gzwrite(gz, b->p, (unsigned)b->len);
	gzclose(gz);
	return path_buf[slot];
}

/* The reader's message expected for `path` at `off`. */
static const char *msg_at(const char *path, uint64_t off, const char *what)
{
	static char m[512];

	snprintf(m, sizeof(m), "%s: offset %" PRIu64 ": %s", path, off, what);
	return m;
}

/* ---- reader ------------------------------------------------------------ */

/* Reads the next packet and checks it is `want` at `want_off`. */
static void expect_packet(struct trace_reader *r, const struct bytes *want,
			  uint64_t want_off)
{
	const uint8_t *pkt = NULL;
	size_t len = 0;
	uint64_t off = 0;

	CHECK_EQ_I64(trace_reader_next(r, &pkt, &len, &off), TRACE_READ_PACKET);
	CHECK_EQ_I64(len, want->len);
	CHECK_EQ_I64(off, want_off);
	CHECK(pkt && len == want->len && memcmp(pkt, want->p, len) == 0);
}

static void expect_result(struct trace_reader *r, int want)
{
	const uint8_t *pkt;
	size_t len;
	uint64_t off;

	CHECK_EQ_I64(trace_reader_next(r, &pkt, &len, &off), want);
}

static struct trace_reader *open_ok(const char *path)
{
	char err[256] = "";
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));

	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "open: %s\n", err);
		exit(1);
	}
	return r;
}

static void test_normal_packets(void)
{
	struct bytes a = ts_packet(1), b = ts_packet(1000000000123ull);
	struct bytes c = { 0 }, file = { 0 };
	struct trace_reader *r;
	size_t i;

	/* c is bigger than a read chunk and needs a 3-byte length. */
	for (i = 0; i < 300000; i++)
		put_byte(&c, (uint8_t)i);
	put_record(&file, &a);
	put_record(&file, &b);
	put_record(&file, &c);
	r = open_ok(write_file(0, "normal.pb", &file));
	expect_packet(r, &a, 0);
	expect_packet(r, &b, 2 + a.len);
	expect_packet(r, &c, 4 + a.len + b.len);
	expect_result(r, TRACE_READ_END);
	expect_result(r, TRACE_READ_END);
	CHECK_STR(trace_reader_error(r), "");
	CHECK_STR(trace_reader_name(r), path_buf[0]);
	trace_reader_close(r);
	free(a.p), free(b.p), free(c.p), free(file.p);
}

static void test_empty_file(void)
{
	struct bytes file = { 0 };
	struct trace_reader *r = open_ok(write_file(0, "empty.pb", &file));

	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);
}

static void test_foreign_fields(void)
{
	struct bytes a = ts_packet(7), b = ts_packet(8), file = { 0 };
	struct trace_reader *r;
	uint64_t off_b;
	size_t i;

	put_record(&file, &a);
	put_byte(&file, 0x10);			/* field 2, varint */
	put_varint(&file, UINT64_MAX);		/* 10-byte value */
	put_byte(&file, 0x19);			/* field 3, 64-bit */
	put(&file, "12345678", 8);
	put_byte(&file, 0x22);			/* field 4, length-delimited */
	put_varint(&file, 200000);		/* longer than a read chunk */
	for (i = 0; i < 200000; i++)
		put_byte(&file, 0x0a);
	put_byte(&file, 0x2d);			/* field 5, 32-bit */
	put(&file, "1234", 4);
	put_byte(&file, 0x08);			/* field 1 as a varint */
	put_byte(&file, 0x05);
	put_varint(&file, (1000u << 3) | 2);	/* field 1000, 2-byte tag */
	put_byte(&file, 0);
	off_b = file.len;
	put_record(&file, &b);
	r = open_ok(write_file(0, "foreign.pb", &file));
	expect_packet(r, &a, 0);
	expect_packet(r, &b, off_b);
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);
	free(a.p), free(b.p), free(file.p);
}

static void test_zero_length_records(void)
{
	struct bytes a = ts_packet(7), b = ts_packet(8), file = { 0 };
	struct trace_reader *r;

	put(&file, "\x0a\x00\x0a\x00", 4);
	put_record(&file, &a);
	put(&file, "\x0a\x00", 2);
	put_record(&file, &b);
	put(&file, "\x0a\x00", 2);
	r = open_ok(write_file(0, "zero.pb", &file));
	expect_packet(r, &a, 4);
	expect_packet(r, &b, 4 + 2 + a.len + 2);
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);
	free(a.p), free(b.p), free(file.p);
}

static void test_gzip(void)
{
	struct bytes a = ts_packet(1), big = { 0 }, file = { 0 }, raw = { 0 };
	struct trace_reader *r;
	const char *path;
	struct stat st;
	size_t i;

	for (i = 0; i < 1000000; i++)
		put_byte(&big, (uint8_t)(i * 7));
	put_record(&file, &a);
	put(&file, "\x0a\x00", 2);
	put_record(&file, &big);
	put_record(&file, &a);
	path = write_gzip(0, "trace.pb.gz", &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_packet(r, &big, 2 + a.len + 2);
	expect_packet(r, &a, 2 + a.len + 2 + 4 + big.len);
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);

	/* The same file cut in the middle of the big packet. */
	CHECK(stat(path, &st) == 0);
	raw.p = malloc((size_t)st.st_size);
	{
		FILE *f = fopen(path, "rb");

		CHECK(f && fread(raw.p, 1, (size_t)st.st_size, f) ==
			      (size_t)st.st_size);
		if (f)
			fclose(f);
	}
	raw.len = (size_t)st.st_size / 2;
	path = write_file(1, "cut.pb.gz", &raw);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, 2 + a.len + 2, "truncated record at end of "
			 "gzip stream (payload cut short)"));
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);

	/* Cut inside the gzip trailer: every packet is there. */
	raw.len = (size_t)st.st_size - 4;
	path = write_file(1, "notrailer.pb.gz", &raw);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_packet(r, &big, 2 + a.len + 2);
	expect_packet(r, &a, 2 + a.len + 2 + 4 + big.len);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, file.len,
			 "gzip stream ends without its trailer"));
	trace_reader_close(r);

	/* Corrupt deflate data is an error, not a truncation. */
	raw.len = (size_t)st.st_size;
	for (i = 20; i < 60; i++)
		raw.p[i] ^= 0x5a;
	path = write_file(1, "corrupt.pb.gz", &raw);
	r = open_ok(path);
	{
		const uint8_t *pkt;
		size_t len;
		uint64_t off;
		int rc;

		while ((rc = trace_reader_next(r, &pkt, &len, &off)) ==
		       TRACE_READ_PACKET)
			;
		CHECK_EQ_I64(rc, TRACE_READ_ERROR);
		CHECK(strstr(trace_reader_error(r), "read error: ") != NULL);
	}
	trace_reader_close(r);
	free(a.p), free(big.p), free(file.p), free(raw.p);
}

static void test_truncated_tail(void)
{
	struct bytes a = ts_packet(1), file = { 0 };
	struct trace_reader *r;
	const char *path;

	/* Payload cut short: 10 bytes declared, 3 present. */
	put_record(&file, &a);
	put(&file, "\x0a\x0a" "abc", 5);
	path = write_file(0, "tail.pb", &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, 2 + a.len, "truncated record at end of file "
			 "(10 bytes declared, 3 left)"));
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);

	/* Cut inside the length varint. */
	file.len = 2 + a.len;
	put(&file, "\x0a\x80", 2);
	path = write_file(0, "tail2.pb", &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, 2 + a.len, "truncated record at end of file "
			 "(length cut short)"));
	trace_reader_close(r);

	/* Cut after a lone tag byte. */
	file.len = 2 + a.len;
	put_byte(&file, 0x0a);
	path = write_file(0, "tail3.pb", &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, 2 + a.len, "truncated record at end of file "
			 "(length cut short)"));
	trace_reader_close(r);

	/* A foreign field cut short is a truncated tail too. */
	file.len = 2 + a.len;
	put(&file, "\x19\x01\x02", 3);
	path = write_file(0, "tail4.pb", &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at(path, 2 + a.len, "truncated record at end of file "
			 "(value cut short)"));
	trace_reader_close(r);
	free(a.p), free(file.p);
}

/* One file = one good packet, then `bad`; expects an error at its offset. */
static void expect_bad(const char *name, const void *bad, size_t n,
		       const char *what)
{
	struct bytes a = ts_packet(1), file = { 0 };
	struct trace_reader *r;
	const char *path;

	put_record(&file, &a);
	put(&file, bad, n);
	put_record(&file, &a);
	path = write_file(0, name, &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_ERROR);
	CHECK_STR(trace_reader_error(r), msg_at(path, 2 + a.len, what));
	expect_result(r, TRACE_READ_ERROR);	/* sticky */
	trace_reader_close(r);
	free(a.p), free(file.p);
}

static void test_hostile(void)
{
	expect_bad("longvarint.pb",
		   "\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12,
		   "length varint longer than 10 bytes");
	expect_bad("overflow.pb",
		   "\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", 11,
		   "length varint longer than 10 bytes");
	expect_bad("len2p63.pb",
		   "\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11,
		   "record length 9223372036854775808 exceeds the limit of "
		   "268435456 bytes");
	expect_bad("len256m.pb", "\x0a\x81\x80\x80\x80\x01", 6,
		   "record length 268435457 exceeds the limit of "
		   "268435456 bytes");
	expect_bad("foreignlen.pb", "\x12\xff\xff\xff\xff\x0f", 6,
		   "record length 4294967295 exceeds the limit of "
		   "268435456 bytes");
	expect_bad("wt3.pb", "\x0b", 1, "field 1 has invalid wire type 3");
	expect_bad("wt4.pb", "\x0c", 1, "field 1 has invalid wire type 4");
	expect_bad("wt6.pb", "\x16", 1, "field 2 has invalid wire type 6");
	expect_bad("wt7.pb", "\xff\x01", 2, "field 31 has invalid wire type 7");
	expect_bad("field0.pb", "\x02\x00", 2, "invalid field number 0");
	expect_bad("longtag.pb",
		   "\x8a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11,
		   "field tag varint longer than 10 bytes");
	expect_bad("longval.pb",
		   "\x10\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 12,
		   "value varint longer than 10 bytes");
}

/* A declared length within the limit but past the end of a pipe. */
static void test_stdin(void)
{
	struct bytes a = ts_packet(5), file = { 0 };
	struct trace_reader *r;
	int saved = dup(STDIN_FILENO), fd;

	put_record(&file, &a);
	put(&file, "\x0a\xff\xff\xff\x7f" "xy", 7);	/* 256 MiB - 1 */
	fd = open(write_gzip(0, "stdin.pb.gz", &file), O_RDONLY);
	CHECK(fd >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO);
	close(fd);
	r = open_ok("-");
	CHECK_STR(trace_reader_name(r), "<stdin>");
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r),
		  msg_at("<stdin>", 2 + a.len, "truncated record at end of "
			 "file (payload cut short)"));
	trace_reader_close(r);
	dup2(saved, STDIN_FILENO);
	close(saved);
	free(a.p), free(file.p);
}

static void test_open_errors(void)
{
	char err[256] = "";
	char path[128];

	snprintf(path, sizeof(path), "%s/missing.pb", tmpdir);
	CHECK(trace_reader_open(path, err, sizeof(err)) == NULL);
	CHECK(strstr(err, path) == err);
	CHECK(strstr(err, ": No such file or directory") != NULL);
	CHECK(trace_reader_open(tmpdir, err, sizeof(err)) == NULL);
	CHECK(strstr(err, ": Is a directory") != NULL);
}

/* ---- dump -------------------------------------------------------------- */

/* Runs `dump` with args on `path`, stdout captured; returns the status and
 * the output in out (caller frees). */
static int run_dump(const char *path, const char *opt, char **out)
{
	char outpath[256];
	char *argv[4] = { "dump", (char *)path, (char *)opt, NULL };
	int argc = opt ? 3 : 2, saved, fd, rc;
	FILE *f;
	long n;

	snprintf(outpath, sizeof(outpath), "%s/dump.out", tmpdir);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	rc = cmd_dump(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	f = fopen(outpath, "rb");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*out = calloc(1, (size_t)n + 1);
	if (fread(*out, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	unlink(outpath);
	return rc;
}

static void add_packet(struct bytes *file, Perfetto__Protos__TracePacket *p)
{
	struct bytes b = pack_packet(p);

	put_record(file, &b);
	free(b.p);
}

/* A bundle for `cpu` with a compact part and regular events. */
static void add_sched_bundle(struct bytes *file, uint32_t cpu, bool lost,
			     size_t n_sw, uint64_t *sw_ts, int64_t *sw_state,
			     int32_t *sw_pid, uint32_t *sw_comm,
			     size_t n_wk, uint64_t *wk_ts, int32_t *wk_pid,
			     uint32_t *wk_comm, char **table, size_t n_table,
			     size_t n_ev, Perfetto__Protos__FtraceEvent **ev)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle b =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	int32_t prio[8] = { 120, 120, 120, 120, 120, 120, 120, 120 };
	int32_t tcpu[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };

	b.has_cpu = 1;
	b.cpu = cpu;
	b.has_lost_events = lost;
	b.lost_events = lost;
	cs.n_switch_timestamp = cs.n_switch_prev_state = n_sw;
	cs.n_switch_next_pid = cs.n_switch_next_prio = n_sw;
	cs.n_switch_next_comm_index = n_sw;
	cs.switch_timestamp = sw_ts;
	cs.switch_prev_state = sw_state;
	cs.switch_next_pid = sw_pid;
	cs.switch_next_prio = prio;
	cs.switch_next_comm_index = sw_comm;
	cs.n_waking_timestamp = cs.n_waking_pid = n_wk;
	cs.n_waking_target_cpu = cs.n_waking_prio = n_wk;
	cs.n_waking_comm_index = n_wk;
	cs.waking_timestamp = wk_ts;
	cs.waking_pid = wk_pid;
	cs.waking_target_cpu = tcpu;
	cs.waking_prio = prio;
	cs.waking_comm_index = wk_comm;
	cs.intern_table = table;
	cs.n_intern_table = n_table;
	b.compact_sched = &cs;
	b.n_event = n_ev;
	b.event = ev;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &b;
	add_packet(file, &p);
}

static const char *build_sched_trace(void)
{
	struct bytes file = { 0 };
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs =
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[3] = {
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
	};
	Perfetto__Protos__ClockSnapshot__Clock *cp[3] = { &c[0], &c[1], &c[2] };
	Perfetto__Protos__FtraceEvent e1 = PERFETTO__PROTOS__FTRACE_EVENT__INIT;
	Perfetto__Protos__TaskNewtaskFtraceEvent nt =
		PERFETTO__PROTOS__TASK_NEWTASK_FTRACE_EVENT__INIT;
	Perfetto__Protos__FtraceEvent *ev[1] = { &e1 };
	char *table[] = { "swapper/0", "foo bar", "sh" };
	/* bundle 1: T, T+1000, T+1500 ; waking at T+200 */
	uint64_t sw_ts[3] = { 1000000000100ull, 1000, 500 };
	int64_t sw_state[3] = { 0, 1, 0x100 };
	int32_t sw_pid[3] = { 100, 0, 101 };
	uint32_t sw_comm[3] = { 1, 0, 2 };
	uint64_t wk_ts[1] = { 1000000000300ull };
	int32_t wk_pid[1] = { 101 };
	uint32_t wk_comm[1] = { 2 };
	/* bundle 2 on CPU 1: a switch with no known prev; a waking */
	uint64_t sw2_ts[1] = { 1000000000050ull };
	int64_t sw2_state[1] = { 2 };
	int32_t sw2_pid[1] = { 7 };
	uint32_t sw2_comm[1] = { 0 };
	uint64_t wk2_ts[1] = { 1000000000010ull };
	int32_t wk2_pid[1] = { 8 };
	uint32_t wk2_comm[1] = { 1 };
	char *table2[] = { "kworker/1:0", "b\xc3\xa9" };

	c[0].has_clock_id = c[1].has_clock_id = c[2].has_clock_id = 1;
	c[0].clock_id = 6, c[1].clock_id = 1, c[2].clock_id = 64;
	c[0].has_timestamp = c[1].has_timestamp = c[2].has_timestamp = 1;
	c[0].timestamp = 500, c[1].timestamp = 1700000000000000000ull;
	c[2].timestamp = 9;
	cs.n_clocks = 3;
	cs.clocks = cp;
	cs.has_primary_trace_clock = 1;
	cs.primary_trace_clock = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	add_packet(&file, &p);

	e1.has_timestamp = 1;
	e1.timestamp = 1000000000200ull;
	e1.has_pid = 1;
	e1.pid = 100;
	e1.event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK;
	e1.task_newtask = &nt;
	nt.has_pid = nt.has_clone_flags = 1;
	nt.pid = 101;
	nt.comm = "sh";
	nt.clone_flags = 0x3d0f00;
	add_sched_bundle(&file, 0, false, 3, sw_ts, sw_state, sw_pid, sw_comm,
			 1, wk_ts, wk_pid, wk_comm, table, 3, 1, ev);
	add_sched_bundle(&file, 1, true, 1, sw2_ts, sw2_state, sw2_pid,
			 sw2_comm, 1, wk2_ts, wk2_pid, wk2_comm, table2, 2,
			 0, NULL);
	/* Trailing garbage after the good packets: a torn record. */
	put(&file, "\x0a\x05\x08", 3);
	write_file(2, "sched.pb", &file);
	free(file.p);
	return path_buf[2];
}

static void test_dump_text(void)
{
	const char *path = build_sched_trace();
	char *out = NULL;
	const char *want =
		"500 - clock_snapshot primary=BOOTTIME BOOTTIME=500 "
		"REALTIME=1700000000000000000 clock64=9\n"
		"1000000000100 0 sched_switch prev_pid=? prev_comm=? "
		"prev_state=0(R) next_pid=100 next_comm=foo\\x20bar "
		"next_prio=120 compact=1\n"
		"1000000000200 0 task_newtask pid=101 comm=sh "
		"clone_flags=0x3d0f00 oom_score_adj=0 parent_pid=100\n"
		"1000000000300 0 sched_waking pid=101 comm=sh prio=120 "
		"target_cpu=1 waker_pid=100 compact=1\n"
		"1000000001100 0 sched_switch prev_pid=100 "
		"prev_comm=foo\\x20bar prev_state=1(S) next_pid=0 "
		"next_comm=swapper/0 next_prio=120 compact=1\n"
		"1000000001600 0 sched_switch prev_pid=0 prev_comm=swapper/0 "
		"prev_state=256(R+) next_pid=101 next_comm=sh next_prio=120 "
		"compact=1\n"
		"1000000000010 1 lost_events\n"
		"1000000000010 1 sched_waking pid=8 comm=b\\xc3\\xa9 prio=120 "
		"target_cpu=1 waker_pid=? compact=1\n"
		"1000000000050 1 sched_switch prev_pid=? prev_comm=? "
		"prev_state=2(D) next_pid=7 next_comm=kworker/1:0 "
		"next_prio=120 compact=1\n";

	CHECK_EQ_I64(run_dump(path, NULL, &out), EXIT_OK);
	CHECK_STR(out, want);
	free(out);
}

static void test_dump_json(void)
{
	const char *path = build_sched_trace();
	char *out = NULL, *line2;

	CHECK_EQ_I64(run_dump(path, "--json", &out), EXIT_OK);
	line2 = strchr(out, '\n');
	CHECK(line2 != NULL);
	if (!line2)
		goto out;
	*line2++ = '\0';
	CHECK_STR(out, "{\"ts\":500,\"cpu\":null,\"kind\":\"clock_snapshot\","
		       "\"primary\":\"BOOTTIME\",\"BOOTTIME\":500,"
		       "\"REALTIME\":1700000000000000000,\"clock64\":9}");
	CHECK(strncmp(line2, "{\"ts\":1000000000100,\"cpu\":0,\"kind\":"
		      "\"sched_switch\",\"prev_pid\":null,\"prev_comm\":null,"
		      "\"prev_state\":0,\"prev_state_str\":\"R\","
		      "\"next_pid\":100,\"next_comm\":\"foo bar\","
		      "\"next_prio\":120,\"compact\":true}\n", 180) == 0);
	CHECK(strstr(line2, "\"comm\":\"b\xc3\xa9\"") != NULL);
out:
	free(out);
}

static void test_dump_corrupt(void)
{
	struct bytes file = { 0 }, a = ts_packet(42);
	char *out = NULL;
	const char *path;

	put_record(&file, &a);
	put(&file, "\x0a\x02\x08\x80", 4);	/* varint runs off the end */
	put_record(&file, &a);
	path = write_file(0, "corrupt.pb", &file);
	CHECK_EQ_I64(run_dump(path, NULL, &out), EXIT_FAIL);
	CHECK_STR(out, "42 - empty_packet\n");
	free(out);
	free(a.p), free(file.p);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_reader.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_normal_packets);
	RUN(test_empty_file);
	RUN(test_foreign_fields);
	RUN(test_zero_length_records);
	RUN(test_gzip);
	RUN(test_truncated_tail);
	RUN(test_hostile);
	RUN(test_stdin);
	RUN(test_open_errors);
	RUN(test_dump_text);
	RUN(test_dump_json);
	RUN(test_dump_corrupt);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return unit_finish();
}
