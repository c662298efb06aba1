/* Unit tests of the perfetto_manifest parser (userspace/convert/manifest.c):
 * detection by content, the fields it keeps, and one test per error, each
 * message naming its field. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock_graph.h"
#include "convert/manifest.h"
#include "unit.h"

static char err[1024];

/* Parses text; returns manifest_parse()'s result, err holds the message. */
static int parse(struct manifest *m, const char *text)
{
	err[0] = '\0';
	return manifest_parse(m, "test.json", text, strlen(text), err,
			      sizeof(err));
}

/* True when text is rejected with a message containing want. */
static bool rejects(const char *text, const char *want)
{
	struct manifest m;
	int rc = parse(&m, text);

	if (rc == 0)
		manifest_free(&m);
	if (rc != -1 || !strstr(err, want) ||
	    strncmp(err, "perfetto_manifest: ", 19)) {
		fprintf(stderr, "  for %s\n  got %d \"%s\"\n", text, rc, err);
		return false;
	}
	return true;
}

#define HEAD "{\"perfetto_manifest\": {\"version\": 1, "

static void test_detect(void)
{
	const char *yes[] = {
		"{\"perfetto_manifest\": {}}",
		"  \n\t{ \"perfetto_manifest\" :1",
		"{\r\n\"perfetto_manifest\"",
	};
	const char *no[] = { "{\"perfetto\": 1}", "[{\"perfetto_manifest\"",
			     "", "{\"perfetto_man", "\"perfetto_manifest\"" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(manifest_detect((const uint8_t *)yes[i], strlen(yes[i])));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!manifest_detect((const uint8_t *)no[i], strlen(no[i])));
}

static void test_full(void)
{
	struct manifest m;

	CHECK(parse(&m, HEAD
		    "\"trace_time\": {\"clock\": \"MONOTONIC\", \"file\": "
		    "\"relay.pb\", \"machine\": \"vm\"},"
		    "\"files\": ["
		    " {\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}},"
		    " {\"path\": \"relay.pb\", \"machines\": [{\"id\": 0, "
		    "  \"name\": \"host\"}, {\"id\": 4294967295, \"name\": \"vm\"}]},"
		    " {\"path\": \"log.json\", \"unknown\": [1], \"clocks\": "
		    "  {\"sync_to\": {\"file\": \"relay.pb\", \"machine\": \"vm\", "
		    "  \"clock\": \"BOOTTIME\"}, \"offset_ns\": -250}},"
		    " {\"path\": \"w.pb\", \"clocks\": {\"clock\": \"REALTIME\", "
		    "  \"sync_to\": {\"file\": \"phone.pb\"}, "
		    "  \"offset_ns\": 9223372036854775807}}],"
		    "\"attributes\": {\"run\": 42, \"name\": \"x\"},"
		    "\"future_field\": {\"a\": 1}}}") == 0);
	CHECK_STR(err, "");
	CHECK(m.has_trace_time && m.trace_clock == BTR_CLOCK_MONOTONIC);
	CHECK_EQ_I64(m.trace_file, 1);
	CHECK_STR(m.trace_machine, "vm");
	CHECK_EQ_I64(m.n_files, 4);
	CHECK_STR(m.files[0].machine, "phone");
	CHECK(!m.files[0].has_clocks && m.files[0].input == -1);
	CHECK(m.files[1].has_machines && m.files[1].n_machines == 2);
	CHECK_STR(manifest_machine_name(&m.files[1], 4294967295u), "vm");
	CHECK_STR(manifest_machine_name(&m.files[1], 0), "host");
	CHECK(!manifest_machine_name(&m.files[1], 7));
	CHECK(m.files[2].has_clocks && m.files[2].clocks.clock == 0);
	CHECK_EQ_I64(m.files[2].clocks.offset_ns, -250);
	CHECK_EQ_I64(m.files[2].clocks.sync_file, 1);
	CHECK_STR(m.files[2].clocks.sync_machine, "vm");
	CHECK(m.files[2].clocks.sync_clock == BTR_CLOCK_BOOTTIME);
	CHECK(m.files[3].clocks.clock == BTR_CLOCK_REALTIME);
	CHECK(m.files[3].clocks.sync_clock == 0);
	CHECK_EQ_I64(m.files[3].clocks.offset_ns, INT64_MAX);
	CHECK_EQ_I64(m.n_attrs, 2);
	CHECK_STR(m.attrs[0].key, "run");
	CHECK_STR(m.attrs[0].value, "42");
	manifest_free(&m);
	/* the smallest manifest */
	CHECK(parse(&m, "{\"perfetto_manifest\": {\"version\": 1}}") == 0);
	CHECK(!m.has_trace_time && m.n_files == 0 && m.trace_file == -1);
	manifest_free(&m);
}

