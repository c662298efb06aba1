/* Unit tests of the trace file writer (output/file_writer.c): framing of
 * each packet as Trace field 1, whole records only after a write error
 * (provoked with RLIMIT_FSIZE), the max_bytes limit, and how the file is
 * opened (truncated, 0600, no symlinks) and discarded. Everything happens
 * in a mkdtemp directory that is removed at the end. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/file_writer.h"
#include "unit.h"

static char dir[64];

static char *path_in(const char *name)
{
	static char p[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void fill(uint8_t *b, size_t len, uint32_t seed)
{
	size_t j;

	for (j = 0; j < len; j++)
		b[j] = (uint8_t)(seed * 131 + j * 7 + (j >> 8));
}

static int put(struct file_writer *w, size_t len, uint32_t seed)
{
	uint8_t *b = malloc(len ? len : 1);
	int e;

	if (!b)
		abort();
	fill(b, len, seed);
	e = sink_write(&w->sink, 1, b, len);
	free(b);
	return e;
}

/* The whole file, or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	b = malloc((size_t)st.st_size + 1);
	if (b && read(fd, b, (size_t)st.st_size) != st.st_size) {
		free(b);
		b = NULL;
	}
	close(fd);
	*len = b ? (size_t)st.st_size : 0;
	return b;
}

/* Walks a file of records: the number of records if it is made only of
 * whole records (0x0A, varint length, bytes) whose payloads are those
 * put() wrote with seeds 0, 1, 2, ... and lengths lens[]; else -1. */
static long walk(const uint8_t *b, size_t n, const size_t *lens, size_t nlens)
{
	size_t off = 0;
	long k = 0;

	while (off < n) {
		uint64_t len = 0;
		unsigned shift = 0;
		uint8_t *want;
		bool same;

		if (b[off++] != 0x0A)
			return -1;
		do {
			if (off >= n || shift > 63)
				return -1;
			len |= (uint64_t)(b[off] & 0x7f) << shift;
			shift += 7;
		} while (b[off++] & 0x80);
		if (len > n - off || (size_t)k >= nlens || len != lens[k])
			return -1;
		want = malloc(len ? len : 1);
		if (!want)
			abort();
		fill(want, len, (uint32_t)k);
		same = !memcmp(want, b + off, len);
		free(want);
		if (!same)
			return -1;
		off += len;
		k++;
	}
	return k;
}

static long walk_file(const char *path, const size_t *lens, size_t nlens,
		      size_t *size)
{
	size_t n;
	uint8_t *b = slurp(path, &n);
	long k = b ? walk(b, n, lens, nlens) : -1;

	*size = n;
	free(b);
	return k;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void test_framing(void)
{
	static const size_t lens[] = { 0, 1, 127, 128, 300, 16383, 16384,
				       200000, 5 };
	const size_t nl = sizeof(lens) / sizeof(lens[0]);
	const char *p = path_in("framing.pb");
	struct file_writer w;
	size_t i, total = 0, size, n;
	uint8_t *b;

	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	CHECK(w.created);
	for (i = 0; i < nl; i++) {
		CHECK_EQ_I64(put(&w, lens[i], (uint32_t)i), 0);
		total += 1 + varint_len(lens[i]) + lens[i];
	}
	CHECK_EQ_I64(w.packets, nl);
	CHECK_EQ_I64(file_writer_bytes(&w), total);
	CHECK_EQ_I64(file_writer_close(&w), 0);
	CHECK_EQ_I64(walk_file(p, lens, nl, &size), nl);
	CHECK_EQ_I64(size, total);
	/* the exact bytes of the first records */
	b = slurp(p, &n);
	CHECK(b && n > 140);
	if (b && n > 140) {
		CHECK(!memcmp(b, "\x0A\x00\x0A\x01", 4));
		CHECK_EQ_I64(b[5], 0x0A);
		CHECK_EQ_I64(b[6], 127);
		CHECK_EQ_I64(b[134], 0x0A);
		CHECK_EQ_I64(b[135], 0x80);
		CHECK_EQ_I64(b[136], 0x01);
	}
	free(b);
	unlink(p);
}

/* More than the 1 MiB buffer, and one packet larger than it. */
static void test_large(void)
{
	size_t lens[300], i, total = 0, size;
	const char *p = path_in("large.pb");
	struct file_writer w;

	for (i = 0; i < 300; i++)
		lens[i] = i == 150 ? (3u << 20) : 1000 + i * 37;
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	for (i = 0; i < 300; i++) {
		CHECK_EQ_I64(put(&w, lens[i], (uint32_t)i), 0);
		total += 1 + varint_len(lens[i]) + lens[i];
	}
	CHECK_EQ_I64(file_writer_bytes(&w), total);
	CHECK_EQ_I64(file_writer_flush(&w), 0);
	CHECK_EQ_I64(w.committed, total);
	CHECK_EQ_I64(file_writer_close(&w), 0);
	CHECK_EQ_I64(walk_file(p, lens, 300, &size), 300);
	CHECK_EQ_I64(size, total);
	unlink(p);
}

/* RLIMIT_FSIZE at `limit` bytes: the flush fails part-way (EFBIG) and the
 * file must end at the last whole record. `before` records are flushed
 * before the limit is set. */
static void fsize_case(off_t limit, size_t before, size_t plen, size_t nrec,
		       size_t want_records)
{
	const char *p = path_in("fsize.pb");
	size_t *lens = calloc(nrec, sizeof(size_t)), i, size;
	struct rlimit old, lim;
	struct file_writer w;
	uint64_t rec = 1 + varint_len(plen) + plen;
	int e;

	for (i = 0; i < nrec; i++)
		lens[i] = plen;
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	for (i = 0; i < before; i++)
		CHECK_EQ_I64(put(&w, plen, (uint32_t)i), 0);
	CHECK_EQ_I64(file_writer_flush(&w), 0);
	for (; i < nrec; i++)
		CHECK_EQ_I64(put(&w, plen, (uint32_t)i), 0);
	CHECK_EQ_I64(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)limit;
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &lim), 0);
	e = file_writer_flush(&w);
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &old), 0);
	CHECK_EQ_I64(e, -EFBIG);
	CHECK_EQ_I64(w.err, -EFBIG);
	CHECK_EQ_I64(w.committed, want_records * rec);
	CHECK_EQ_I64(file_writer_bytes(&w), want_records * rec);
	CHECK_EQ_I64(lseek(w.fd, 0, SEEK_CUR), (off_t)(want_records * rec));
	/* the error sticks */
	CHECK_EQ_I64(put(&w, 10, 99), -EFBIG);
	CHECK_EQ_I64(file_writer_flush(&w), -EFBIG);
	CHECK_EQ_I64(file_writer_close(&w), -EFBIG);
	CHECK_EQ_I64(walk_file(p, lens, nrec, &size), want_records);
	CHECK_EQ_I64(size, want_records * rec);
	unlink(p);
	free(lens);
}

