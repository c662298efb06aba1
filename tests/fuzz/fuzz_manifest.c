/* Fuzz target: the trace manifest (convert/manifest.c, Perfetto's
 * perfetto_manifest JSON read with json-c). The input is the document.
 * Checked: manifest_parse() returns 0 or -1 (never -ENOMEM here), a
 * failure comes with a "perfetto_manifest: ..." message and leaves the
 * manifest empty, and an accepted manifest is consistent: every sync_to
 * and trace_time.file names an entry, no file reaches itself through
 * sync_to, paths are unique, machine names are non-empty. */
#include "fuzz.h"
#include "convert/manifest.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* Names are checked non-empty, as manifest.c promises. json-c strings may
 * hold NUL bytes ("\u0000") that a C copy cuts: build with
 * -DFUZZ_SKIP_NUL_NAMES to fuzz past that known bug
 * (regressions/fuzz_manifest/nul-in-name.json). */
static bool name_ok(const char *name)
{
#ifdef FUZZ_SKIP_NUL_NAMES
	return name != NULL;
#else
	return name && name[0];
#endif
}

static void check_manifest(const struct manifest *m)
{
	size_t i, j, k;

	FUZZ_CHECK(m->trace_file >= -1 && m->trace_file < (long)m->n_files);
	for (i = 0; i < m->n_files; i++) {
		const struct manifest_file *f = &m->files[i];

		FUZZ_CHECK(f->path != NULL);
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(m->files[j].path, f->path) != 0);
		FUZZ_CHECK(!f->machine || name_ok(f->machine));
		for (j = 0; j < f->n_machines; j++)
			FUZZ_CHECK(name_ok(f->machines[j].name));
		if (!f->has_clocks)
			continue;
		FUZZ_CHECK(f->clocks.sync_file < m->n_files);
		/* No cycle: the chain from i ends within n_files steps. */
		for (j = i, k = 0; m->files[j].has_clocks; k++) {
			FUZZ_CHECK(k < m->n_files);
			j = m->files[j].clocks.sync_file;
			FUZZ_CHECK(j != i);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char prefix[] = "perfetto_manifest: ";
	struct manifest m;
	char err[512] = "";
	int rc;

	(void)manifest_detect(data, size);
	rc = manifest_parse(&m, "fuzz.json", (const char *)data, size, err,
			    sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == 0) {
		check_manifest(&m);
		if (m.n_files)
			(void)manifest_machine_name(&m.files[0], 0);
	} else {
		FUZZ_CHECK(strncmp(err, prefix, sizeof(prefix) - 1) == 0);
		FUZZ_CHECK(m.n_files == 0 && m.files == NULL);
	}
	manifest_free(&m);
	return 0;
}
