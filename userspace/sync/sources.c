/* Opening, detecting, expanding and ordering the inputs of `sync` (see
 * sources.h). */
#include "sync/sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync/archive.h"
#include "sync/format.h"
#include "util/grow.h"

#define MANIFEST_MAX_BYTES (16u << 20)

/* An input and its place in the processing order. */
struct entry {
	struct input *in;
	int group;         /* 0 traces, 1 archive members, 2 other formats */
	size_t arg;        /* command line position */
	int kind_order;    /* inside an archive: traces, then others */
	const char *member;
};

struct build {
	struct sources *s;
	struct entry *e;
	size_t n, cap;
	uint32_t perf_clock;
	struct archive_budget extract; /* shared by every archive */
};

static int fail(struct sources *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sources *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return code;
}

static int add(struct build *b, struct input *in, int group, size_t arg,
	       int kind_order)
{
	if (grow_array((void **)&b->e, &b->cap, b->n + 1, sizeof(*b->e), 8))
		return fail(b->s, SOURCES_NO_MEMORY, "out of memory");
	b->e[b->n++] = (struct entry){ in, group, arg, kind_order, in->file.member };
	return 0;
}

/* Reads a manifest input whole and parses it. */
static int take_manifest(struct build *b, struct input *in, bool gzip)
{
	struct sources *s = b->s;
	char *text = NULL, err[768];
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (s->has_manifest)
		return fail(s, SOURCES_MANIFEST_ERROR, "%s: multiple "
			    "perfetto_manifest files (the first: %s)",
			    in->file.name, s->manifest.source);
	if (gzip)
		return fail(s, SOURCES_MANIFEST_ERROR, "%s: a gzip-compressed "
			    "perfetto_manifest is not supported", in->file.name);
	if (!(f = input_fopen(in)))
		return fail(s, SOURCES_INPUT_ERROR, "%s", in->err);
	for (;;) {
		size_t got;

		if (len == cap) {
			char *t = cap < MANIFEST_MAX_BYTES ?
					  realloc(text, cap ? cap * 2 : 4096) :
					  NULL;

			if (!t)
				break;
			text = t;
			cap = cap ? cap * 2 : 4096;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	rc = ferror(f) || !feof(f);
	fclose(f);
	if (rc) {
		free(text);
		return fail(s, SOURCES_MANIFEST_ERROR, "%s: unreadable or "
			    "larger than %u bytes", in->file.name,
			    MANIFEST_MAX_BYTES);
	}
	rc = manifest_parse(&s->manifest, in->file.name, text ? text : "", len, err,
			    sizeof(err));
	free(text);
	if (rc == -ENOMEM)
		return fail(s, SOURCES_NO_MEMORY, "out of memory");
	if (rc)
		return fail(s, SOURCES_MANIFEST_ERROR, "%s: %s", in->file.name, err);
	s->has_manifest = true;
	return 0;
}

/* The format of an opened input. */
static int detect(struct sources *s, struct input *in, enum input_format *f,
		  bool *gzip)
{
	uint8_t *head = malloc(FORMAT_HEAD_BYTES);
	long got = head ? input_head(in, head, FORMAT_HEAD_BYTES) : -1;

	if (!head)
		return fail(s, SOURCES_NO_MEMORY, "out of memory");
	if (got < 0) {
		free(head);
		return fail(s, SOURCES_INPUT_ERROR, "%s", in->err);
	}
	*f = format_detect(head, (size_t)got, gzip);
	free(head);
	if (*f == FORMAT_UNKNOWN)
		return fail(s, SOURCES_INPUT_ERROR, "%s: not a Perfetto trace, "
			    "a tar or zip archive, a perfetto_manifest or perf "
			    "script text", in->file.name);
	if (*f == FORMAT_PERF_TEXT && *gzip)
		return fail(s, SOURCES_INPUT_ERROR, "%s: gzip-compressed perf "
			    "script text is not supported (gunzip it first)",
			    in->file.name);
	return 0;
}

/* Takes an opened input of a known format (not an archive): a manifest is
 * parsed and closed, anything else joins the inputs. */
static int take(struct build *b, struct input *in, enum input_format f,
		bool gzip, int group, size_t arg)
{
	int rc;

	if (f == FORMAT_MANIFEST) {
		rc = take_manifest(b, in, gzip);
		input_close(in);
		free(in);
		return rc;
	}
	if (f == FORMAT_PERF_TEXT) {
		in->file.kind = INPUT_PERF_TEXT;
		in->file.perf_clock = b->perf_clock;
	}
	rc = add(b, in, group < 0 ? (f == FORMAT_TRACE ? 0 : 2) : group, arg,
		 f == FORMAT_TRACE ? 0 : 1);
	if (rc) {
		input_close(in);
		free(in);
	}
	return rc;
}

/* The members of an archive input, taken one by one. */
static int expand(struct build *b, struct input *ar, size_t arg)
{
	struct sources *s = b->s;
	struct archive_member *m;
	size_t n, i;
	int fd, rc = 0;
	char err[768];

	fd = ar->rd.stdin_fd >= 0 ? dup(ar->rd.stdin_fd) : -1;
	if (ar->rd.stdin_fd >= 0 &&
	    (fd < 0 || lseek(fd, (off_t)ar->rd.stdin_start, SEEK_SET) < 0))
		rc = fail(s, SOURCES_INPUT_ERROR, "%s: %s", ar->file.name,
			  strerror(errno));
	if (!rc && fd < 0 && (fd = open(ar->file.path, O_RDONLY | O_CLOEXEC)) < 0)
		rc = fail(s, SOURCES_INPUT_ERROR, "%s: %s", ar->file.name,
			  strerror(errno));
	if (!rc && archive_extract(fd, ar->file.name, &b->extract, &m, &n, err,
				   sizeof(err)))
		rc = fail(s, SOURCES_INPUT_ERROR, "%s", err);
	if (fd >= 0)
		close(fd);
	if (rc)
		return rc;
	for (i = 0; i < n && !rc; i++) {
		struct input *in = calloc(1, sizeof(*in));
		char label[4096];
		enum input_format f;
		bool gzip;

		snprintf(label, sizeof(label), "%s:%s", ar->file.name, m[i].name);
		if (!in) {
			rc = fail(s, SOURCES_NO_MEMORY, "out of memory");
			break;
		}
		rc = input_open_fd(in, label, m[i].fd, 0) ? SOURCES_NO_MEMORY : 0;
		m[i].fd = -1; /* the input owns it now */
		if (!rc && !(in->file.member = strdup(m[i].name)))
			rc = SOURCES_NO_MEMORY;
		if (rc)
			fail(s, rc, "out of memory");
		if (!rc)
			rc = detect(s, in, &f, &gzip);
		if (!rc && f == FORMAT_ARCHIVE)
			rc = fail(s, SOURCES_INPUT_ERROR, "%s: an archive inside "
				  "an archive is not supported", in->file.name);
		if (rc) {
			input_close(in);
			free(in);
			break;
		}
		rc = take(b, in, f, gzip, 1, arg);
	}
	archive_members_free(m, n);
	return rc;
}

/* One command line argument (or the --manifest file). */
static int open_arg(struct build *b, const char *path, size_t arg,
		    bool must_be_manifest)
{
	struct sources *s = b->s;
	struct input *in = calloc(1, sizeof(*in));
	enum input_format f;
	bool gzip;
	int rc;

	if (!in)
		return fail(s, SOURCES_NO_MEMORY, "out of memory");
	rc = input_open(in, path, 0) ? SOURCES_INPUT_ERROR : 0;
	if (rc)
		fail(s, rc, "%s", in->err);
	if (!rc)
		rc = detect(s, in, &f, &gzip);
	if (!rc && must_be_manifest && f != FORMAT_MANIFEST)
		rc = fail(s, SOURCES_MANIFEST_ERROR, "%s: not a "
			  "perfetto_manifest (it must start with "
			  "{\"perfetto_manifest\")", in->file.name);
	if (!rc && f == FORMAT_ARCHIVE)
		rc = expand(b, in, arg);
	if (rc || f == FORMAT_ARCHIVE) {
		input_close(in);
		free(in);
		return rc;
	}
	return take(b, in, f, gzip, -1, arg);
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group - b->group;
	if (a->arg != b->arg)
		return a->arg < b->arg ? -1 : 1;
	if (a->kind_order != b->kind_order)
		return a->kind_order - b->kind_order;
	if (a->member && b->member)
		return strcmp(a->member, b->member);
	return 0;
}

int sources_open(struct sources *s, char *const *paths, size_t n,
		 const char *manifest, uint32_t perf_clock,
		 uint64_t max_extract)
{
	struct build b = { .s = s, .perf_clock = perf_clock,
			   .extract = { .max = max_extract } };
	size_t i;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (manifest)
		rc = open_arg(&b, manifest, 0, true);
	for (i = 0; i < n && !rc; i++)
		rc = open_arg(&b, paths[i], i, false);
	if (!rc && b.n) {
		qsort(b.e, b.n, sizeof(*b.e), cmp_entry);
		s->in = malloc(b.n * sizeof(*s->in));
		if (!s->in)
			rc = fail(s, SOURCES_NO_MEMORY, "out of memory");
	}
	for (i = 0; i < b.n; i++) {
		if (rc) {
			input_close(b.e[i].in);
			free(b.e[i].in);
			continue;
		}
		s->in[i] = b.e[i].in;
		s->in[i]->file.scope.file = (uint32_t)i + 1;
	}
	s->n = rc ? 0 : b.n;
	free(b.e);
	if (rc) {
		free(s->in);
		s->in = NULL;
		if (s->has_manifest)
			manifest_free(&s->manifest);
		s->has_manifest = false;
	}
	return rc;
}

void sources_close(struct sources *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		input_close(s->in[i]);
		free(s->in[i]);
	}
	free(s->in);
	if (s->has_manifest)
		manifest_free(&s->manifest);
	memset(s, 0, sizeof(*s));
}
