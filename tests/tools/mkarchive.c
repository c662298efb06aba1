/* Test tool: writes a tar, gzip-compressed tar or zip archive whose members
 * are given in order, so tests control where the manifest sits:
 *
 *   mkarchive -f tar|tgz|zip -o OUT MEMBER=FILE...
 *
 * MEMBER is the path inside the archive, FILE the file whose bytes it
 * holds. Uses libarchive, as `sync` does to read archives. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: mkarchive -f tar|tgz|zip -o OUT "
			"MEMBER=FILE...\n");
	return 64;
}

/* The whole file into *buf. */
static long slurp(const char *path, char **buf)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	*buf = malloc(n ? (size_t)n : 1);
	if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return n;
}

static int add(struct archive *a, const char *spec)
{
	const char *eq = strchr(spec, '=');
	struct archive_entry *e;
	char *name, *data = NULL;
	long n;
	int rc = 0;

	if (!eq || eq == spec)
		return usage();
	name = strndup(spec, (size_t)(eq - spec));
	n = slurp(eq + 1, &data);
	if (!name || n < 0) {
		free(name);
		free(data);
		return 1;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, n);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    archive_write_data(a, data, (size_t)n) != n) {
		fprintf(stderr, "mkarchive: %s: %s\n", name,
			archive_error_string(a));
		rc = 1;
	}
	archive_entry_free(e);
	free(name);
	free(data);
	return rc;
}

int main(int argc, char **argv)
{
	const char *fmt = NULL, *out = NULL;
	struct archive *a;
	int c, rc = 0;

	while ((c = getopt(argc, argv, "f:o:")) != -1) {
		if (c == 'f')
			fmt = optarg;
		else if (c == 'o')
			out = optarg;
		else
			return usage();
	}
	if (!fmt || !out || optind >= argc)
		return usage();
	a = archive_write_new();
	if (!strcmp(fmt, "zip")) {
		archive_write_set_format_zip(a);
	} else if (!strcmp(fmt, "tar") || !strcmp(fmt, "tgz")) {
		archive_write_set_format_pax_restricted(a);
		if (!strcmp(fmt, "tgz"))
			archive_write_add_filter_gzip(a);
	} else {
		return usage();
	}
	if (archive_write_open_filename(a, out) != ARCHIVE_OK) {
		fprintf(stderr, "mkarchive: %s: %s\n", out,
			archive_error_string(a));
		return 1;
	}
	for (; optind < argc && !rc; optind++)
		rc = add(a, argv[optind]);
	if (archive_write_close(a) != ARCHIVE_OK) {
		fprintf(stderr, "mkarchive: %s: %s\n", out,
			archive_error_string(a));
		rc = 1;
	}
	archive_write_free(a);
	return rc;
}
