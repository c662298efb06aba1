/* Fuzz target: a trace file as `bpftrace-rec dump` reads it. The input is
 * the file's bytes, plain or gzip (trace/reader.c tells by content), given
 * to cmd_dump() as a path (a memfd), stdout going to /dev/null: once as
 * the default (every packet converted to the trace clock through
 * convert/input.c and convert.c, then the text printers) and once with
 * --raw-timestamps --json (the reader alone, then the JSON printers).
 * Before that, the reader's contract is checked on its own: packet
 * lengths within the limit, offsets that grow, and an error or truncation
 * that comes with its "NAME: offset N: ..." message and stays sticky. */
#include "commands.h"
#include "fuzz.h"
#include "trace/reader.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static void check_reader(const char *path)
{
	struct trace_reader *r;
	uint64_t offset, last = 0;
	const uint8_t *pkt;
	bool first = true;
	char err[512];
	size_t len;
	int rc;

	r = trace_reader_open(path, err, sizeof(err));
	FUZZ_CHECK(r != NULL); /* a memfd is always a readable file */
	while ((rc = trace_reader_next(r, &pkt, &len, &offset)) ==
	       TRACE_READ_PACKET) {
		FUZZ_CHECK(len > 0 && len <= TRACE_READER_MAX_PACKET);
		FUZZ_CHECK(first || offset > last);
		first = false;
		last = offset;
	}
	FUZZ_CHECK(rc == TRACE_READ_END || rc == TRACE_READ_ERROR ||
		   rc == TRACE_READ_TRUNCATED);
	if (rc != TRACE_READ_END) {
		const char *msg = trace_reader_error(r);

		FUZZ_CHECK(strncmp(msg, path, strlen(path)) == 0);
		FUZZ_CHECK(strstr(msg, ": offset ") != NULL);
	}
	/* Sticky: an error repeats, a truncated tail then ends. */
	FUZZ_CHECK(trace_reader_next(r, &pkt, &len, &offset) ==
		   (rc == TRACE_READ_ERROR ? TRACE_READ_ERROR :
					     TRACE_READ_END));
	trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], cmd[] = "dump", json[] = "--json",
		       raw[] = "--raw-timestamps";
	char *conv_argv[] = { cmd, path, NULL };
	char *raw_argv[] = { cmd, raw, json, path, NULL };
	int fd, status;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	check_reader(path);
	status = cmd_dump(2, conv_argv);
	FUZZ_CHECK(status == EXIT_OK || status == EXIT_FAIL);
	status = cmd_dump(4, raw_argv);
	FUZZ_CHECK(status == EXIT_OK || status == EXIT_FAIL);
	close(fd);
	return 0;
}
