/* Dropping privileges once the recorder no longer needs them: after the BPF
 * programs are loaded and attached and the output is open, no capability
 * is kept but CAP_CHOWN when files created later (snapshots) must be handed
 * to the sudo user, and CAP_SYS_PTRACE when --callstacks reads the
 * /proc/PID/maps of the processes whose user stacks it takes (the kernel
 * lets a reader without it see only processes with no more capabilities
 * than itself); the bounding set is emptied and no_new_privs set. */
#ifndef BTR_PRIVILEGES_H
#define BTR_PRIVILEGES_H

#include <stdbool.h>

/* Returns 0 or -errno. */
int privileges_drop(bool keep_chown, bool keep_ptrace);

#endif
