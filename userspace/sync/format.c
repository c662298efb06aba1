/* Content detection of offline inputs (see format.h). */
#include "sync/format.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "convert/manifest.h"
#include "sync/perf/perf_text.h"

static bool is_zip(const uint8_t *p, size_t n)
{
	return n >= 4 && p[0] == 'P' && p[1] == 'K' &&
	       ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6));
}

static bool is_tar(const uint8_t *p, size_t n)
{
	return n >= 262 && !memcmp(p + 257, "ustar", 5);
}

static bool is_gzip(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* Printable text (UTF-8 and TAB, CR, LF) in the first bytes. */
static bool looks_textual(const uint8_t *p, size_t n)
{
	size_t i;

	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return n > 0;
}

static enum input_format plain(const uint8_t *p, size_t n)
{
	if (manifest_detect(p, n))
		return FORMAT_MANIFEST;
	if (is_zip(p, n) || is_tar(p, n))
		return FORMAT_ARCHIVE;
	if (perf_text_detect(p, n))
		return FORMAT_PERF_TEXT;
	if (!n || p[0] == 0x0a)
		return FORMAT_TRACE;
	return looks_textual(p, n) ? FORMAT_UNKNOWN : FORMAT_TRACE;
}

/* Inflates the start of a gzip stream: up to FORMAT_HEAD_BYTES into out.
 * Returns the count (0 for a broken stream). */
static size_t inflate_head(const uint8_t *p, size_t n, uint8_t *out)
{
	z_stream z = { 0 };
	size_t got;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return 0;
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = FORMAT_HEAD_BYTES;
	inflate(&z, Z_SYNC_FLUSH);
	got = FORMAT_HEAD_BYTES - z.avail_out;
	inflateEnd(&z);
	return got;
}

enum input_format format_detect(const uint8_t *head, size_t n, bool *gzip)
{
	enum input_format f;
	uint8_t *out;
	size_t got;

	*gzip = is_gzip(head, n);
	if (!*gzip)
		return plain(head, n);
	out = malloc(FORMAT_HEAD_BYTES);
	if (!out)
		return FORMAT_TRACE; /* the reader will say what is wrong */
	got = inflate_head(head, n, out);
	f = got ? plain(out, got) : FORMAT_TRACE;
	free(out);
	return f;
}

const char *format_name(enum input_format f)
{
	static const char *const names[] = {
		[FORMAT_TRACE] = "Perfetto trace",
		[FORMAT_ARCHIVE] = "archive",
		[FORMAT_MANIFEST] = "perfetto_manifest",
		[FORMAT_PERF_TEXT] = "perf script text",
		[FORMAT_UNKNOWN] = "unknown",
	};

	return f <= FORMAT_UNKNOWN ? names[f] : "unknown";
}
