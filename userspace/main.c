/* Entry point: picks the subcommand (record by default) and runs it. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "record", cmd_record },
	{ "dump", cmd_dump },
	{ "stats", cmd_stats },
	{ "sync", cmd_sync },
	{ "report", cmd_report },
	{ "trigger", cmd_trigger },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc > 1) {
		for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
			if (strcmp(argv[1], commands[i].name) == 0)
				return commands[i].run(argc - 1, argv + 1);
		}
	}
	/* No subcommand: record, with all arguments as record options. */
	return cmd_record(argc, argv);
}
