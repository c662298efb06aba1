/* What /proc says of one task: its status (name, process, parent, uid,
 * kernel thread or not) and its cgroup v2 path. The process tree and the
 * triggers' filters and producers read it. */
#ifndef BTR_TASK_STATUS_H
#define BTR_TASK_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task_status {
	char name[64];
	int32_t tgid, ppid;
	int32_t uid;
	bool kthread, has_kthread;
};

/* Reads a small file of /proc whole into buf (NUL-terminated, at most
 * cap - 1 bytes); 0 or -errno. */
int proc_read_file(const char *path, char *buf, size_t cap, size_t *len);
/* /proc/TID/status; 0, or -1 when the task is gone. */
int task_status_read(int32_t tid, struct task_status *st);
/* The task's cgroup v2 path (/proc/TID/cgroup's "0::" line) into buf;
 * 0, or -1 when the task is gone or has none. */
int task_cgroup_read(int32_t tid, char *buf, size_t n);

#endif
