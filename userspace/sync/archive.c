/* Archive members into temporary files, with libarchive, within a budget
 * of bytes (see archive.h). */
#include "sync/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fd_io.h"
#include "util/tempfile.h"

/* One archive being extracted. */
struct extraction {
	struct archive *a;
	const char *name; /* the archive, for messages */
	const char *dir;  /* where the temporary files go */
	struct archive_budget *budget;
	char *err;
	size_t errlen;
};

static int member_error(struct extraction *x, const char *path,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "ARCHIVE: member PATH: ..." into x->err; returns -1. */
static int member_error(struct extraction *x, const char *path,
			const char *fmt, ...)
{
	int k = snprintf(x->err, x->errlen, "%s: member %s: ", x->name, path);
	va_list ap;

	if (k >= 0 && (size_t)k < x->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->err + k, x->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The member name without a leading "./"; NULL when it is hidden. */
static const char *visible(const char *path)
{
	const char *p;

	while (!strncmp(path, "./", 2))
		path += 2;
	for (p = path; *p; p++)
		if (*p == '.' && (p == path || p[-1] == '/'))
			return NULL;
	return *path ? path : NULL;
}

void archive_members_free(struct archive_member *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(m[i].name);
		if (m[i].fd >= 0)
			close(m[i].fd);
	}
	free(m);
}

/* The cap as an option would give it: "16 GiB", "1536 KiB", "100 bytes". */
static void size_text(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB" };
	size_t u = 0;

	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && v && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", v,
		 v == 1 && !u ? "byte" : unit[u]);
}

/* 0 when `more` bytes fit in the budget, else -1 with the message. */
static int fits(struct extraction *x, const char *path, uint64_t more)
{
	const struct archive_budget *b = x->budget;
	char cap[32];

	if (more <= b->max - b->used)
		return 0;
	size_text(b->max, cap, sizeof(cap));
	return member_error(x, path, "extracting more than %s (--max-extract, "
			    "all archives together); raise it, or unpack the "
			    "archive yourself", cap);
}

/* Grows the member being extracted from *size to end bytes, within the
 * budget. */
static int take(struct extraction *x, const char *path, uint64_t *size,
		uint64_t end)
{
	if (end <= *size)
		return 0;
	if (fits(x, path, end - *size))
		return -1;
	x->budget->used += end - *size;
	*size = end;
	return 0;
}

/* Copies the current entry's data into fd at its offsets (the holes of a
 * sparse member stay holes, but count), within the budget. */
static int copy_data(struct extraction *x, const char *path, int fd)
{
	uint64_t size = 0;
	int64_t off = 0;
	const void *p;
	size_t n;
	int r, err;

	while ((r = archive_read_data_block(x->a, &p, &n, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || n > (uint64_t)INT64_MAX - (uint64_t)off)
			return member_error(x, path, "data at offset %" PRId64
					    " is out of range", off);
		if (take(x, path, &size, (uint64_t)off + n))
			return -1;
		err = fd_write_all(fd, p, n, off, NULL);
		if (err)
			return member_error(x, path, "writing into %s: %s",
					    x->dir, strerror(-err));
	}
	if (r != ARCHIVE_EOF)
		return member_error(x, path, "%s", archive_error_string(x->a) ?
				    archive_error_string(x->a) :
				    "cannot extract");
	/* a hole at the end */
	if (off > 0 && (uint64_t)off > size) {
		if (take(x, path, &size, (uint64_t)off))
			return -1;
		if (ftruncate(fd, (off_t)off))
			return member_error(x, path, "writing into %s: %s",
					    x->dir, strerror(errno));
	}
	return 0;
}

/* Copies the current entry into a new member. */
static int add_member(struct extraction *x, struct archive_entry *e,
		      const char *path, struct archive_member **v, size_t *n)
{
	struct archive_member *m;
	int fd;

	if (*n == ARCHIVE_MAX_MEMBERS) {
		snprintf(x->err, x->errlen, "%s: more than %d members",
			 x->name, ARCHIVE_MAX_MEMBERS);
		return -1;
	}
	/* a size the header tells is refused before any byte is written */
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
	    fits(x, path, (uint64_t)archive_entry_size(e)))
		return -1;
	m = realloc(*v, (*n + 1) * sizeof(*m));
	if (!m) {
		snprintf(x->err, x->errlen, "%s: out of memory", x->name);
		return -1;
	}
	*v = m;
	fd = temp_file(x->dir, "member");
	m[*n] = (struct archive_member){ strdup(path), fd };
	(*n)++;
	if (fd < 0 || !m[*n - 1].name)
		return member_error(x, path, "cannot make a temporary file in "
				    "%s: %s", x->dir, fd < 0 ? strerror(errno) :
							       "out of memory");
	return copy_data(x, path, fd);
}

/* Every visible regular file of the opened archive into members. */
static int extract_all(struct extraction *x, struct archive_member **members,
		       size_t *n)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(x->a, &e)) != ARCHIVE_EOF) {
		const char *path;

		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			snprintf(x->err, x->errlen, "%s: %s", x->name,
				 archive_error_string(x->a) ?
					 archive_error_string(x->a) :
					 "corrupt archive");
			return -1;
		}
		path = archive_entry_pathname(e);
		if (archive_entry_filetype(e) != AE_IFREG || !path ||
		    !(path = visible(path)))
			continue;
		if (add_member(x, e, path, members, n))
			return -1;
	}
	return 0;
}

int archive_extract(int fd, const char *name, struct archive_budget *budget,
		    struct archive_member **members, size_t *n, char *err,
		    size_t errlen)
{
	struct extraction x = { archive_read_new(), name, temp_dir(),
				budget, err, errlen };
	uint64_t used = budget->used;
	int rc = -1;

	*members = NULL;
	*n = 0;
	if (!x.a) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	archive_read_support_filter_gzip(x.a);
	archive_read_support_format_tar(x.a);
	archive_read_support_format_zip(x.a);
	if (archive_read_open_fd(x.a, fd, 1 << 16) != ARCHIVE_OK)
		snprintf(err, errlen, "%s: %s", name,
			 archive_error_string(x.a) ? archive_error_string(x.a) :
						     strerror(errno));
	else
		rc = extract_all(&x, members, n);
	archive_read_free(x.a);
	if (rc) {
		/* the files are unlinked: closing them frees their space */
		archive_members_free(*members, *n);
		*members = NULL;
		*n = 0;
		budget->used = used;
	}
	return rc;
}
