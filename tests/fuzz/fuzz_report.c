/* Fuzz target: `bpftrace-rec report` on a trace file (report/: the wire
 * decoding of bundles and process trees, the per-CPU merge, the thread
 * model and both outputs, text and JSON, into /dev/null). The input is the
 * file's bytes, plain or gzip. The command must return 0, 1 (a bad or
 * empty trace, with a message) and never crash. */
#include <stdio.h>

#include "commands.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	if (!freopen("/dev/null", "w", stdout))
		return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], cmd[] = "report", json[] = "--json", top[] = "--top=0",
	     by[] = "--by=process";
	char *argv1[] = { cmd, path, NULL };
	char *argv2[] = { cmd, json, top, by, path, NULL };
	int fd, rc;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	rc = cmd_report(2, argv1);
	FUZZ_CHECK(rc == 0 || rc == 1);
	rc = cmd_report(5, argv2);
	FUZZ_CHECK(rc == 0 || rc == 1);
	close(fd);
	return 0;
}
