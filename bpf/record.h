/* Record layout shared by the BPF programs (bpf/) and the reader
 * (userspace/): every record a BPF program writes into its CPU's ring buffer
 * is one of these fixed-layout structs. Fixed-width types, explicit padding,
 * sizes checked at compile time on both sides. */
#ifndef BTR_RECORD_H
#define BTR_RECORD_H

#ifdef __bpf__
/* vmlinux.h already provides the __u* types. */
#else
#include <linux/types.h>
#endif

#define BTR_COMM_LEN 16
#define BTR_FILENAME_LEN 128

/* Record kinds. Values are part of the ring ABI: append only. */
enum btr_rec_type {
	BTR_REC_SWITCH = 1,
	BTR_REC_WAKING = 2,
	BTR_REC_WAKEUP_NEW = 3,
	BTR_REC_NEWTASK = 4,
	BTR_REC_RENAME = 5,
	BTR_REC_FORK = 6,
	BTR_REC_EXEC = 7,
	BTR_REC_EXIT = 8,
	BTR_REC_FREE = 9,
	BTR_REC_CLOCK = 10,
	BTR_REC_BLOCKED = 11,
	BTR_REC_STACK = 12,
	BTR_REC_SWITCH_BLOCKED = 13, /* a switch and its blocked reason */
	BTR_REC_USTACK = 14,         /* user registers and stack slice */
	BTR_REC_VMAS = 15,           /* where a process's frames are mapped */
	BTR_REC_TYPE_MAX = 16,
};

/* Programs whose invocations are counted (BTR_PROG_*), independently of
 * what they manage to write: the conservation check of the loss
 * accounting compares these with records read plus drops. */
enum btr_prog {
	BTR_PROG_SWITCH,
	BTR_PROG_WAKING,
	BTR_PROG_WAKEUP_NEW,
	BTR_PROG_NEWTASK,
	BTR_PROG_RENAME,
	BTR_PROG_FORK,
	BTR_PROG_EXEC,
	BTR_PROG_EXIT,
	BTR_PROG_FREE,
	BTR_PROG_BLOCKED, /* the blocked reason sched_switch adds */
	BTR_PROG_STACK,   /* the off-CPU call stack sched_switch adds */
	BTR_PROG_MAX,
};

/* common_flags bits, ftrace's (trace_flag_type): the interrupt context of
 * the task that emitted the record. */
#define BTR_FLAG_HARDIRQ 0x08
#define BTR_FLAG_SOFTIRQ 0x10
#define BTR_FLAG_NMI 0x40

/* Common header. `ts` is CLOCK_BOOTTIME ns (bpf_ktime_get_boot_ns());
 * `lost` is how many records this CPU failed to reserve since its previous
 * successful record; `pid` is the current task (ftrace's common_pid). */
struct btr_hdr {
	__u64 ts;
	__u32 lost;
	__s32 pid;
	__u16 type;
	__u16 common_flags; /* BTR_FLAG_*: the context it ran in, as ftrace */
	__u32 pad;
};

struct btr_switch {
	struct btr_hdr h;
	__s64 prev_state; /* sched_switch tracepoint "report" format */
	__s32 prev_pid;
	__s32 prev_prio;
	__s32 next_pid;
	__s32 next_prio;
	char prev_comm[BTR_COMM_LEN];
	char next_comm[BTR_COMM_LEN];
};

/* sched_waking and sched_wakeup_new */
struct btr_wakeup {
	struct btr_hdr h;
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
	__s32 pad;
	char comm[BTR_COMM_LEN];
};

struct btr_newtask {
	struct btr_hdr h;
	__u64 clone_flags;
	__s32 pid; /* the new task */
	__s32 oom_score_adj;
	char comm[BTR_COMM_LEN];
};

struct btr_rename {
	struct btr_hdr h;
	__s32 pid;
	__s32 oom_score_adj;
	char oldcomm[BTR_COMM_LEN];
	char newcomm[BTR_COMM_LEN];
};

struct btr_fork {
	struct btr_hdr h;
	__s32 parent_pid;
	__s32 child_pid;
	__s32 child_tgid;
	__s32 pad;
	char parent_comm[BTR_COMM_LEN];
	char child_comm[BTR_COMM_LEN];
};

struct btr_exec {
	struct btr_hdr h;
	__s32 pid;
	__s32 old_pid;
	char filename[BTR_FILENAME_LEN];
};

/* sched_process_exit and sched_process_free */
struct btr_exit {
	struct btr_hdr h;
	__s32 pid;
	__s32 tgid;
	__s32 prio;
	__s32 pad;
	char comm[BTR_COMM_LEN];
};

/* Which sleeping switch-outs get a BTR_REC_BLOCKED record after their
 * switch record (--blocked-reason). */
enum btr_blocked_mode {
	BTR_BLOCKED_NONE = 0,
	BTR_BLOCKED_D = 1,   /* uninterruptible sleeps only (default) */
	BTR_BLOCKED_ALL = 2, /* interruptible (S) ones too */
};

