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
#include "dump/sched_state.h"
#include "perfetto/trace.pb-c.h"
#include "trace/reader.h"
#include "unit.h"
#include "util/log.h"

static char tmpdir[64];
static char path_buf[4][256];

/* ---- building input ---------------------------------------------------- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
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
	b.cap = b.len + 1;
	b.p = malloc(b.cap);
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
static const char *expected_at(const char *path, uint64_t off, const char *what)
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
	const char *path = write_file(0, "empty.pb", &file);
	struct trace_reader *r = open_ok(path);

	/* no packets: not a trace, refused at offset 0, and it stays so */
	expect_result(r, TRACE_READ_ERROR);
	CHECK(strstr(trace_reader_error(r), "offset 0: empty file, not a trace"));
	CHECK(strstr(trace_reader_error(r), "empty.pb"));
	expect_result(r, TRACE_READ_ERROR);
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
		  expected_at(path, 2 + a.len + 2, "truncated record at end of "
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
		  expected_at(path, file.len,
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
		CHECK(strstr(trace_reader_error(r),
			     ": read error: corrupt gzip data (") != NULL);
	}
	trace_reader_close(r);
	free(a.p), free(big.p), free(file.p), free(raw.p);
}

/* One file = one good packet, then `tail`, a record cut short; expects a
 * truncated tail at its offset, then the end. */
static void expect_tail(const char *name, const void *tail, size_t n,
			const char *what)
{
	struct bytes a = ts_packet(1), file = { 0 };
	struct trace_reader *r;
	const char *path;
	char msg[128];

	snprintf(msg, sizeof(msg), "truncated record at end of file (%s)", what);
	put_record(&file, &a);
	put(&file, tail, n);
	path = write_file(0, name, &file);
	r = open_ok(path);
	expect_packet(r, &a, 0);
	expect_result(r, TRACE_READ_TRUNCATED);
	CHECK_STR(trace_reader_error(r), expected_at(path, 2 + a.len, msg));
	expect_result(r, TRACE_READ_END);
	trace_reader_close(r);
	free(a.p), free(file.p);
}

static void test_truncated_tail(void)
{
	/* Payload cut short: 10 bytes declared, 3 present. */
	expect_tail("tail.pb", "\x0a\x0a" "abc", 5,
		    "10 bytes declared, 3 left");
	/* Cut inside the length varint. */
	expect_tail("tail2.pb", "\x0a\x80", 2, "length cut short");
	/* Cut after a lone tag byte. */
	expect_tail("tail3.pb", "\x0a", 1, "length cut short");
	/* A foreign field cut short is a truncated tail too. */
	expect_tail("tail4.pb", "\x19\x01\x02", 3, "value cut short");
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
	CHECK_STR(trace_reader_error(r), expected_at(path, 2 + a.len, what));
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
		   "length varint overflows 64 bits");
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
		  expected_at("<stdin>", 2 + a.len, "truncated record at end of "
			 "file (payload cut short)"));
	trace_reader_close(r);
	dup2(saved, STDIN_FILENO);
	close(saved);
	free(a.p), free(file.p);
}

/* A reader on a descriptor, from where it stands: the bytes before are
 * not the trace's; the name given is the one messages use. */