static void test_write_error_whole_records(void)
{
	const off_t r = 203; /* 200-byte packets: 0x0A, C8 01, 200 bytes */

	signal(SIGXFSZ, SIG_IGN);
	fsize_case(3 * r, 0, 200, 10, 3);       /* at a boundary */
	fsize_case(3 * r + 1, 0, 200, 10, 3);   /* after the tag */
	fsize_case(3 * r + 2, 0, 200, 10, 3);   /* inside the varint */
	fsize_case(3 * r + 3, 0, 200, 10, 3);   /* after the varint */
	fsize_case(3 * r + 100, 0, 200, 10, 3); /* inside the payload */
	fsize_case(4 * r - 1, 0, 200, 10, 3);   /* one byte short */
	fsize_case(100, 0, 200, 10, 0);         /* not even one */
	fsize_case(5 * r + 50, 2, 200, 10, 5);  /* after a good flush */
	fsize_case(2 * r, 2, 200, 10, 2);       /* nothing more fits */
	signal(SIGXFSZ, SIG_DFL);
}

/* Several buffers' worth: the error comes from the flush inside a write
 * (the 1 MiB buffer holds 10 records of 100004 bytes). */
static void test_write_error_in_write(void)
{
	const char *p = path_in("fsize2.pb");
	const uint64_t rec = 100004;
	size_t lens[40], i, size, ok = 0;
	struct rlimit old, lim;
	struct file_writer w;
	int e = 0;

	signal(SIGXFSZ, SIG_IGN);
	for (i = 0; i < 40; i++)
		lens[i] = 100000;
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	CHECK_EQ_I64(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 25 * rec - 7;
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 0; i < 40; i++) {
		e = put(&w, 100000, (uint32_t)i);
		if (e)
			break;
		ok++;
	}
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	CHECK_EQ_I64(e, -EFBIG);
	CHECK_EQ_I64(ok, 30); /* the 31st write flushed records 21..30 */
	CHECK_EQ_I64(w.committed, 24 * rec);
	CHECK_EQ_I64(put(&w, 10, 99), -EFBIG);
	CHECK_EQ_I64(file_writer_close(&w), -EFBIG);
	CHECK_EQ_I64(walk_file(p, lens, 40, &size), 24);
	CHECK_EQ_I64(size, 24 * rec);
	unlink(p);
}

/* max_bytes: the file ends at the last whole packet under the limit. */
static void limit_case(uint64_t max, size_t want)
{
	const char *p = path_in("limit.pb");
	size_t lens[10], i, size, ok = 0;
	struct file_writer w;
	int e = 0;

	for (i = 0; i < 10; i++)
		lens[i] = 100; /* records of 102 bytes */
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	w.max_bytes = max;
	for (i = 0; i < 10; i++) {
		e = put(&w, 100, (uint32_t)i);
		if (e)
			break;
		ok++;
	}
	CHECK_EQ_I64(ok, want);
	CHECK_EQ_I64(e, -EFBIG);
	CHECK(w.limit_reached);
	CHECK_EQ_I64(w.packets, want);
	CHECK(file_writer_bytes(&w) <= max);
	CHECK_EQ_I64(file_writer_close(&w), 0);
	CHECK_EQ_I64(walk_file(p, lens, 10, &size), want);
	CHECK_EQ_I64(size, want * 102);
	unlink(p);
}

