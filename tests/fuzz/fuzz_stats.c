/* Fuzz target: the statistics of a trace file, as `bpftrace-rec stats`
 * gathers them (stats/table.c: TraceStats, FtraceStats, the config echo,
 * lost events and sequence drops). The input is the file's bytes, plain or
 * gzip. A failure must come with a message; a success with rows that have
 * names. */
#include "fuzz.h"
#include "stats/table.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stat_table t;
	char path[64], err[512] = "";
	size_t i;
	int fd;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	if (stat_table_read(&t, path, err, sizeof(err)) == 0) {
		for (i = 0; i < t.n; i++) {
			FUZZ_CHECK(t.rows[i].name && t.rows[i].name[0]);
			FUZZ_CHECK(stat_severity_name(t.rows[i].severity));
			FUZZ_CHECK(stat_source_name(t.rows[i].source));
		}
	} else {
		FUZZ_CHECK(err[0] != '\0');
	}
	stat_table_free(&t);
	close(fd);
	return 0;
}