static void test_document_errors(void)
{
	CHECK(rejects("{\"perfetto_manifest\": ", "invalid JSON"));
	CHECK(rejects("{\"perfetto_manifest\": {\"version\": 1}} x",
		      "invalid JSON"));
	CHECK(rejects("[1]", "expected a JSON object with a top-level "
		      "perfetto_manifest key"));
	CHECK(rejects("{\"perfetto_manifest\": 3}", "top-level"));
	CHECK(rejects("{\"perfetto_manifest\": {}}",
		      "missing required field: version"));
	CHECK(rejects("{\"perfetto_manifest\": {\"version\": 2}}",
		      "unsupported version: 2. Only version 1 is supported"));
	CHECK(rejects("{\"perfetto_manifest\": {\"version\": 1.0}}",
		      "version must be an integer"));
	CHECK(rejects("{\"perfetto_manifest\": {\"version\": \"1\"}}",
		      "version must be an integer"));
}

static void test_trace_time_errors(void)
{
	CHECK(rejects(HEAD "\"trace_time\": 1}}", "trace_time must be an object"));
	CHECK(rejects(HEAD "\"trace_time\": {}}}",
		      "trace_time: missing required field: clock"));
	CHECK(rejects(HEAD "\"trace_time\": {\"clock\": \"SUNDIAL\"}}}",
		      "trace_time.clock: unknown clock name: SUNDIAL. Use one "
		      "of REALTIME, REALTIME_COARSE, MONOTONIC, "
		      "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME"));
	/* a builtin clock that is not a POSIX clock */
	CHECK(rejects(HEAD "\"trace_time\": {\"clock\": \"TSC\"}}}",
		      "trace_time.clock: unknown clock name: TSC"));
	CHECK(rejects(HEAD "\"trace_time\": {\"clock\": 6}}}",
		      "trace_time.clock: clock name must be a string"));
	CHECK(rejects(HEAD "\"trace_time\": {\"clock\": \"BOOTTIME\", "
		      "\"file\": \"x.pb\"}}}", "trace_time.file names unknown "
		      "file 'x.pb'"));
	CHECK(rejects(HEAD "\"trace_time\": {\"clock\": \"BOOTTIME\", "
		      "\"machine\": \"m\"}}}",
		      "trace_time.machine requires trace_time.file"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 1, \"name\": \"x\"}]}], \"trace_time\": "
		      "{\"clock\": \"BOOTTIME\", \"file\": \"a\", \"machine\": "
		      "\"y\"}}}", "trace_time.machine: 'y' is not a machine "
		      "declared by file 'a'"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 1, \"name\": \"x\"}, {\"id\": 2, \"name\": "
		      "\"y\"}]}], \"trace_time\": {\"clock\": \"BOOTTIME\", "
		      "\"file\": \"a\"}}}", "trace_time: 'a' is a multi-machine "
		      "trace; also name the machine"));
}