static void test_max_bytes(void)
{
	const char *p = path_in("nolimit.pb");
	struct file_writer w;

	limit_case(306, 3); /* exactly three records */
	limit_case(307, 3);
	limit_case(305, 2);
	limit_case(408, 4);
	limit_case(101, 0);
	limit_case(102, 1);
	/* under the limit: no flag */
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	w.max_bytes = 1000;
	CHECK_EQ_I64(put(&w, 100, 0), 0);
	CHECK(!w.limit_reached);
	CHECK_EQ_I64(file_writer_close(&w), 0);
	unlink(p);
}

static void test_existing_truncated(void)
{
	const char *p = path_in("existing.pb");
	static const size_t lens[] = { 20 };
	struct file_writer w;
	struct stat st;
	size_t size;
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ_I64(fchmod(fd, 0644), 0);
	CHECK_EQ_I64(write(fd, "old contents, longer than what comes next"
			       "................................", 73), 73);
	close(fd);
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	CHECK(!w.created);
	CHECK_EQ_I64(fstat(w.fd, &st), 0);
	CHECK_EQ_I64(st.st_size, 0);
	CHECK_EQ_I64(st.st_mode & 07777, 0600);
	CHECK_EQ_I64(put(&w, 20, 0), 0);
	CHECK_EQ_I64(file_writer_close(&w), 0);
	CHECK_EQ_I64(walk_file(p, lens, 1, &size), 1);
	CHECK_EQ_I64(size, 22);
	/* discard leaves a file it did not create */
	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	file_writer_discard(&w);
	CHECK_EQ_I64(access(p, F_OK), 0);
	unlink(p);
}

static void test_new_file_mode(void)
{
	const char *p = path_in("new.pb");
	struct file_writer w;
	struct stat st;
	mode_t old = umask(0);

	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	umask(old);
	CHECK(w.created);
	CHECK_EQ_I64(stat(p, &st), 0);
	CHECK_EQ_I64(st.st_mode & 07777, 0600);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ_I64(file_writer_close(&w), 0);
	unlink(p);
}

static void test_symlink_refused(void)
{
	const char *target = path_in("target");
	const char *link = path_in("link.pb");
	const char *dangling = path_in("dangling.pb");
	const char *nowhere = path_in("nowhere");
	struct file_writer w;
	size_t n;
	uint8_t *b;
	int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ_I64(write(fd, "keep", 4), 4);
	close(fd);
	CHECK_EQ_I64(symlink(target, link), 0);
	CHECK_EQ_I64(file_writer_open(&w, link), -ELOOP);
	file_writer_discard(&w);
	b = slurp(target, &n);
	CHECK(b && n == 4 && !memcmp(b, "keep", 4));
	free(b);
	CHECK_EQ_I64(access(link, F_OK), 0); /* the link itself is left alone */
	CHECK_EQ_I64(symlink(nowhere, dangling), 0);
	CHECK(file_writer_open(&w, dangling) < 0);
	file_writer_discard(&w);
	CHECK_EQ_I64(access(nowhere, F_OK), -1);
	unlink(link);
	unlink(dangling);
	unlink(target);
}

static void test_discard_created(void)
{
	const char *p = path_in("discard.pb");
	struct file_writer w;

	CHECK_EQ_I64(file_writer_open(&w, p), 0);
	CHECK_EQ_I64(put(&w, 50, 0), 0);
	CHECK_EQ_I64(file_writer_flush(&w), 0);
	CHECK_EQ_I64(access(p, F_OK), 0);
	file_writer_discard(&w);
	CHECK_EQ_I64(access(p, F_OK), -1);
	CHECK(w.buf == NULL && w.path == NULL && w.fd == -1);
}

static void test_open_errors(void)
{
	struct file_writer w;

	CHECK_EQ_I64(file_writer_open(&w, path_in("no/such/dir.pb")), -ENOENT);
	file_writer_discard(&w);
	CHECK_EQ_I64(file_writer_open(&w, dir), -EISDIR);
	file_writer_discard(&w);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/btr-fw-XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_framing);
	RUN(test_large);
	RUN(test_write_error_whole_records);
	RUN(test_write_error_in_write);
	RUN(test_max_bytes);
	RUN(test_existing_truncated);
	RUN(test_new_file_mode);
	RUN(test_symlink_refused);
	RUN(test_discard_created);
	RUN(test_open_errors);
	CHECK_EQ_I64(rmdir(dir), 0); /* every test removed its files */
	return unit_finish();
}
