/* Unit tests of archive extraction (sync/archive.c) within a budget of
 * bytes (sync --max-extract): the exact cap passes and one byte less fails
 * naming the archive and the member; the budget is shared by archives and
 * given back by a failed one; members whose size the header does not tell
 * (a zip read from a pipe) are stopped while they are written, the others
 * before any byte is written; a write
 * error (RLIMIT_FSIZE) names the member and the directory. Archives are
 * built in memory with libarchive; $TMPDIR is a mkdtemp directory that must
 * be empty after every test, and no descriptor may be left open. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sync/archive.h"
#include "unit.h"

static char dir[64];
/* RLIMIT_FSIZE while extract() extracts; -1: none */
static long fsize_limit = -1;

/* A member to write: name, size, and whether the header tells the size. */
struct spec {
	const char *name;
	size_t size;
	bool unsized;
};

/* The archive (format "tar", "tgz" or "zip") of members of byte i % 251
 * in *len bytes; malloc'ed. */
static char *build(const char *fmt, const struct spec *s, size_t n,
		   size_t *len)
{
	size_t cap = 1 << 20, i, j;
	char *buf = malloc(cap), *data;
	struct archive *a = archive_write_new();

	if (!buf || !a)
		abort();
	if (!strcmp(fmt, "zip")) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		if (!strcmp(fmt, "tgz"))
			archive_write_add_filter_gzip(a);
	}
	archive_write_set_bytes_in_last_block(a, 1);
	if (archive_write_open_memory(a, buf, cap, len) != ARCHIVE_OK)
		abort();
	for (i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();

		data = malloc(s[i].size + 1);
		if (!e || !data)
			abort();
		for (j = 0; j < s[i].size; j++)
			data[j] = (char)(j % 251);
		archive_entry_set_pathname(e, s[i].name);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		if (!s[i].unsized)
			archive_entry_set_size(e, (la_int64_t)s[i].size);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    archive_write_data(a, data, s[i].size) !=
			    (la_ssize_t)s[i].size) {
			fprintf(stderr, "build: %s\n", archive_error_string(a));
			abort();
		}
		archive_entry_free(e);
		free(data);
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		abort();
	archive_write_free(a);
	return buf;
}

/* A descriptor reading buf: a pipe (not seekable; buf must fit in it) or
 * an unlinked file. */
static int source(const char *buf, size_t len, bool pipe_it)
{
	int p[2];
	FILE *f;

	if (pipe_it) {
		if (len > 60000 || pipe(p) ||
		    write(p[1], buf, len) != (ssize_t)len)
			abort();
		close(p[1]);
		return p[0];
	}
	f = tmpfile();
	if (!f || fwrite(buf, 1, len, f) != len || fflush(f))
		abort();
	p[0] = dup(fileno(f));
	fclose(f);
	lseek(p[0], 0, SEEK_SET);
	return p[0];
}

/* Open descriptors of this process. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Entries in $TMPDIR but . and .. */
static int temp_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Extracts the archive of members s under budget b; the result, with the
 * message in err. The members' sizes and contents are checked on success;
 * nothing may be left behind either way. */
