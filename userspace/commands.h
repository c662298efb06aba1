/* The subcommands of bpftrace-rec. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the exit status. */
#ifndef BTR_COMMANDS_H
#define BTR_COMMANDS_H

#include <argp.h>

/* Exit statuses shared by every command. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,     /* runtime failure */
	EXIT_LOSS = 3,     /* stats --fail-on-loss: data was lost */
	EXIT_USAGE = 64,   /* bad command line (EX_USAGE) */
};

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_sync(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_trigger(int argc, char **argv);

/* argv (argc words, argv[0] the subcommand's word) parsed by argp, whose
 * usage and error lines name the program `name` (e.g. "bpftrace-rec
 * sync"); exits on --help as argp does. 0, or EXIT_USAGE on a bad
 * command line (said on stderr). */
int cmd_parse_args(const struct argp *argp, int argc, char **argv,
		   const char *name, void *input);

#endif
