/* Archive members into temporary files, with libarchive (see archive.h). */
#include "offline/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An unlinked temporary file, or -1. */
static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/bpftrace-rec-member.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
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

/* Copies the current entry's data into a new member. */
static int add_member(struct archive *a, const char *path,
		      struct archive_member **v, size_t *n, char *err,
		      size_t errlen, const char *name)
{
	struct archive_member *m;
	int fd;

	if (*n == ARCHIVE_MAX_MEMBERS) {
		snprintf(err, errlen, "%s: more than %d members", name,
			 ARCHIVE_MAX_MEMBERS);
		return -1;
	}
	m = realloc(*v, (*n + 1) * sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	*v = m;
	fd = temp_file();
	m[*n] = (struct archive_member){ strdup(path), fd };
	(*n)++;
	if (fd < 0 || !m[*n - 1].name) {
		snprintf(err, errlen, "%s: %s: cannot make a temporary file: %s",
			 name, path, fd < 0 ? strerror(errno) : "out of memory");
		return -1;
	}
	if (archive_read_data_into_fd(a, fd) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s: %s", name, path,
			 archive_error_string(a) ? archive_error_string(a) :
						   "cannot extract");
		return -1;
	}
	return 0;
}

int archive_extract(int fd, const char *name, struct archive_member **members,
		    size_t *n, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int rc = 0, r;

	*members = NULL;
	*n = 0;
	if (!a) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", name,
			 archive_error_string(a) ? archive_error_string(a) :
						   strerror(errno));
		archive_read_free(a);
		return -1;
	}
	while (!rc && (r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
		const char *path;

		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			snprintf(err, errlen, "%s: %s", name,
				 archive_error_string(a) ?
					 archive_error_string(a) :
					 "corrupt archive");
			rc = -1;
			break;
		}
		path = archive_entry_pathname(e);
		if (archive_entry_filetype(e) != AE_IFREG || !path ||
		    !(path = visible(path)))
			continue;
		rc = add_member(a, path, members, n, err, errlen, name);
	}
	archive_read_free(a);
	if (rc) {
		archive_members_free(*members, *n);
		*members = NULL;
		*n = 0;
	}
	return rc;
}
