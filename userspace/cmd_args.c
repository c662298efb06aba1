/* The command line of a subcommand, parsed with argp under the name the
 * user typed (argp names the program after argv[0] in its usage and error
 * lines, and main leaves argv[0] at the subcommand's word). */
#include "commands.h"

int cmd_parse_args(const struct argp *argp, int argc, char **argv,
		   const char *name, void *input)
{
	char *argv0 = argv[0];
	error_t e;

	argv[0] = (char *)name; /* argp only reads it */
	argp_err_exit_status = EXIT_USAGE;
	e = argp_parse(argp, argc, argv, 0, NULL, input);
	argv[0] = argv0;
	return e ? EXIT_USAGE : 0;
}
