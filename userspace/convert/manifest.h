/* The trace manifest: Perfetto's `perfetto_manifest` JSON (version 1,
 * docs/clock-model.md, 'Manifest'): how the inputs of a merge relate:
 *
 *   {"perfetto_manifest": {
 *      "version": 1,
 *      "trace_time": {"clock": NAME, "file": PATH?, "machine": NAME?},
 *      "files": [{"path": PATH,
 *                 "machine": {"name": NAME} | "machines": [{"id", "name"}],
 *                 "clocks": {"clock": NAME?, "machine": NAME?,
 *                            "offset_ns": INT?,
 *                            "sync_to": {"file": PATH, "machine": NAME?,
 *                                        "clock": NAME?}}}],
 *      "attributes": {KEY: STRING | INT}}}
 *
 * Clock NAMEs: REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE,
 * MONOTONIC_RAW, BOOTTIME. Unknown fields are ignored. manifest_parse()
 * checks everything the document alone can tell (each error a message
 * "perfetto_manifest: FIELD: what", e.g. "perfetto_manifest: files[1]:
 * machine and machines are mutually exclusive"); what needs the inputs
 * (a path no input has, a machine the file does not hold, a pinned file
 * with clock snapshots) is checked when machines are assigned
 * (machine_assign.h). Beyond Perfetto's checks: a path listed twice and a
 * cycle of sync_to (a file synced to itself through others) are errors. */
#ifndef BTR_MANIFEST_H
#define BTR_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct manifest_machine {
	uint32_t id;
	char *name;
};

/* A clocks entry: this file's `clock` (0: PIN, the file's own timeline)
 * on `machine` relates to sync_to's clock (0: that file's own timeline):
 * at a common instant this file reads T and the reference T + offset_ns. */
struct manifest_clocks {
	uint32_t clock;
	char *machine;
	int64_t offset_ns;
	size_t sync_file;    /* index in files */
	char *sync_machine;
	uint32_t sync_clock;
};

struct manifest_file {
	char *path;
	char *machine;       /* "machine": {"name"}, NULL if absent */
	struct manifest_machine *machines; /* "machines", n_machines of them */
	size_t n_machines;
	bool has_machines;
	bool has_clocks;
	struct manifest_clocks clocks;
	long input;          /* index of the input it names, -1 until bound */
};

struct manifest_attr {
	char *key;
	char *value;         /* an integer is kept as its decimal text too */
	bool is_int;
	int64_t ival;        /* the integer, when is_int */
};

struct manifest {
	char *source;        /* where it came from, for messages */
	bool has_trace_time;
	uint32_t trace_clock;
	long trace_file;     /* index in files, -1: none */
	char *trace_machine;
	struct manifest_file *files;
	size_t n_files;
	struct manifest_attr *attrs;
	size_t n_attrs;
};

/* True when head[0..n), whitespace removed, starts with
 * {"perfetto_manifest" (how Perfetto detects a manifest). */
bool manifest_detect(const uint8_t *head, size_t n);

/* Parses and checks text[0..len). Returns 0, or -1 with the message in
 * err (the manifest is then empty), or -ENOMEM. */
int manifest_parse(struct manifest *m, const char *source, const char *text,
		   size_t len, char *err, size_t errlen);
void manifest_free(struct manifest *m);

/* The machine name a `machines` list gives to embedded id `id`, NULL if
 * it has none. */
const char *manifest_machine_name(const struct manifest_file *f, uint32_t id);

#endif
