/* Dropping privileges once the recorder no longer needs them: after the BPF
 * programs are loaded and attached and the output is open, no capability
 * is kept but CAP_CHOWN when files created later (snapshots) must be handed
 * to the sudo user, and CAP_SYS_PTRACE when --callstacks reads the
 * /proc/PID/maps of the processes whose user stacks it takes (the kernel
 * lets a reader without it see only processes with no more capabilities
 * than itself); the bounding set is emptied and no_new_privs set. When
 * CPUs may come online later (some CPU ids were offline at the start),
 * CAP_BPF stays permitted but not effective, so that a reader can raise it
 * for the moment it creates a bigger ring (record/hotplug.h). */
#ifndef BTR_PRIVILEGES_H
#define BTR_PRIVILEGES_H

#include <stdbool.h>

/* Returns 0 or -errno. */
int privileges_drop(bool keep_chown, bool keep_ptrace, bool keep_bpf);
/* CAP_BPF effective (on) or not, on the calling thread only; 0 or -errno
 * (-EPERM when it is not permitted). */
int privileges_bpf(bool on);

#endif
