/* Starting, releasing and reaping the traced command. */
#include "record/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int child_spawn(struct child *c, char **argv, char *err, size_t errlen)
{
	int go[2], ex[2];
	char b;
	int e;

	memset(c, 0, sizeof(*c));
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(ex[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* the recorder gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	c->go_fd = go[1];
	c->err_fd = ex[0];
	return 0;
}

int child_release(struct child *c, char **argv, char *err, size_t errlen)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		e = errno;
	close(c->go_fd);
	c->go_fd = -1;
	do {
		n = read(c->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e) || (n < 0 && e)) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strerror(e));
		waitpid(c->pid, &c->status, 0);
		c->exited = true;
		return -e;
	}
	return 0;
}

bool child_poll(struct child *c)
{
	if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
		c->exited = true;
	return c->exited;
}

void child_abort(struct child *c)
{
	if (c->pid <= 0 || c->exited)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd); /* the child reads EOF and exits 127 */
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	waitpid(c->pid, &c->status, 0);
	c->exited = true;
}

int child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