static void test_file_errors(void)
{
	CHECK(rejects(HEAD "\"files\": {}}}", "files must be an array"));
	CHECK(rejects(HEAD "\"files\": [1]}}", "files[0]: files entries must "
		      "be objects with a string path"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": 1}]}}", "files[0]: files "
		      "entries"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\"}, {\"path\": \"a\"}]}}",
		      "files[1].path: 'a' is listed twice"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machine\": "
		      "{\"name\": \"x\"}, \"machines\": []}]}}",
		      "files[0]: machine and machines are mutually exclusive"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machine\": "
		      "\"x\"}]}}", "files[0].machine must be an object"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machine\": "
		      "{\"name\": \"\"}}]}}", "files[0].machine.name must be "
		      "non-empty"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machine\": {}}]}}",
		      "files[0].machine: missing required field: name"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "{}}]}}", "files[0].machines must be an array"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": -1, \"name\": \"x\"}]}]}}", "files[0]."
		      "machines[0]: id must be in [0, 4294967295]"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 4294967296, \"name\": \"x\"}]}]}}",
		      "id must be in [0, 4294967295]"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"name\": \"x\"}]}]}}", "id must be in"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 3, \"name\": \"\"}]}]}}", "files[0]."
		      "machines[0].name must be non-empty"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 3, \"name\": \"x\"}, {\"id\": 3, \"name\": "
		      "\"y\"}]}]}}", "files[0].machines[1]: id 3 is declared "
		      "twice"));
}

#define TWO "\"files\": [{\"path\": \"a\"}, {\"path\": \"b\", "

static void test_clocks_errors(void)
{
	CHECK(rejects(HEAD TWO "\"clocks\": 1}]}}",
		      "files[1].clocks must be an object"));
	CHECK(rejects(HEAD TWO "\"clocks\": {}}]}}",
		      "files[1].clocks: a sync_to block is required"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": 1}}]}}",
		      "files[1].clocks.sync_to must be an object"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {}}}]}}",
		      "files[1].clocks: sync_to.file is required"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"machine\": "
		      "\"x\"}}}]}}", "files[1].clocks.sync_to.machine: a "
		      "machine name alone is ambiguous, name the file too"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": "
		      "\"c\"}}}]}}", "files[1].clocks.sync_to.file names "
		      "unknown file 'c'. It must match the path of an entry in "
		      "the files array"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"clock\": \"TAI\", \"sync_to\": "
		      "{\"file\": \"a\"}}}]}}", "files[1].clocks.clock: unknown "
		      "clock name: TAI"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": \"a\", "
		      "\"clock\": \"boottime\"}}}]}}", "files[1].clocks.sync_to."
		      "clock: unknown clock name: boottime"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": \"a\"}, "
		      "\"offset_ns\": 1.5}}]}}",
		      "files[1].clocks.offset_ns must be an integer"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": \"a\"}, "
		      "\"offset_ns\": \"5\"}}]}}", "offset_ns must be an integer"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": \"a\"}, "
		      "\"offset_ns\": -9223372036854775808}}]}}",
		      "files[1].clocks.offset_ns is out of range"));
	CHECK(rejects(HEAD TWO "\"clocks\": {\"sync_to\": {\"file\": \"a\"}, "
		      "\"offset_ns\": 9223372036854775808}}]}}",
		      "offset_ns is out of range"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machines\": "
		      "[{\"id\": 1, \"name\": \"x\"}, {\"id\": 2, \"name\": "
		      "\"y\"}]}, {\"path\": \"b\", \"clocks\": {\"sync_to\": "
		      "{\"file\": \"a\"}}}]}}", "files[1].clocks: 'a' is a "
		      "multi-machine trace; also name the machine"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"machine\": "
		      "{\"name\": \"x\"}}, {\"path\": \"b\", \"clocks\": "
		      "{\"sync_to\": {\"file\": \"a\", \"machine\": \"z\"}}}]}}",
		      "files[1].clocks.sync_to.machine: 'z' is not a machine "
		      "declared by file 'a'"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\"}, {\"path\": \"b\", "
		      "\"machines\": [{\"id\": 1, \"name\": \"x\"}, {\"id\": 2, "
		      "\"name\": \"y\"}], \"clocks\": {\"sync_to\": {\"file\": "
		      "\"a\"}}}]}}", "files[1].clocks: file 'b' is a "
		      "multi-machine trace; name which machine the clock is on"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\"}, {\"path\": \"b\", "
		      "\"machines\": [{\"id\": 1, \"name\": \"x\"}], \"clocks\": "
		      "{\"machine\": \"q\", \"sync_to\": {\"file\": \"a\"}}}]}}",
		      "files[1].clocks.machine: 'q' is not a machine declared "
		      "by file 'b'"));
}