static int extract(const char *fmt, const struct spec *s, size_t n,
		   bool pipe_it, struct archive_budget *b, char *err,
		   size_t errlen)
{
	struct archive_member *m;
	size_t len, i, got = 99, j;
	char *buf = build(fmt, s, n, &len);
	int fds = open_fds(), fd = source(buf, len, pipe_it), rc;
	struct rlimit old, lim;

	err[0] = 0;
	CHECK_EQ_I64(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	if (fsize_limit >= 0) {
		lim.rlim_cur = (rlim_t)fsize_limit;
		signal(SIGXFSZ, SIG_IGN);
	}
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = archive_extract(fd, "t.ar", b, &m, &got, err, errlen);
	CHECK_EQ_I64(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	close(fd);
	free(buf);
	if (rc) {
		CHECK(m == NULL);
		CHECK_EQ_I64(got, 0);
	} else {
		CHECK_EQ_I64(got, n);
	}
	for (i = 0; !rc && i < got && i < n; i++) {
		struct stat st;
		char c = 0;

		CHECK_STR(m[i].name, s[i].name);
		CHECK(fstat(m[i].fd, &st) == 0 &&
		      st.st_size == (off_t)s[i].size);
		j = s[i].size / 2;
		CHECK(!s[i].size || (pread(m[i].fd, &c, 1, (off_t)j) == 1 &&
				     c == (char)(j % 251)));
	}
	if (!rc)
		archive_members_free(m, got);
	CHECK_EQ_I64(open_fds(), fds);
	CHECK_EQ_I64(temp_entries(), 0);
	return rc;
}

/* The exact cap passes, one byte less fails naming archive and member. */
static void test_cap_boundary(void)
{
	static const struct spec s[] = { { "a.pb", 1000, false },
					 { "b.pb", 2000, false } };
	const char *fmts[] = { "tar", "tgz", "zip" };
	struct archive_budget b;
	char err[512];
	size_t f;

	for (f = 0; f < 3; f++) {
		b = (struct archive_budget){ .max = 3000 };
		CHECK_EQ_I64(extract(fmts[f], s, 2, false, &b, err,
				     sizeof(err)), 0);
		CHECK_EQ_I64(b.used, 3000);
		b = (struct archive_budget){ .max = 2999 };
		CHECK_EQ_I64(extract(fmts[f], s, 2, false, &b, err,
				     sizeof(err)), -1);
		CHECK_STR(err, "t.ar: member b.pb: extracting more than 2999 "
			       "bytes (--max-extract, all archives together); "
			       "raise it, or unpack the archive yourself");
		CHECK_EQ_I64(b.used, 0);
	}
}

/* A size the header tells is refused before a byte is written: no file
 * may grow at all, yet the message is the cap's. */
static void test_refused_from_header(void)
{
	static const struct spec s[] = { { "big.pb", 200 << 10, false } };
	const char *fmts[] = { "tar", "tgz", "zip" };
	struct archive_budget b = { .max = 64 << 10 };
	char err[512];
	size_t f;

	fsize_limit = 0;
	for (f = 0; f < 3; f++) {
		CHECK_EQ_I64(extract(fmts[f], s, 1, false, &b, err,
				     sizeof(err)), -1);
		CHECK(strstr(err, "t.ar: member big.pb: extracting more than "
				  "64 KiB (--max-extract") == err);
	}
	fsize_limit = -1;
	CHECK_EQ_I64(b.used, 0);
}

/* Archives share the budget; a failed one gives its part back. */
static void test_shared_budget(void)
{
	static const struct spec one[] = { { "x.pb", 1024, false } };
	static const struct spec two[] = { { "y.pb", 512, false },
					   { "z.pb", 513, false } };
	struct archive_budget b = { .max = 2048 };
	char err[512];

	CHECK_EQ_I64(extract("tar", one, 1, false, &b, err, sizeof(err)), 0);
	CHECK_EQ_I64(b.used, 1024);
	CHECK_EQ_I64(extract("tgz", two, 2, false, &b, err, sizeof(err)), -1);
	CHECK_STR(err, "t.ar: member z.pb: extracting more than 2 KiB "
		       "(--max-extract, all archives together); raise it, or "
		       "unpack the archive yourself");
	CHECK_EQ_I64(b.used, 1024);
	CHECK_EQ_I64(extract("tgz", two, 1, false, &b, err, sizeof(err)), 0);
	CHECK_EQ_I64(b.used, 1536);
}

/* A zip read from a pipe has no sizes in its local headers: the member is
 * stopped while it is written. The cap reads as the option gives it. */
static void test_unsized_member(void)
{
	static const struct spec s[] = { { "big.pb", 100 << 10, true } };
	struct archive_budget b = { .max = 64 << 10 };
	char err[512];

	/* files cannot grow past 80 KiB: the cap must stop it first */
	fsize_limit = 80 << 10;
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), -1);
	fsize_limit = -1;
	CHECK(strstr(err, "t.ar: member big.pb: extracting more than 64 KiB "
			  "(--max-extract") == err);
	CHECK_EQ_I64(b.used, 0);
	b = (struct archive_budget){ .max = 100 << 10 };
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), 0);
	CHECK_EQ_I64(b.used, 100 << 10);
	b = (struct archive_budget){ .max = 1 };
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), -1);
	CHECK(strstr(err, "more than 1 byte (") != NULL);
	b = (struct archive_budget){ .max = 3ull << 30 };
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), 0);
	b = (struct archive_budget){ .max = 1536 << 10 };
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), 0);
	b.used = b.max - 10;
	CHECK_EQ_I64(extract("zip", s, 1, true, &b, err, sizeof(err)), -1);
	CHECK(strstr(err, "more than 1536 KiB (") != NULL);
	CHECK_EQ_I64(b.used, b.max - 10);
}

/* Empty members take nothing; a member of a full budget fails. */
static void test_empty_members(void)
{
	static const struct spec s[] = { { "e.pb", 0, false },
					 { "f.pb", 0, true } };
	struct archive_budget b = { .max = 0 };
	char err[512];

	CHECK_EQ_I64(extract("tar", s, 2, false, &b, err, sizeof(err)), 0);
	CHECK_EQ_I64(extract("zip", s, 2, true, &b, err, sizeof(err)), 0);
	CHECK_EQ_I64(b.used, 0);
}

/* A write error names the archive, the member and the directory. */
static void test_write_error(void)
{
	static const struct spec s[] = { { "a.pb", 10, false },
					 { "w.pb", 200 << 10, false } };
	struct archive_budget b = { .max = 1 << 30 };
	char err[512], want[256];

	fsize_limit = 64 << 10;
	CHECK_EQ_I64(extract("tgz", s, 2, false, &b, err, sizeof(err)), -1);
	fsize_limit = -1;
	snprintf(want, sizeof(want), "t.ar: member w.pb: writing into %s: %s",
		 dir, strerror(EFBIG));
	CHECK_STR(err, want);
	CHECK_EQ_I64(b.used, 0);
}

/* No temporary directory: the member is named with the reason. */
static void test_no_temp_dir(void)
{
	static const struct spec s[] = { { "a.pb", 10, false } };
	struct archive_budget b = { .max = 100 };
	char err[512], want[256], gone[96];

	snprintf(gone, sizeof(gone), "%s/gone", dir);
	setenv("TMPDIR", gone, 1);
	CHECK_EQ_I64(extract("tar", s, 1, false, &b, err, sizeof(err)), -1);
	setenv("TMPDIR", dir, 1);
	snprintf(want, sizeof(want), "t.ar: member a.pb: cannot make a "
		 "temporary file in %s: %s", gone, strerror(ENOENT));
	CHECK_STR(err, want);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/btr-ar-XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TMPDIR", dir, 1);
	RUN(test_cap_boundary);
	RUN(test_refused_from_header);
	RUN(test_shared_budget);
	RUN(test_unsized_member);
	RUN(test_empty_members);
	RUN(test_write_error);
	RUN(test_no_temp_dir);
	CHECK_EQ_I64(rmdir(dir), 0); /* nothing was left behind */
	return unit_finish();
}