static void test_open_fd(void)
{
	struct bytes a = ts_packet(7), file = { 0 };
	struct trace_reader *r;
	char err[256] = "";
	int fd;

	put(&file, "junk", 4);
	put_record(&file, &a);
	put(&file, "\x0a\x10", 2); /* 16 bytes declared, none there */
	fd = open(write_file(0, "fd.pb", &file), O_RDONLY);
	CHECK(fd >= 0 && lseek(fd, 4, SEEK_SET) == 4);
	r = trace_reader_open_fd(fd, "label:member", err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_STR(trace_reader_name(r), "label:member");
		expect_packet(r, &a, 0);
		expect_result(r, TRACE_READ_TRUNCATED);
		CHECK_STR(trace_reader_error(r),
			  expected_at("label:member", 2 + a.len,
				      "truncated record at end of file "
				      "(payload cut short)"));
		trace_reader_close(r);
	}
	/* a bad descriptor: an error naming it, nothing leaked */
	CHECK(trace_reader_open_fd(-1, "nothing", err, sizeof(err)) == NULL);
	CHECK(strncmp(err, "nothing: ", 9) == 0);
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
	log_verbosity = -1; /* no warnings in the test log; errors stay */
	rc = cmd_dump(argc, argv);
	log_verbosity = 0;
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

/* Splits out's first line off: returns it, out moves to the next one. */
static char *next_line(char **out)
{
	char *line = *out, *nl = line ? strchr(line, '\n') : NULL;

	if (!nl)
		return NULL;
	*nl = '\0';
	*out = nl + 1;
	return line;
}

static void test_dump_json(void)
{
	const char *path = build_sched_trace();
	char *out = NULL, *rest;

	CHECK_EQ_I64(run_dump(path, "--json", &out), EXIT_OK);
	rest = out;
	CHECK_STR(next_line(&rest),
		  "{\"ts\":500,\"cpu\":null,\"kind\":\"clock_snapshot\","
		  "\"primary\":\"BOOTTIME\",\"BOOTTIME\":500,"
		  "\"REALTIME\":1700000000000000000,\"clock64\":9}");
	CHECK_STR(next_line(&rest),
		  "{\"ts\":1000000000100,\"cpu\":0,\"kind\":\"sched_switch\","
		  "\"prev_pid\":null,\"prev_comm\":null,\"prev_state\":0,"
		  "\"prev_state_str\":\"R\",\"next_pid\":100,"
		  "\"next_comm\":\"foo bar\",\"next_prio\":120,"
		  "\"compact\":true}");
	CHECK_STR(next_line(&rest),
		  "{\"ts\":1000000000200,\"cpu\":0,\"kind\":\"task_newtask\","
		  "\"pid\":101,\"comm\":\"sh\",\"clone_flags\":4001536,"
		  "\"oom_score_adj\":0,\"parent_pid\":100}");
	CHECK(strstr(rest, "{\"ts\":1000000000010,\"cpu\":1,\"kind\":"
		      "\"lost_events\"}\n") != NULL);
	CHECK(strstr(rest, "\"comm\":\"b\xc3\xa9\"") != NULL);
	free(out);
}

/* A rename on the CPU where the task runs gives the next compact switch's
 * prev_comm the new name; a rename seen on another CPU changes nothing. */
static void test_sched_state_rename(void)
{
	struct sched_state st = { 0 };

	sched_state_switch(&st, 0, 42, "old");
	sched_state_switch(&st, 2, 7, "other");
	CHECK(sched_state_current(&st, 1) == NULL);
	sched_state_rename(&st, 2, 42, "elsewhere");
	CHECK_STR(sched_state_current(&st, 0)->comm, "old");
	sched_state_rename(&st, 0, 42, "new");
	sched_state_rename(&st, 0, 1234, "nobody");
	sched_state_rename(&st, 9, 42, "no such cpu");
	CHECK_STR(sched_state_current(&st, 0)->comm, "new");
	CHECK_EQ_I64(sched_state_current(&st, 0)->pid, 42);
	CHECK_STR(sched_state_current(&st, 2)->comm, "other");
	sched_state_free(&st);
}

static void test_prev_state_letters(void)
{
	static const struct {
		int64_t v;
		const char *s;
	} cases[] = {
		{ 0, "R" }, { 0x100, "R+" }, { 1, "S" }, { 2, "D" },
		{ 4, "T" }, { 8, "t" }, { 0x10, "X" }, { 0x20, "Z" },
		{ 0x40, "P" }, { 0x80, "I" }, { 0x101, "S+" }, { 0x12, "DX" },
		{ 0x200, "?" }, { -1, "?" }, { 0x10000, "R" },
	};
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(sched_state_letters(cases[i].v, buf), cases[i].s);
}

/* Every other packet kind, regular ftrace events, and value escaping. */
static const char *build_kinds_trace(void)
{
	typedef Perfetto__Protos__TracePacket Packet;
	struct bytes file = { 0 };
	Packet p;
	/* process tree */
	Perfetto__Protos__ProcessTree pt = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	Perfetto__Protos__ProcessTree__Process pr =
		PERFETTO__PROTOS__PROCESS_TREE__PROCESS__INIT;
	Perfetto__Protos__ProcessTree__Thread th =
		PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT;
	Perfetto__Protos__ProcessTree__Process *prs[1] = { &pr };
	Perfetto__Protos__ProcessTree__Thread *ths[1] = { &th };
	char *cmdline[2] = { "/bin/a b", "-x" };
	/* system info, uuid */
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;
	Perfetto__Protos__TraceUuid uu = PERFETTO__PROTOS__TRACE_UUID__INIT;
	/* stats */
	Perfetto__Protos__FtraceStats fs = PERFETTO__PROTOS__FTRACE_STATS__INIT;
	Perfetto__Protos__FtraceCpuStats fcs =
		PERFETTO__PROTOS__FTRACE_CPU_STATS__INIT;
	Perfetto__Protos__FtraceCpuStats *fcss[1] = { &fcs };
	Perfetto__Protos__TraceStats ts = PERFETTO__PROTOS__TRACE_STATS__INIT;
	Perfetto__Protos__TraceStats__BufferStats bs =
		PERFETTO__PROTOS__TRACE_STATS__BUFFER_STATS__INIT;
	Perfetto__Protos__TraceStats__BufferStats *bss[1] = { &bs };
	Perfetto__Protos__TraceStats__WriterStats ws =
		PERFETTO__PROTOS__TRACE_STATS__WRITER_STATS__INIT;
	Perfetto__Protos__TraceStats__WriterStats *wss[1] = { &ws };
	Perfetto__Protos__TracingServiceEvent se =
		PERFETTO__PROTOS__TRACING_SERVICE_EVENT__INIT;
	/* ftrace: one of each regular event, then a compact switch */
	Perfetto__Protos__FtraceEventBundle b =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	Perfetto__Protos__FtraceEvent ev[9], *evp[9];
	Perfetto__Protos__SchedSwitchFtraceEvent sw =
		PERFETTO__PROTOS__SCHED_SWITCH_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedWakingFtraceEvent wk =
		PERFETTO__PROTOS__SCHED_WAKING_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedWakeupNewFtraceEvent wn =
		PERFETTO__PROTOS__SCHED_WAKEUP_NEW_FTRACE_EVENT__INIT;
	Perfetto__Protos__TaskRenameFtraceEvent rn =
		PERFETTO__PROTOS__TASK_RENAME_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedProcessForkFtraceEvent fk =
		PERFETTO__PROTOS__SCHED_PROCESS_FORK_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedProcessExecFtraceEvent ex =
		PERFETTO__PROTOS__SCHED_PROCESS_EXEC_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedProcessExitFtraceEvent et =
		PERFETTO__PROTOS__SCHED_PROCESS_EXIT_FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedProcessFreeFtraceEvent fr =
		PERFETTO__PROTOS__SCHED_PROCESS_FREE_FTRACE_EVENT__INIT;
	/* protobuf-c keeps an unknown LEN field's data with its length. */
	ProtobufCMessageUnknownField unk = {
		13, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, 3,
		(uint8_t *)"\x02\x08\x01"
	};
	uint64_t c_ts[1] = { 2000 };
	int64_t c_state[1] = { 0x80 };
	int32_t c_pid[1] = { 9 }, c_prio[1] = { 100 };
	uint32_t c_comm[1] = { 0 };
	char *table[1] = { "z" };
	size_t i;

	perfetto__protos__trace_packet__init(&p);
	p.has_timestamp = 1;
	p.timestamp = 5;
	pr.has_pid = pr.has_ppid = pr.has_uid = 1;
	pr.pid = 10, pr.ppid = 1, pr.uid = 1000;
	pr.n_cmdline = 2;
	pr.cmdline = cmdline;
	th.has_tid = th.has_tgid = 1;
	th.tid = 11, th.tgid = 10;
	th.name = "a=b\\c\t";
	pt.n_processes = pt.n_threads = 1;
	pt.processes = prs;
	pt.threads = ths;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
	p.process_tree = &pt;
	add_packet(&file, &p);

	perfetto__protos__trace_packet__init(&p);
	un.sysname = "Linux", un.release = "6.1.0", un.version = "#1 SMP";
	un.machine = "x86_64";
	si.utsname = &un;
	si.has_num_cpus = si.has_page_size = 1;
	si.num_cpus = 4, si.page_size = 4096;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO;
	p.system_info = &si;
	add_packet(&file, &p);

	uu.has_msb = uu.has_lsb = 1;
	uu.msb = 0x0123456789abcdefll, uu.lsb = -1;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_UUID;
	p.trace_uuid = &uu;
	add_packet(&file, &p);

	fs.has_phase = 1;
	fs.phase = PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE;
	fs.n_cpu_stats = 1;
	fs.cpu_stats = fcss;
	fcs.has_cpu = fcs.has_overrun = fcs.has_dropped_events = 1;
	fcs.has_read_events = fcs.has_entries = 1;
	fcs.cpu = 1, fcs.overrun = 2, fcs.dropped_events = 3;
	fcs.read_events = 4, fcs.entries = 5;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS;
	p.ftrace_stats = &fs;
	add_packet(&file, &p);

	bs.has_bytes_written = bs.has_chunks_overwritten = 1;
	bs.bytes_written = 100, bs.chunks_overwritten = 2;
	ws.has_sequence_id = 1;
	ws.sequence_id = 3;
	ts.n_buffer_stats = ts.n_writer_stats = 1;
	ts.buffer_stats = bss;
	ts.writer_stats = wss;
	ts.has_flushes_requested = ts.has_final_flush_outcome = 1;
	ts.flushes_requested = 1;
	ts.final_flush_outcome =
		PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_SUCCEEDED;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS;
	p.trace_stats = &ts;
	add_packet(&file, &p);

	p.has_timestamp = 1;
	p.timestamp = 9;
	se.event_type_case =
		PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_DISABLED;
	se.tracing_disabled = 1;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SERVICE_EVENT;
	p.service_event = &se;
	add_packet(&file, &p);

	/* Payloads we do not model: sys_stats (7), field 15. */
	put(&file, "\x0a\x08\x40\x07\x3a\x00\x7a\x00\x3a\x00", 10);

	for (i = 0; i < 9; i++) {
		perfetto__protos__ftrace_event__init(&ev[i]);
		ev[i].has_timestamp = ev[i].has_pid = 1;
		ev[i].timestamp = 1000 + 10 * (9 - i); /* file order reversed */
		ev[i].pid = 6;
		evp[i] = &ev[i];
	}
	sw.has_prev_pid = sw.has_prev_state = sw.has_next_pid = 1;
	sw.has_next_prio = 1;
	sw.prev_pid = 5, sw.prev_comm = "a", sw.prev_state = 0x100;
	sw.next_pid = 6, sw.next_comm = "b", sw.next_prio = 120;
	ev[8].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	ev[8].sched_switch = &sw;
	ev[8].pid = 5;
	wk.pid = 7, wk.comm = "c", wk.prio = 100, wk.target_cpu = 3;
	wk.has_pid = wk.has_prio = wk.has_target_cpu = 1;
	ev[7].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKING;
	ev[7].sched_waking = &wk;
	wn.pid = 8, wn.comm = "d", wn.prio = 120, wn.target_cpu = 0;
	wn.has_pid = wn.has_prio = wn.has_target_cpu = 1;
	ev[6].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW;
	ev[6].sched_wakeup_new = &wn;
	rn.has_pid = 1;
	rn.pid = 8, rn.oldcomm = "d", rn.newcomm = "e";
	ev[5].event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME;
	ev[5].task_rename = &rn;
	fk.has_parent_pid = fk.has_child_pid = 1;
	fk.parent_pid = 6, fk.parent_comm = "b", fk.child_pid = 8;
	fk.child_comm = "b";
	ev[4].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK;
	ev[4].sched_process_fork = &fk;
	ex.has_pid = ex.has_old_pid = 1;
	ex.pid = 8, ex.old_pid = 8, ex.filename = "/bin/e";
	ev[3].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC;
	ev[3].sched_process_exec = &ex;
	et.has_pid = et.has_tgid = et.has_prio = 1;
	et.pid = 8, et.tgid = 8, et.comm = "e", et.prio = 120;
	ev[2].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT;
	ev[2].sched_process_exit = &et;
	fr.has_pid = fr.has_prio = 1;
	fr.pid = 8, fr.comm = "e", fr.prio = 120;
	ev[1].event_case =
		PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE;
	ev[1].sched_process_free = &fr;
	ev[0].has_pid = 0; /* an event we do not model, e.g. cpu_idle */
	ev[0].base.n_unknown_fields = 1;
	ev[0].base.unknown_fields = &unk;
	cs.n_switch_timestamp = cs.n_switch_prev_state = 1;
	cs.n_switch_next_pid = cs.n_switch_next_prio = 1;
	cs.n_switch_next_comm_index = cs.n_intern_table = 1;
	cs.switch_timestamp = c_ts, cs.switch_prev_state = c_state;
	cs.switch_next_pid = c_pid, cs.switch_next_prio = c_prio;
	cs.switch_next_comm_index = c_comm, cs.intern_table = table;
	b.has_cpu = 1;
	b.cpu = 2;
	b.n_event = 9;
	b.event = evp;
	b.compact_sched = &cs;
	perfetto__protos__trace_packet__init(&p);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &b;
	add_packet(&file, &p);
	write_file(3, "kinds.pb", &file);
	free(file.p);
	return path_buf[3];
}

static void test_dump_kinds(void)
{
	const char *want =
		"5 - process pid=10 ppid=1 uid=1000 cmdline=/bin/a\\x20b\\x20-x\n"
		"5 - thread tid=11 tgid=10 name=a\\x3db\\x5cc\\x09\n"
		"- - system_info sysname=Linux release=6.1.0 "
		"version=#1\\x20SMP machine=x86_64 num_cpus=4 page_size=4096 "
		"machine_name=\n"
		"- - trace_uuid uuid=01234567-89ab-cdef-ffff-ffffffffffff "
		"msb=81985529216486895 lsb=-1\n"
		"- - ftrace_stats phase=END\n"
		"- 1 ftrace_cpu_stats overrun=2 dropped_events=3 read_events=4 "
		"entries=5 commit_overrun=0 bytes_read=0\n"
		"- - trace_stats buffers=1 flushes_requested=1 "
		"flushes_succeeded=0 flushes_failed=0 invalid_packets=0 "
		"final_flush_outcome=SUCCEEDED service_chunks_discarded=0 "
		"writer_seqs=3 buffer_size=0 bytes_written=100 "
		"bytes_overwritten=0 bytes_read=0 padding_bytes_written=0 "
		"padding_bytes_cleared=0 chunks_written=0 chunks_rewritten=0 "
		"chunks_overwritten=2 chunks_discarded=0 chunks_read=0 "
		"chunks_committed_out_of_order=0 write_wrap_count=0 "
		"patches_succeeded=0 patches_failed=0 readaheads_succeeded=0 "
		"readaheads_failed=0 abi_violations=0 "
		"trace_writer_packet_loss=0\n"
		"9 - service_event tracing_disabled\n"
		"7 - unknown_packet fields=7,15\n"
		"1010 2 sched_switch prev_pid=5 prev_comm=a prev_state=256(R+) "
		"next_pid=6 next_comm=b next_prio=120\n"
		"1020 2 sched_waking pid=7 comm=c prio=100 target_cpu=3 "
		"waker_pid=6\n"
		"1030 2 sched_wakeup_new pid=8 comm=d prio=120 target_cpu=0\n"
		"1040 2 task_rename pid=8 oldcomm=d newcomm=e\n"
		"1050 2 sched_process_fork parent_pid=6 parent_comm=b "
		"child_pid=8 child_comm=b\n"
		"1060 2 sched_process_exec pid=8 old_pid=8 filename=/bin/e\n"
		"1070 2 sched_process_exit pid=8 tgid=8 comm=e prio=120\n"
		"1080 2 sched_process_free pid=8 comm=e prio=120\n"
		"1090 2 unknown_event pid=? fields=13\n"
		"2000 2 sched_switch prev_pid=6 prev_comm=b prev_state=128(I) "
		"next_pid=9 next_comm=z next_prio=100 compact=1\n";
	const char *path = build_kinds_trace();
	char *out = NULL, *rest, *line;

	CHECK_EQ_I64(run_dump(path, NULL, &out), EXIT_OK);
	CHECK_STR(out, want);
	free(out);

	CHECK_EQ_I64(run_dump(path, "--json", &out), EXIT_OK);
	rest = out;
	CHECK_STR(next_line(&rest),
		  "{\"ts\":5,\"cpu\":null,\"kind\":\"process\",\"pid\":10,"
		  "\"ppid\":1,\"uid\":1000,\"cmdline\":[\"/bin/a b\",\"-x\"]}");
	CHECK_STR(next_line(&rest),
		  "{\"ts\":5,\"cpu\":null,\"kind\":\"thread\",\"tid\":11,"
		  "\"tgid\":10,\"name\":\"a=b\\\\c\\t\"}");
	while ((line = next_line(&rest)) && !strstr(line, "service_event"))
		;
	CHECK_STR(line, "{\"ts\":9,\"cpu\":null,\"kind\":\"service_event\","
			"\"tracing_disabled\":true}");
	CHECK_STR(next_line(&rest),
		  "{\"ts\":7,\"cpu\":null,\"kind\":\"unknown_packet\","
		  "\"fields\":[7,15]}");
	while ((line = next_line(&rest)) && !strstr(line, "unknown_event"))
		;
	CHECK_STR(line, "{\"ts\":1090,\"cpu\":2,\"kind\":\"unknown_event\","
			"\"pid\":null,\"fields\":[13]}");
	free(out);
}

static void test_dump_config(void)
{
	struct bytes file = { 0 };
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceConfig tc = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[1] = { &buf };
	Perfetto__Protos__TraceConfig__DataSource ds[2] = {
		PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT,
		PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT,
	};
	Perfetto__Protos__TraceConfig__DataSource *dss[2] = { &ds[0], &ds[1] };
	Perfetto__Protos__DataSourceConfig dc[2] = {
		PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT,
		PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT,
	};
	Perfetto__Protos__FtraceConfig fc = PERFETTO__PROTOS__FTRACE_CONFIG__INIT;
	Perfetto__Protos__FtraceConfig__CompactSchedConfig csc =
		PERFETTO__PROTOS__FTRACE_CONFIG__COMPACT_SCHED_CONFIG__INIT;
	char *events[2] = { "sched/sched_switch", "task/task_newtask" };
	char *out = NULL;

	buf.has_size_kb = buf.has_fill_policy = 1;
	buf.size_kb = 1024;
	buf.fill_policy =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD;
	dc[0].name = "linux.ftrace";
	dc[0].ftrace_config = &fc;
	dc[1].name = "linux.process_stats";
	ds[0].config = &dc[0];
	ds[1].config = &dc[1];
	fc.n_ftrace_events = 2;
	fc.ftrace_events = events;
	fc.compact_sched = &csc;
	csc.has_enabled = csc.enabled = 1;
	tc.n_buffers = 1;
	tc.buffers = bufs;
	tc.n_data_sources = 2;
	tc.data_sources = dss;
	tc.has_write_into_file = tc.write_into_file = 1;
	tc.has_flush_period_ms = 1;
	tc.flush_period_ms = 100;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG;
	p.trace_config = &tc;
	add_packet(&file, &p);
	CHECK_EQ_I64(run_dump(write_file(0, "config.pb", &file), NULL, &out),
		     EXIT_OK);
	CHECK_STR(out, "- - trace_config buffers=1 buffer0_size_kb=1024 "
		       "buffer0_fill_policy=DISCARD "
		       "data_sources=linux.ftrace,linux.process_stats "
		       "write_into_file=1 flush_period_ms=100 "
		       "ftrace_events=sched/sched_switch,task/task_newtask "
		       "compact_sched=1\n");
	free(out);
	free(file.p);
}

/* Compact arrays of unequal length, and a comm index past the table:
 * decoded up to where they are consistent, as trace_processor does. */
static void test_dump_compact_errors(void)
{
	struct bytes file = { 0 };
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle b =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	uint64_t ts[3] = { 100, 1, 1 };
	int64_t state[3] = { 0, 0, 0 };
	int32_t pid[3] = { 1, 2, 3 }, prio[3] = { 120, 120, 120 };
	uint32_t comm[3] = { 0, 0, 0 }, bad_comm[1] = { 1 };
	char *table[1] = { "x" };
	char *out = NULL;

	cs.n_switch_timestamp = 3, cs.switch_timestamp = ts;
	cs.n_switch_prev_state = 3, cs.switch_prev_state = state;
	cs.n_switch_next_pid = 2, cs.switch_next_pid = pid;
	cs.n_switch_next_prio = 3, cs.switch_next_prio = prio;
	cs.n_switch_next_comm_index = 3, cs.switch_next_comm_index = comm;
	cs.n_waking_timestamp = 1, cs.waking_timestamp = ts;
	cs.n_waking_pid = 1, cs.waking_pid = pid;
	cs.n_waking_target_cpu = 1, cs.waking_target_cpu = pid;
	cs.n_waking_prio = 1, cs.waking_prio = prio;
	cs.n_waking_comm_index = 1, cs.waking_comm_index = bad_comm;
	cs.n_intern_table = 1, cs.intern_table = table;
	b.compact_sched = &cs;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &b; /* and no cpu */
	add_packet(&file, &p);
	CHECK_EQ_I64(run_dump(write_file(0, "compact.pb", &file), NULL, &out),
		     EXIT_OK);
	CHECK_STR(out, "100 - sched_switch prev_pid=? prev_comm=? "
		       "prev_state=0(R) next_pid=1 next_comm=x next_prio=120 "
		       "compact=1\n"
		       "101 - sched_switch prev_pid=? prev_comm=? "
		       "prev_state=0(R) next_pid=2 next_comm=x next_prio=120 "
		       "compact=1\n");
	free(out);
	free(file.p);
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
	RUN(test_open_fd);
	RUN(test_open_errors);
	RUN(test_dump_text);
	RUN(test_dump_json);
	RUN(test_prev_state_letters);
	RUN(test_sched_state_rename);
	RUN(test_dump_kinds);
	RUN(test_dump_config);
	RUN(test_dump_compact_errors);
	RUN(test_dump_corrupt);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return unit_finish();
}
