/* `bpftrace-rec stats FILE [--json] [--fail-on-loss]`: a trace's statistics
 * as a table, or JSON; with --fail-on-loss exits 3 when any data_loss stat
 * is non-zero. */
#include <argp.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "stats/table.h"
#include "util/log.h"

enum { OPT_JSON = 1001, OPT_FAIL_ON_LOSS };

struct stats_args {
	const char *file;
	bool json, fail_on_loss;
};

static const char doc[] =
	"Show the statistics of a trace: what each stage recorded and lost.\n"
	"\n"
	"Examples:\n"
	"  bpftrace-rec stats trace.pb\n"
	"  bpftrace-rec stats --fail-on-loss trace.pb || echo lost data"
	"\vColumns: name idx severity source value, with Perfetto's stat names"
	" (trace_processor's stats table), and machine (its machine_id, - for "
	"the host) for a trace `sync` merged from several machines; the drops "
	"counted by `sync` (its trailer) come last. Exit status: 0, 1 on a bad "
	"file, 3"
	" with --fail-on-loss when a data_loss stat is non-zero, 64 on a usage"
	" error.";

static const struct argp_option options[] = {
	{ "json", OPT_JSON, NULL, 0, "JSON array of rows", 0 },
	{ "fail-on-loss", OPT_FAIL_ON_LOSS, NULL, 0, "Exit 3 if any data was lost", 0 },
	{ 0 },
};

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct stats_args *a = st->input;

	switch (key) {
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_FAIL_ON_LOSS:
		a->fail_on_loss = true;
		break;
	case ARGP_KEY_ARG:
		if (a->file)
			argp_error(st, "too many arguments");
		a->file = arg;
		break;
	case ARGP_KEY_END:
		if (!a->file)
			argp_error(st, "missing FILE");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The machine column is there only for a trace of several machines. */
static void print_text(const struct stat_table *t)
{
	size_t i;

	printf("%-44s %5s %-9s %-8s %s%s\n", "name", "idx", "severity",
	       "source", "value", t->machines ? " machine" : "");
	for (i = 0; i < t->n; i++) {
		const struct stat_row *r = &t->rows[i];
		char idx[24] = "-", machine[24] = "-";

		if (r->idx >= 0)
			snprintf(idx, sizeof(idx), "%lld", (long long)r->idx);
		if (r->machine >= 0)
			snprintf(machine, sizeof(machine), "%lld",
				 (long long)r->machine);
		printf("%-44s %5s %-9s %-8s %lld%s%s\n", r->name, idx,
		       stat_severity_name(r->severity),
		       stat_source_name(r->source), (long long)r->value,
		       t->machines ? " " : "", t->machines ? machine : "");
	}
}

static int print_json(const struct stat_table *t)
{
	json_object *arr = json_object_new_array();
	size_t i;

	if (!arr)
		return -1;
	for (i = 0; i < t->n; i++) {
		const struct stat_row *r = &t->rows[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(r->name));
		json_object_object_add(o, "idx", r->idx >= 0 ?
				       json_object_new_int64(r->idx) : NULL);
		json_object_object_add(o, "severity",
			json_object_new_string(stat_severity_name(r->severity)));
		json_object_object_add(o, "source",
			json_object_new_string(stat_source_name(r->source)));
		json_object_object_add(o, "value", json_object_new_int64(r->value));
		json_object_object_add(o, "machine", r->machine >= 0 ?
				       json_object_new_int64(r->machine) : NULL);
		json_object_array_add(arr, o);
	}
	puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
	json_object_put(arr);
	return 0;
}

static bool has_loss(const struct stat_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->rows[i].severity == SEV_DATA_LOSS && t->rows[i].value)
			return true;
	return false;
}

int cmd_stats(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "FILE", doc, 0, 0, 0 };
	struct stats_args a = { 0 };
	struct stat_table t;
	char err[512];
	int rc;

	rc = cmd_parse_args(&argp, argc, argv, "bpftrace-rec stats", &a);
	if (rc)
		return rc;
	if (stat_table_read(&t, a.file, err, sizeof(err))) {
		log_error("%s", err);
		return EXIT_FAIL;
	}
	rc = a.fail_on_loss && has_loss(&t) ? EXIT_LOSS : EXIT_OK;
	if (a.json && print_json(&t)) {
		log_error("%s: out of memory", a.file);
		rc = EXIT_FAIL;
	} else if (!a.json) {
		print_text(&t);
	}
	if (!log_stdout_ok())
		rc = EXIT_FAIL;
	stat_table_free(&t);
	return rc;
}
