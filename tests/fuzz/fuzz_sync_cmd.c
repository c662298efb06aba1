/* Fuzz target: the whole `bpftrace-rec sync` command on one input, through
 * cmd_sync(): format detection (sync/format.c), tar/zip/tgz archives
 * (archive.c, members into temporary files in /dev/shm), a
 * perfetto_manifest found in an archive (manifest.c, machines, placement),
 * perf script text (perf_input.c; without pids, the thread lookup in the
 * archive's traces, trace_tids.c), Perfetto traces (input.c, convert.c),
 * relabelling, the sort and the output (to stdout, which is /dev/null).
 * Members may take 64M in all (--max-extract), so that a bomb stops there.
 * The input is the file's bytes as a memfd path. Checked: the exit status
 * is 0, 1 or 64 (a manifest error), never a crash or a hang. */
#include <sys/stat.h>

#include "commands.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct stat st;

	(void)argc;
	(void)argv;
	fuzz_quiet();
	/* Archive members go to temporary files: keep them off the disk. */
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
		setenv("TMPDIR", "/dev/shm", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], cmd[] = "sync", quiet[] = "-q", o[] = "-o", out[] = "-";
	char cap[] = "--max-extract", cap_size[] = "64M";
	char *argv[] = { cmd, quiet, o, out, cap, cap_size, path, NULL };
	int fd, status;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	status = cmd_sync(7, argv);
	FUZZ_CHECK(status == EXIT_OK || status == EXIT_FAIL ||
		   status == EXIT_USAGE);
	close(fd);
	return 0;
}