static void test_cycles(void)
{
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"clocks\": "
		      "{\"sync_to\": {\"file\": \"a\"}}}]}}", "files[0].clocks."
		      "sync_to: cycle: 'a' is synced to itself"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\", \"clocks\": "
		      "{\"sync_to\": {\"file\": \"c\"}}}, {\"path\": \"b\", "
		      "\"clocks\": {\"sync_to\": {\"file\": \"a\"}}}, {\"path\": "
		      "\"c\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}}}]}}",
		      "cycle: 'a' is synced to itself through sync_to"));
	/* a chain is fine */
	{
		struct manifest m;

		CHECK(parse(&m, HEAD "\"files\": [{\"path\": \"a\", \"clocks\": "
			    "{\"sync_to\": {\"file\": \"b\"}}}, {\"path\": \"b\", "
			    "\"clocks\": {\"sync_to\": {\"file\": \"c\"}}}, "
			    "{\"path\": \"c\"}]}}") == 0);
		manifest_free(&m);
	}
}

/* json-c strings may hold NUL ("\u0000"): such names and paths are
 * refused, not cut (regressions/fuzz_manifest/nul-in-name.json). */
static void test_nul(void)
{
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a.pb\", \"machine\": "
		      "{\"name\": \"\\u0000\"}}]}}", "files[0].machine.name must "
		      "not hold a NUL character"));
	CHECK(rejects(HEAD "\"files\": [{\"path\": \"a\\u0000b\"}]}}",
		      "files[0].path must not hold a NUL character"));
	CHECK(rejects(HEAD "\"attributes\": {\"k\": \"v\\u0000\"}}}",
		      "attributes: 'k' must not hold a NUL character"));
}

/* Many files: lookups and the cycle check stay fast (linear and n log n). */
static void test_many_files(void)
{
	enum { N = 40000 };
	size_t cap = (size_t)N * 96 + 64, len;
	char *t = malloc(cap);
	struct manifest m;
	int i;

	len = (size_t)snprintf(t, cap, HEAD "\"files\": [");
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s{\"path\": \"f%d\", "
					"\"clocks\": {\"sync_to\": {\"file\": "
					"\"f%d\"}}}", i ? ", " : "", i,
					i + 1 < N ? i + 1 : 0);
	snprintf(t + len, cap - len, "]}}");
	CHECK(parse(&m, t) == -1);
	CHECK(strstr(err, "cycle"));
	/* the chain without its last link is fine */
	len = (size_t)snprintf(t, cap, HEAD "\"files\": [{\"path\": \"f0\"}");
	for (i = 1; i < N; i++)
		len += (size_t)snprintf(t + len, cap - len, ", {\"path\": \"f%d\", "
					"\"clocks\": {\"sync_to\": {\"file\": "
					"\"f%d\"}}}", i, i - 1);
	snprintf(t + len, cap - len, "]}}");
	CHECK(parse(&m, t) == 0);
	CHECK_EQ_I64(m.n_files, N);
	CHECK_EQ_I64(m.files[N - 1].clocks.sync_file, N - 2);
	manifest_free(&m);
	free(t);
}

static void test_attribute_errors(void)
{
	CHECK(rejects(HEAD "\"attributes\": []}}", "attributes must be an "
		      "object of string or integer values"));
	CHECK(rejects(HEAD "\"attributes\": {\"a\": 1.5}}}",
		      "attributes: 'a' must be a string or an integer"));
	CHECK(rejects(HEAD "\"attributes\": {\"a\": null}}}",
		      "attributes: 'a' must be a string or an integer"));
	CHECK(rejects(HEAD "\"attributes\": {\"\": \"x\"}}}",
		      "attributes: keys must be non-empty"));
}

int main(void)
{
	RUN(test_detect);
	RUN(test_full);
	RUN(test_document_errors);
	RUN(test_trace_time_errors);
	RUN(test_file_errors);
	RUN(test_clocks_errors);
	RUN(test_cycles);
	RUN(test_attribute_errors);
	RUN(test_nul);
	RUN(test_many_files);
	return unit_finish();
}
