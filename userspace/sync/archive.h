/* The members of a tar or zip archive (tar possibly gzip-compressed), read
 * with libarchive, each copied into an unlinked temporary file (in $TMPDIR,
 * else /tmp) because the offline passes read an input twice. Only regular
 * files are taken; hidden members (a path component starting with '.',
 * other than a leading "./") are skipped, as Perfetto does; a leading "./"
 * is dropped from the names. What all the archives of a run extract
 * together is capped (a budget, `sync --max-extract`), so that an archive
 * bomb cannot fill the disk. (A gzip trace, in an archive or not, is
 * inflated later by the reader, stored as it is here: what it inflates to
 * is bounded by the sorter's --memory-limit and temporary files.) */
#ifndef BTR_ARCHIVE_H
#define BTR_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

/* More members than this is taken for a mistake. */
#define ARCHIVE_MAX_MEMBERS 4096

struct archive_member {
	char *name;  /* path inside the archive */
	int fd;      /* its content, at offset 0 */
};

/* Bytes the members of every archive of a run may take together: their
 * sizes, holes of sparse members included. */
struct archive_budget {
	uint64_t max;  /* the cap */
	uint64_t used; /* taken by the members extracted so far */
};

/* Extracts the archive read from fd (from its current offset; left open),
 * named `name` in messages, taking the members' sizes from budget.
 * Returns 0 with *members (n of them), or -1 with a message in err (naming
 * the archive, and the member when there is one); then no member is left
 * and budget->used is as it was. */
int archive_extract(int fd, const char *name, struct archive_budget *budget,
		    struct archive_member **members, size_t *n, char *err,
		    size_t errlen);
/* Frees the array; closes the fds that are not -1. */
void archive_members_free(struct archive_member *m, size_t n);

#endif