/* Why the task a switch put to sleep waits (Android's sched_blocked_reason):
 * `caller` is the first kernel return address on its stack outside the
 * scheduler's and the locking functions (__sched_text, __lock_text), as
 * the kernel's wchan; 0 when the stack could not be taken or held no such
 * frame. `io_wait` is task->in_iowait. h.pid is the task (still current). */
struct btr_blocked {
	struct btr_hdr h;
	__u64 caller;
	__s32 pid;
	__u32 io_wait;
};

/* A sleeping switch-out and its blocked reason in one record (one ring
 * reservation instead of two, the larger part of the cost of
 * --blocked-reason all), when no call stack is taken between them:
 * userspace writes them as the switch, then its sched_blocked_reason
 * (prev_pid's) 1 ns later. */
struct btr_switch_blocked {
	struct btr_switch sw; /* sw.h.type: BTR_REC_SWITCH_BLOCKED */
	__u64 caller;
	__u32 io_wait;
	__u32 pad;
};

/* Frames a BTR_REC_STACK record holds at most: kernel, then user. */
#define BTR_STACK_MAX 64
#define BTR_USTACK_MAX 64

/* btr_stack.flags */
#define BTR_STACK_TRUNCATED 0x1  /* the kernel stack had more than
				  * BTR_STACK_MAX frames */
#define BTR_STACK_FAILED 0x2     /* bpf_get_stack() failed: nr is 0 */
#define BTR_USTACK_TRUNCATED 0x4 /* the user stack had more than
				  * BTR_USTACK_MAX frames */
#define BTR_USTACK_FAILED 0x8    /* the user stack of a task with one could
				  * not be taken: nr_user is 0 */
#define BTR_USTACK_NONE 0x10     /* no user stack: a kernel thread (or a
				  * task past exit_mm); not a failure */
#define BTR_USTACK_SLICE 0x20    /* a BTR_REC_USTACK record of this sleep
				  * came right before, on the same CPU */

/* The call stack of a task going to sleep (--callstacks), after the
 * switch record of its sleeping (S or D) switch-out: `ips` holds `nr`
 * kernel return addresses, innermost first, as bpf_get_stack() gives them
 * (the first ones are in the tracing code, then __schedule()), then
 * `nr_user` user addresses, innermost first (the first one the task's
 * user pc, then return addresses found through frame pointers). The user
 * stack is taken only when the kernel one is whole. Variable length: the
 * record holds BTR_STACK_SIZE(nr + nr_user) bytes. h.pid is the task
 * (still current); `tgid` its process. */
struct btr_stack {
	struct btr_hdr h;
	__s32 pid;
	__s32 tgid;
	__u32 nr;
	__u32 flags; /* BTR_STACK_*, BTR_USTACK_* */
	__u32 nr_user;
	__u32 pad;
	__u64 ips[BTR_STACK_MAX + BTR_USTACK_MAX];
};

#define BTR_STACK_SIZE(nr) (48u + 8u * (nr))

/* The user registers a CFI unwinder starts from (x86-64): the pc, the
 * stack pointer, and the registers a function saves for its caller. */
enum btr_ureg {
	BTR_UREG_IP,
	BTR_UREG_SP,
	BTR_UREG_BP,
	BTR_UREG_BX,
	BTR_UREG_R12,
	BTR_UREG_R13,
	BTR_UREG_R14,
	BTR_UREG_R15,
	BTR_UREG_MAX,
};

/* The most bytes of user stack a BTR_REC_USTACK record holds (the
 * --stack-slice option's upper bound, as perf's dwarf,SIZE). */
#define BTR_SLICE_MAX 32768

/* What a thread going to sleep had on its user stack (--callstacks with a
 * slice): its user registers at the system call, and `size` bytes of its
 * stack from regs[BTR_UREG_SP] up (fewer than asked where the stack ends,
 * or where the frame-pointer chain joins: btr_stack). Written right
 * before the BTR_REC_STACK record of the same sleep, which then has
 * BTR_USTACK_SLICE; userspace unwinds it with the binaries' CFI. Not an
 * event of its own: not counted as a program run. The record holds
 * BTR_USTACK_SIZE(size) bytes. */
struct btr_ustack {
	struct btr_hdr h;
	__s32 pid;
	__u32 size;
	__u64 regs[BTR_UREG_MAX];
	__u8 data[BTR_SLICE_MAX];
};

#define BTR_USTACK_SIZE(size) (32u + 8u * BTR_UREG_MAX + (size))

/* Mappings a BTR_REC_VMAS record holds at most: the program's text (from
 * the mm, no look-up) and one looked up (a program run can look up one:
 * bpf_find_vma() takes the mmap lock, which a program with interrupts off
 * can only release after it ends); and the bytes of a file name it keeps. */
