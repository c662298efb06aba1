/* The command given after `--`: started stopped before the BPF programs
 * attach, released once they are, so the recording covers it from its
 * first instruction. A command that cannot be executed is reported with
 * its error. */
#ifndef BTR_CHILD_H
#define BTR_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t pid;
	int go_fd;  /* write end: one byte releases the child */
	int err_fd; /* read end: the child's exec errno, or EOF on success */
	bool exited;
	int status; /* waitpid status once exited */
};

int child_spawn(struct child *c, char **argv, char *err, size_t errlen);
/* Releases the child; fails with its exec error (the child is reaped). */
int child_release(struct child *c, char **argv, char *err, size_t errlen);
/* true once the child has exited (status in c->status). */
bool child_poll(struct child *c);
/* Kills and reaps a child that was never released. */
void child_abort(struct child *c);
/* Exit code for a waitpid status: the code, or 128 + signal. */
int child_exit_code(int status);

#endif
