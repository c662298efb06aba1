/* Temporary files of the offline passes (archive members, a spooled
 * standard input, the sorter's runs): where they go and how they are made.
 * They are unlinked at once, so that nothing is left behind whatever
 * happens; closing them frees their space. */
#ifndef BTR_TEMPFILE_H
#define BTR_TEMPFILE_H

/* $TMPDIR when set and not empty, else /tmp. */
const char *temp_dir(void);

/* An unlinked file DIR/bpftrace-rec-WHAT.XXXXXX open for reading and
 * writing: its descriptor, or -1 with errno set (ENAMETOOLONG for a DIR
 * too long for a path). */
int temp_file(const char *dir, const char *what);

#endif