#define BTR_VMAS_MAX 2
/* btr_vma.pgoff of the program's text (mm's start_code to end_code, its
 * file mm's exe_file): its offset is the ELF text segment's, which
 * userspace reads from the file. */
#define BTR_VMA_TEXT (~0ull)
#define BTR_VMA_NAME_LEN 48

/* One mapping of a process (a vm_area_struct): its range, its offset in
 * pages, and its file (the inode number, the device as the kernel's
 * dev_t, major << 20 | minor, and the file's name without its
 * directory); ino 0: no file. */
struct btr_vma {
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u32 pad;
	char name[BTR_VMA_NAME_LEN];
};

/* Where the user frames of a process are mapped, taken from the kernel
 * while it lives, so that the frames of a process gone before its
 * /proc/PID/maps could be read keep their files: at an exec, the new
 * program's text; before the stack record of a sleep of a process the
 * reader has not read the maps of yet (the known_procs map), the
 * program's text again (the exec's record may come later, from another
 * CPU's ring) and the mapping of its first pc outside it (its C library,
 * most often: bpf_find_vma). Not an event. */
struct btr_vmas {
	struct btr_hdr h;
	__s32 tgid;
	__s32 parent; /* its parent process, whose mappings it has (a fork
		       * that has not exec'd); 0: none */
	__u32 n;
	__u32 pad;
	struct btr_vma v[BTR_VMAS_MAX];
	/* the program it exec'd while recorded, as the exec named it ("":
	 * none seen): the exec's own record may come later, from another
	 * CPU's ring */
	char exe[BTR_FILENAME_LEN];
};

/* Clock-sync record: h.ts (BOOTTIME), MONOTONIC and TAI read back to back
 * in the kernel. `seq` matches the request userspace made. */
struct btr_clock {
	struct btr_hdr h;
	__u64 mono;
	__u64 tai;
	__u64 boot_after;
	__u64 seq;
};

/* Per-CPU accounting kept by the BPF side (a per-CPU array of one entry):
 * invocations of each program, and reserve failures. */
struct btr_cpu_acct {
	__u64 runs[BTR_PROG_MAX];
	__u64 lost_total;   /* every reserve failure on this CPU */
	__u64 lost_pending; /* failures not yet reported on a record */
	__u64 woke;         /* a forced wakeup was sent since the ring was
			     * last seen under the wakeup threshold */
	__u64 pc_addr;      /* where this CPU's preempt count is, once found */
	__u64 stack_truncated; /* --callstacks: stacks deeper than
				* BTR_STACK_MAX (their record is cut) */
	__u64 stack_failed;    /* stacks that could not be taken (their
				* record has no frames) */
	__u64 ustack_truncated; /* user stacks deeper than BTR_USTACK_MAX */
	__u64 ustack_failed;    /* user stacks of tasks with a user side
				 * that could not be taken */
	__u64 ustack_none;      /* sleeps of tasks without user memory
				 * (kernel threads, tasks past exit_mm) */
	__u64 kstack_hits;      /* kernel stacks taken from the thread's
				 * cache (bpf/kstack_cache.h), not walked */
	__u64 kstack_misses;    /* kernel stacks walked though the cache
				 * was looked up */
	__u64 kstack_wrong;     /* --kstack-check (a test hook): stacks
				 * from the cache a walk disagrees with */
	__u64 vmas_lost;        /* BTR_REC_VMAS records the ring had no
				 * room for */
	__u64 vmas_failed;      /* of their look-ups, those that failed
				 * (the mmap lock busy, say) */
	__u64 slice_lost;       /* stack slices (BTR_REC_USTACK) the ring
				 * had no room for: their stacks go by
				 * frame pointers alone */
};

#define BTR_CHECK_SIZE(t, n)                                                   \
	_Static_assert(sizeof(struct t) == (n), #t " layout changed")
BTR_CHECK_SIZE(btr_hdr, 24);
BTR_CHECK_SIZE(btr_switch, 80);
BTR_CHECK_SIZE(btr_wakeup, 56);
BTR_CHECK_SIZE(btr_newtask, 56);
BTR_CHECK_SIZE(btr_rename, 64);
BTR_CHECK_SIZE(btr_fork, 72);
BTR_CHECK_SIZE(btr_exec, 160);
BTR_CHECK_SIZE(btr_exit, 56);
BTR_CHECK_SIZE(btr_clock, 56);
BTR_CHECK_SIZE(btr_blocked, 40);
BTR_CHECK_SIZE(btr_stack, BTR_STACK_SIZE(BTR_STACK_MAX + BTR_USTACK_MAX));
BTR_CHECK_SIZE(btr_ustack, BTR_USTACK_SIZE(BTR_SLICE_MAX));
BTR_CHECK_SIZE(btr_vma, 88);
BTR_CHECK_SIZE(btr_vmas, 40 + 88 * BTR_VMAS_MAX + BTR_FILENAME_LEN);

#endif
