/* Reading a task's /proc status and cgroup (task_status.h). */
#include "record/task_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_read_file(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	*len = (size_t)n;
	return 0;
}

int task_status_read(int32_t tid, struct task_status *st)
{
	char path[64], buf[4096], *line, *save = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (proc_read_file(path, buf, sizeof(buf), &len))
		return -1;
	memset(st, 0, sizeof(*st));
	st->tgid = -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "Name:\t", 6) == 0)
			snprintf(st->name, sizeof(st->name), "%s", line + 6);
		else if (sscanf(line, "Tgid: %d", &st->tgid) == 1)
			continue;
		else if (sscanf(line, "PPid: %d", &st->ppid) == 1)
			continue;
		else if (sscanf(line, "Uid: %d", &st->uid) == 1)
			continue;
		else if (strncmp(line, "Kthread:", 8) == 0) {
			st->has_kthread = true;
			st->kthread = strtol(line + 8, NULL, 10) == 1;
		}
	}
	if (!st->has_kthread) /* before 6.4: children of kthreadd */
		st->kthread = tid == 2 || st->ppid == 2;
	return st->tgid > 0 ? 0 : -1;
}

int task_cgroup_read(int32_t tid, char *buf, size_t n)
{
	char path[64], file[4096], *line, *save = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", tid);
	if (proc_read_file(path, file, sizeof(file), &len))
		return -1;
	for (line = strtok_r(file, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			snprintf(buf, n, "%s", line + 3);
			return 0;
		}
	return -1;
}
