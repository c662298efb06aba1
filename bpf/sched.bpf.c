// SPDX-License-Identifier: GPL-2.0
/* Scheduler capture: one BPF program per scheduler tracepoint, each writing a
 * fixed-layout record (bpf/record.h) into the ring buffer of the CPU it runs
 * on. Every program exists twice, as tp_btf (preferred) and raw_tp
 * (fallback); userspace enables one set with bpf_program__set_autoload().
 * Reserve failures are counted per CPU and reported on the CPU's next
 * record. Records are submitted without waking the reader, unless the ring
 * is filled past a threshold. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "record.h"
#include "rings.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace between open and load. */
const volatile __u64 wakeup_bytes = 1 << 21; /* force a wakeup past this fill */


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct btr_cpu_acct);
} acct SEC(".maps");

/* Kernels before 5.14 named the task state field `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___nocpu {
	struct thread_info thread_info;
} __attribute__((preserve_access_index));

struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

/* The interrupt context of a wakeup, for ftrace's common_flags, from the
 * preempt count as the kernel's tracing_gen_ctx() reads it. On x86 the
 * preempt count is a per-CPU variable (__preempt_count, or
 * pcpu_hot.preempt_count on 6.1 to 6.14), which a BPF program could only
 * name where kallsyms lists per-CPU symbols (CONFIG_KALLSYMS_ALL). It is
 * reached instead from this CPU's runqueue, another per-CPU variable whose
 * address every task has (task->se.cfs_rq->rq): userspace reads the
 * distance between the two in the kernel's BTF (the .data..percpu
 * section), `pc_from_rq`. 0: unknown (flags stay 0). arm64 keeps the
 * count in thread_info. */
const volatile __s64 pc_from_rq = 0;

/* Which of the newer paths to take, set by userspace from the kernel's
 * BTF (record/kfeatures.c) less the fallbacks a test forces: each is
 * also guarded by a CO-RE check here, so that code for a helper the
 * kernel lacks is removed before the verifier sees it. */
const volatile bool use_rdonly_cast = false; /* 6.2 */
const volatile bool use_user_walk = false;   /* 5.17: bpf_loop */
const volatile bool use_kstack_cache = false;
const volatile bool use_tai = false;         /* 6.1 */
const volatile bool use_find_vma = false;    /* 5.17: bpf_find_vma */

/* Kernels since 6.2 let a tp_btf program read kernel memory it has an
 * address of as a typed object (faults read as 0): the preempt count as
 * the int at the start of a struct refcount_struct (the cast wants a
 * named struct), with a plain load instead of a probe read. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

struct thread_info___arm64 {
	__u64 preempt_count;
} __attribute__((preserve_access_index));

/* PREEMPT_RT counts softirqs per task: its softirq_count() reads
 * current->softirq_disable_cnt (a field only RT kernels have), and the
 * preempt count's softirq bits stay 0. A softirq served in a thread
 * there (ksoftirqd/N, or ktimers/N on kernels that have it) is a
 * softirq context all the same, as ftrace marks it. */
struct task_struct___rt {
	int softirq_disable_cnt;
} __attribute__((preserve_access_index));

#define PC_SOFTIRQ_OFFSET 0x00000100
#define PC_HARDIRQ_MASK 0x000f0000
#define PC_NMI_MASK 0x00f00000

static __always_inline __u16 irq_flags(bool btf, struct btr_cpu_acct *a)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u16 f = 0;
	int pc = 0;

#if defined(__TARGET_ARCH_arm64)
	struct thread_info___arm64 *ti = (void *)&t->thread_info;

	(void)a;
	(void)btf;
	pc = (int)BPF_CORE_READ(ti, preempt_count);
#else
	/* The address is the same for every record of this CPU: found once
	 * (the running task's runqueue is this CPU's), then one read. */
	if (!pc_from_rq || !a)
		return 0;
	if (!a->pc_addr) {
		void *rq = BPF_CORE_READ(t, se.cfs_rq, rq);

		if (!rq)
			return 0;
		a->pc_addr = (__u64)rq + pc_from_rq;
	}
	if (btf && use_rdonly_cast && bpf_rdonly_cast) {
		struct refcount_struct *c = bpf_rdonly_cast(
			(void *)a->pc_addr,
			bpf_core_type_id_kernel(struct refcount_struct));

		pc = c->refs.counter;
	} else if (bpf_probe_read_kernel(&pc, sizeof(pc),
					 (void *)a->pc_addr)) {
		return 0;
	}
#endif
	if (bpf_core_field_exists(((struct task_struct___rt *)t)
					  ->softirq_disable_cnt))
		pc |= BPF_CORE_READ((struct task_struct___rt *)t,
				    softirq_disable_cnt) & PC_SOFTIRQ_OFFSET;
	if (pc & PC_NMI_MASK)
		f |= BTR_FLAG_NMI;
	if (pc & PC_HARDIRQ_MASK)
		f |= BTR_FLAG_HARDIRQ;
	if (pc & PC_SOFTIRQ_OFFSET)
		f |= BTR_FLAG_SOFTIRQ;
	return f;
}

/* A reservation in progress: the ring it came from and the record. */
struct resv {
	void *ring;
	struct btr_hdr *rec;
	struct btr_cpu_acct *a; /* this CPU's accounting, NULL for clock_sync */
};

static __always_inline struct btr_cpu_acct *acct_get(enum btr_prog prog)
{
	__u32 zero = 0;
	struct btr_cpu_acct *a = bpf_map_lookup_elem(&acct, &zero);

	if (a && prog < BTR_PROG_MAX)
		a->runs[prog]++;
	return a;
}

/* Reserves `size` bytes on this CPU's ring and fills the common header.
 * On failure counts the loss; the next record of this CPU reports it. */
static __always_inline struct resv reserve(struct btr_cpu_acct *a, __u32 size,
					   __u16 type)
{
	struct resv r = {};
	__u32 cpu = bpf_get_smp_processor_id();

	r.a = a;
	r.ring = bpf_map_lookup_elem(&rings, &cpu);
	if (r.ring)
		r.rec = bpf_ringbuf_reserve(r.ring, size, 0);
	if (!r.rec) {
		if (a) {
			a->lost_total++;
			a->lost_pending++;
		}
		return r;
	}
	r.rec->ts = bpf_ktime_get_boot_ns();
	r.rec->lost = 0;
	if (a) {
		r.rec->lost = (__u32)a->lost_pending;
		a->lost_pending = 0;
	}
	r.rec->pid = (__s32)bpf_get_current_pid_tgid();
	r.rec->type = type;
	r.rec->common_flags = 0;
	r.rec->pad = 0;
	return r;
}

/* Wakes the reader once when the ring passes wakeup_bytes, not on every
 * record until the reader has drained it: each forced wakeup is an irq_work
 * (a self-IPI), and a reader that is slow to run would make every record
 * pay one. The reader drains its rings to empty, so the next record after a
 * drain re-arms the wakeup. */
static __always_inline __u64 wake_flags(void *ring, struct btr_cpu_acct *a)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		if (!a || !a->woke)
			flags = BPF_RB_FORCE_WAKEUP;
		if (a && !a->woke)
			a->woke = 1;
	} else if (a && a->woke) {
		a->woke = 0;
	}
	return flags;
}

static __always_inline void submit(struct resv r)
{
	bpf_ringbuf_submit(r.rec, wake_flags(r.ring, r.a));
}

/* tp_btf programs get BTF-typed task pointers, whose fields are read with
 * plain loads (the verifier turns them into fault-safe loads); raw_tp
 * programs get untyped ones, read with bpf_probe_read_kernel(). `btf` is a
 * constant in each program (BTR_TP), so only one branch is compiled. */
#define TREAD(btf, p, ...)                                                     \
	((btf) ? (p)->__VA_ARGS__ : BPF_CORE_READ(p, __VA_ARGS__))

static __always_inline void read_comm(bool btf, char *dst,
				      struct task_struct *t)
{
	if (btf) {
		((__u64 *)dst)[0] = *(__u64 *)&t->comm[0];
		((__u64 *)dst)[1] = *(__u64 *)&t->comm[8];
	} else {
		bpf_core_read(dst, BTR_COMM_LEN, &t->comm);
	}
}

static __always_inline int task_cpu(bool btf, struct task_struct *t)
{
	struct task_struct___cpu *tc = (void *)t;
	struct task_struct___nocpu *tn = (void *)t;

	if (bpf_core_field_exists(tn->thread_info.cpu))
		return TREAD(btf, tn, thread_info.cpu);
	return TREAD(btf, tc, cpu);
}

static __always_inline __u32 raw_task_state(struct task_struct *t)
{
	struct task_struct___old *to = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ(to, state);
}

static __always_inline int oom_score_adj(bool btf, struct task_struct *t)
{
	return btf ? t->signal->oom_score_adj
		   : BPF_CORE_READ(t, signal, oom_score_adj);
}

/* Converts the raw state to what the classic sched_switch tracepoint
 * reports (__trace_sched_switch_state): preempted -> TASK_REPORT_MAX
 * (0x100), else one bit: the highest of the reportable state bits. */
static __always_inline __s64 report_state(bool btf, bool preempt, __u32 state,
					  struct task_struct *prev)
{
	__u32 s;

	if (preempt)
		return 0x100;
	s = (state | (__u32)TREAD(btf, prev, exit_state)) & 0x7f;
	if ((state & 0x402) == 0x402) /* TASK_IDLE */
		s = 0x80;
	if (state & 0x1000) /* TASK_RTLOCK_WAIT */
		s = 0x02;
	/* keep only the highest set bit (s < 0x100) */
	s |= s >> 1;
	s |= s >> 2;
	s |= s >> 4;
	return (__s64)(s - (s >> 1));
}

/* --blocked-reason (enum btr_blocked_mode) and the kernel text ranges of
 * the scheduler's and the locking functions, which the kernel's wchan
 * skips (in_sched_functions()); set by userspace from /proc/kallsyms. */
const volatile __u32 blocked_mode = BTR_BLOCKED_NONE;
const volatile __u64 sched_text_start = 0, sched_text_end = 0;
const volatile __u64 lock_text_start = 0, lock_text_end = 0;

#define BLOCKED_STACK_DEPTH 32

/* Per-CPU scratch for the kernel stack of the task going to sleep. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[BLOCKED_STACK_DEPTH]);
} stack_scratch SEC(".maps");

static __always_inline bool in_sched_text(__u64 ip)
{
	return (ip >= sched_text_start && ip < sched_text_end) ||
	       (ip >= lock_text_start && ip < lock_text_end);
}

/* --callstacks: every sleeping (S or D) switch-out gets its kernel and
 * (unless --callstacks=kernel) user stacks. */
const volatile bool callstacks = false;
const volatile bool user_stacks = false;
/* --kstack-check (a test hook): each stack from the thread's cache is
 * checked against a walk (counted in kstack_wrong when they differ). */
const volatile bool kstack_check = false;

/* Per-CPU scratch for a stack record: each bpf_get_stack() may write one
 * frame more than the record holds, to tell a full stack from a truncated
 * one. */
struct stack_buf {
	struct btr_stack s;
	__u64 extra;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_buf SEC(".maps");

#define PF_KTHREAD 0x00200000

#include "kstack_cache.h"

/* The kernel stack of the current task, a thread going to sleep, into
 * ips (BTR_STACK_MAX frames and one more, to see a cut): the thread's
 * cached stack when it sleeps where it slept before (kstack_cache.h),
 * else a walk, kept for its next sleep when whole. Hits and misses are
 * counted on a. Returns bytes, as bpf_get_stack(), negative on failure. */
static __always_inline long kernel_stack(void *ctx, __u32 tid, __u64 *ips,
					 struct btr_cpu_acct *a)
{
	bool cached = kstack_cache_fits();
	long n;

	if (cached) {
		n = kstack_lookup(ctx, tid, ips);
		if (n) {
			a->kstack_hits++;
			if (kstack_check && !kstack_agrees(ctx, ips, n))
				a->kstack_wrong++;
			return n * sizeof(__u64);
		}
		a->kstack_misses++;
	}
	n = bpf_get_stack(ctx, ips, (BTR_STACK_MAX + 1) * 8, 0);
	if (cached && n > 0 && n <= BTR_STACK_MAX * 8)
		kstack_fill(ctx, tid, ips, (__u32)(n / 8));
	return n;
}

/* The first return address after the scheduler's frames: the stack starts
 * in the tracing code (the tracepoint, this program's trampoline), then
 * __schedule() and its callers in __sched_text, then the function the
 * task blocked in. 0 when there is no such frame. `taken`: the n frames
 * --callstacks already took for this switch (no second walk), or NULL:
 * then from the thread's cached kernel stack when it sleeps where it
 * slept before (kstack_caller(): the slots up to that frame alone), else
 * a walk (kept in the cache when it can be), or a short walk where the
 * kernel has no cache. caller_in(): the frame in a stack of n frames. */
static __always_inline __u64 caller_in(const __u64 *st, long n)
{
	bool seen = false;
	int i;

	for (i = 0; i < BLOCKED_STACK_DEPTH; i++) {
		if (i >= n)
			break;
		if (in_sched_text(st[i]))
			seen = true;
		else if (seen)
			return st[i];
	}
	return 0;
}

/* blocked_caller() from the thread's cache, or a walk kept in it; hits
 * and misses counted on a (NULL: not counted). */
static __always_inline __u64 cached_caller(void *ctx, struct btr_cpu_acct *a)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	__u64 c = kstack_caller(ctx, tid);
	struct stack_buf *b = NULL;
	long n;

	if (c && a)
		a->kstack_hits++;
	else if (a)
		a->kstack_misses++;
	if (c && !kstack_check)
		return c;
	/* a walk: kept for the thread's next sleep, or (--kstack-check)
	 * checked against the cached caller */
	b = bpf_map_lookup_elem(&stack_buf, &zero);
	if (!b)
		return c;
	n = bpf_get_stack(ctx, b->s.ips, (BTR_STACK_MAX + 1) * 8, 0);
	if (n <= 0)
		return c;
	n /= sizeof(__u64);
	if (c) {
		if (caller_in(b->s.ips, n) != c && a)
			a->kstack_wrong++;
		return c;
	}
	if (n <= BTR_STACK_MAX)
		kstack_fill(ctx, tid, b->s.ips, (__u32)n);
	return caller_in(b->s.ips, n);
}

static __always_inline __u64 blocked_caller(void *ctx, const __u64 *taken,
					    long n, struct btr_cpu_acct *a)
{
	__u32 zero = 0;
	__u64 *buf;

	if (!sched_text_end)
		return 0;
	if (taken)
		return caller_in(taken, n);
	if (kstack_cache_fits())
		return cached_caller(ctx, a);
	buf = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!buf)
		return 0;
	n = bpf_get_stack(ctx, buf, BLOCKED_STACK_DEPTH * sizeof(__u64), 0);
	if (n <= 0)
		return 0;
	return caller_in(buf, n / sizeof(__u64));
}

/* After the switch record of a task going to sleep (reported state S or
 * D, as --blocked-reason asks): where it blocked and whether it waits for
 * I/O. prev is still the current task. */
/* Whether a switch-out in state `report` gets a blocked reason: D
 * sleeps; S sleeps too with --blocked-reason all, or when --callstacks
 * took the stack that names the function anyway (taken, ntaken frames). */
static __always_inline bool blocked_wanted(__s64 report, const __u64 *taken,
					   long ntaken)
{
	if (blocked_mode == BTR_BLOCKED_NONE)
		return false;
	return report == 0x02 ||
	       (report == 0x01 &&
		(blocked_mode == BTR_BLOCKED_ALL || (taken && ntaken > 0)));
}

/* Whether a task going to sleep in state `report` waits for I/O: its
 * in_iowait, for D sleeps. The kernel sets it around io_schedule(), whose
 * sleeps are uninterruptible (D, killable ones too): an S sleep is taken
 * as not waiting for I/O without the read, a cache miss on the task that
 * was half the cost of --blocked-reason all on S sleeps. */
static __always_inline __u32 io_wait_of(bool btf, struct task_struct *t,
					__s64 report)
{
	if (report != 0x02)
		return 0;
	return btf ? BPF_CORE_READ_BITFIELD(t, in_iowait) :
		     BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
}

static __always_inline void do_blocked(void *ctx, bool btf,
				       struct task_struct *prev,
				       __s64 report, const __u64 *taken,
				       long ntaken)
{
	struct btr_cpu_acct *a;
	struct resv r;
	struct btr_blocked *e;
	__u64 caller;

	if (!blocked_wanted(report, taken, ntaken))
		return;
	a = acct_get(BTR_PROG_BLOCKED);
	if (!a)
		return;
	caller = blocked_caller(ctx, taken, ntaken, a);
	r = reserve(a, sizeof(struct btr_blocked), BTR_REC_BLOCKED);
	e = (void *)r.rec;
	if (!e)
		return;
	e->pid = TREAD(btf, prev, pid);
	e->io_wait = io_wait_of(btf, prev, report);
	e->caller = caller;
	submit(r);
}


/* The frame-pointer walk of a user stack (x86-64): how far above the
 * user sp a frame may be, 64 MiB (a thread's stack is 8 MiB by default;
 * a frame past the bound ends the walk as the chain's end would). */
#define USTACK_SPAN (64ull << 20)

/* A saved frame: the caller's frame pointer, then the return address. */
struct user_frame {
	__u64 next;
	__u64 ret;
};

/* The user stack of a 64-bit task from its user registers, through frame
 * pointers, as the kernel's perf_callchain_user() walks it (the pc, then
 * the return address of each frame), into ips[0 .. BTR_USTACK_MAX]: one
 * frame more when the stack is deeper. Unlike the kernel's walk it only
 * follows a frame pointer that can be a live frame: 8-aligned, above the
 * user sp and the previous frame (callers are at higher addresses), at
 * most USTACK_SPAN above sp. Code built without frame pointers leaves any
 * value in rbp; the kernel would read there (a fault costs microseconds),
 * this walk stops, with the same frames for every valid chain. A chain
 * that leaves the stack for a lower one (a signal handler on an
 * alternate stack) ends there. Returns the frames, -1 when the registers
 * cannot be read. */
struct user_walk_state {
	struct stack_buf *b;
	__u32 n;    /* kernel frames before the user ones */
	__u32 m;    /* user frames taken */
	__u64 sp;
	__u64 fp;
	__u64 prev; /* the previous frame pointer (sp at first) */
};

/* user_walk(): one frame a call (bpf_loop: verified once, whatever the
 * depth). */
static long user_walk_frame(__u64 i, void *data)
{
	struct user_walk_state *w = data;
	struct user_frame f;
	__u64 fp = w->fp;
	__u32 at;

	if ((fp & 7) || fp < w->prev || fp - w->sp >= USTACK_SPAN ||
	    (i > 0 && fp == w->prev))
		return 1;
	if (bpf_probe_read_user(&f, sizeof(f), (void *)fp) || !f.ret)
		return 1;
	at = w->n + w->m;
	if (at > BTR_STACK_MAX + BTR_USTACK_MAX)
		return 1;
	w->b->s.ips[at] = f.ret;
	w->m++;
	w->prev = fp;
	w->fp = f.next;
	return 0;
}

/* --callstacks with a slice: bytes of user stack copied at each sleep
 * (0: frame pointers alone), set by userspace; at most BTR_SLICE_MAX. */
const volatile __u32 ustack_slice = 0;
/* Past the frame the chain starts at, the slice goes on this far (a
 * caller's CFI may save registers above its frame pointer's slot). */
#define SLICE_PAST_FP 512

/* The slice's scratch, one per CPU id, indexed by the CPU (as
 * kstack_scratch: userspace sizes it to one entry without a slice). A
 * page past the record's end, so that the verifier sees any copy of up
 * to a page at any offset in the slice fit. */
struct ustack_buf {
	struct btr_ustack u;
	__u8 spill[4096];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_buf);
} ustack_scratch SEC(".maps");

/* take_slice(): one page a call, so that a stack ending inside the slice
 * gives what lies below its end instead of nothing. */
struct slice_copy {
	struct btr_ustack *u;
	__u64 sp;
	__u32 want;
};

static long slice_page(__u64 i, void *data)
{
	struct slice_copy *c = data;
	__u64 at = c->u->size, len;

	(void)i;
	if (at >= c->want)
		return 1;
	/* to the end of the page, or of what is wanted */
	len = 4096 - ((c->sp + at) & 4095);
	if (len > c->want - at)
		len = c->want - at;
	/* bounded where the verifier sees them (as kstack_clamp()) */
	asm volatile("" : "+r"(at), "+r"(len));
	at &= BTR_SLICE_MAX - 1;
	len &= 8191;
	if (len > 4096)
		return 1;
	if (bpf_probe_read_user(&c->u->data[at], len, (void *)(c->sp + at)))
		return 1;
	c->u->size = (__u32)(at + len);
	return 0;
}

/* The user registers and the stack slice of the current task into the
 * ring, before its stack record: up to ustack_slice bytes from sp, fewer
 * when the frame-pointer chain (first frame fp, 0: none) starts close
 * above (the unwinder joins it there). Returns whether it was written. */
static __always_inline bool take_slice(struct pt_regs *regs, __u64 fp,
				       struct btr_cpu_acct *a)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ustack_buf *ub = bpf_map_lookup_elem(&ustack_scratch, &cpu);
	struct btr_ustack *u = ub ? &ub->u : NULL;
	struct slice_copy c = {};
	void *ring;
	__u64 sp = regs->sp;
	__u32 size;

	if (!u)
		return false;
	c.u = u;
	c.sp = sp;
	c.want = ustack_slice;
	if (fp > sp && fp - sp + 16 + SLICE_PAST_FP < c.want)
		c.want = (__u32)(fp - sp) + 16 + SLICE_PAST_FP;
	if (c.want > BTR_SLICE_MAX)
		c.want = BTR_SLICE_MAX;
	u->size = 0;
	bpf_loop(BTR_SLICE_MAX / 4096 + 1, slice_page, &c, 0);
	u->regs[BTR_UREG_IP] = regs->ip;
	u->regs[BTR_UREG_SP] = sp;
	u->regs[BTR_UREG_BP] = regs->bp;
	u->regs[BTR_UREG_BX] = regs->bx;
	u->regs[BTR_UREG_R12] = regs->r12;
	u->regs[BTR_UREG_R13] = regs->r13;
	u->regs[BTR_UREG_R14] = regs->r14;
	u->regs[BTR_UREG_R15] = regs->r15;
	u->pid = (__s32)bpf_get_current_pid_tgid();
	u->h.ts = bpf_ktime_get_boot_ns();
	u->h.lost = 0;
	u->h.pid = u->pid;
	u->h.type = BTR_REC_USTACK;
	u->h.common_flags = 0;
	u->h.pad = 0;
	size = u->size;
	if (size > BTR_SLICE_MAX)
		size = BTR_SLICE_MAX;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (ring && !bpf_ringbuf_output(ring, u, BTR_USTACK_SIZE(size),
					wake_flags(ring, a)))
		return true;
	a->slice_lost++;
	return false;
}

/* Processes whose /proc/PID/maps the reader has read, with when it read
 * them (BOOTTIME; userspace adds them), and when each process last
 * exec'd (this side): the samples of a process not read since its exec
 * come with where their frames are mapped (BTR_REC_VMAS), taken while it
 * lives. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} known_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} exec_times SEC(".maps");

/* Whether the reader has read the maps of process tgid since it last
 * exec'd. */
static __always_inline bool maps_known(__u32 tgid)
{
	__u64 *read = bpf_map_lookup_elem(&known_procs, &tgid), *exec;

	if (!read)
		return false;
	exec = bpf_map_lookup_elem(&exec_times, &tgid);
	return !exec || *read > *exec;
}

/* The program each process exec'd while recorded, for its mapping
 * records (btr_vmas.exe). */
struct exe_path {
	char name[BTR_FILENAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct exe_path);
} exe_paths SEC(".maps");

/* An exec's program name being stored into exe_paths, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exe_path);
} vmas_scratch_exe SEC(".maps");

/* The BTR_REC_VMAS record being built, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct btr_vmas);
} vmas_scratch SEC(".maps");

struct vma_find {
	struct btr_vmas *e;
};

/* The file of mapping v (f, NULL: none): inode, device, name. */
static __always_inline void vma_file(struct btr_vma *v, struct file *f)
{
	v->ino = 0;
	v->dev = 0;
	v->pad = 0;
	v->name[0] = '\0';
	if (!f)
		return;
	v->ino = BPF_CORE_READ(f, f_inode, i_ino);
	v->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	bpf_probe_read_kernel_str(v->name, sizeof(v->name),
				  BPF_CORE_READ(f, f_path.dentry, d_name.name));
}

/* bpf_find_vma()'s callback: the mapping into the record. */
static long vma_found(struct task_struct *task, struct vm_area_struct *vma,
		      void *data)
{
	struct btr_vmas *e = ((struct vma_find *)data)->e;
	__u32 i = e->n;
	struct btr_vma *v;
	struct file *f;

	(void)task;
	if (i >= BTR_VMAS_MAX)
		return 0;
	v = &e->v[i];
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	f = vma->vm_file;
	/* an anonymous mapping's vm_pgoff is its own start's page: no file
	 * offset (/proc/PID/maps says 0, as here) */
	v->pgoff = f ? vma->vm_pgoff : 0;
	vma_file(v, f);
	e->n = i + 1;
	return 0;
}

/* The program's text of task t as the record's first mapping. */
static __always_inline void vma_text(struct task_struct *t,
				     struct btr_vmas *e)
{
	struct btr_vma *v = &e->v[0];
	struct file *f = BPF_CORE_READ(t, mm, exe_file);

	e->n = 0;
	v->start = BPF_CORE_READ(t, mm, start_code);
	v->end = BPF_CORE_READ(t, mm, end_code);
	if (!f || v->end <= v->start)
		return;
	v->pgoff = BTR_VMA_TEXT;
	v->ino = BPF_CORE_READ(f, f_inode, i_ino);
	v->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	v->pad = 0;
	bpf_probe_read_kernel_str(v->name, sizeof(v->name),
				  BPF_CORE_READ(f, f_path.dentry, d_name.name));
	e->n = 1;
}

/* What an mmap() that made an executable mapping was asked (its system
 * call's arguments): that mapping, where a look-up cannot be made. */
struct mmap_args {
	__u64 len, off, flags;
	__s64 fd;
};

#define MAP_ANONYMOUS 0x20

/* The mapping an mmap() made at start, from its arguments m, into the
 * record: its file through the process's descriptor table (no mmap
 * lock). Pages of 4 KiB: x86-64's, the one architecture with the hook. */
static __always_inline void vma_from_args(struct task_struct *t,
					  struct btr_vmas *e, __u64 start,
					  const struct mmap_args *m)
{
	struct file **fds, *f = NULL;
	struct fdtable *fdt;
	struct btr_vma *v;
	__u32 i = e->n;

	if (i >= BTR_VMAS_MAX)
		return;
	v = &e->v[i];
	v->start = start;
	v->end = start + ((m->len + 4095) & ~4095ULL);
	v->pgoff = m->flags & MAP_ANONYMOUS ? 0 : m->off >> 12;
	if (!(m->flags & MAP_ANONYMOUS) && m->fd >= 0) {
		fdt = BPF_CORE_READ(t, files, fdt);
		if (fdt && m->fd < BPF_CORE_READ(fdt, max_fds)) {
			fds = BPF_CORE_READ(fdt, fd);
			bpf_probe_read_kernel(&f, sizeof(f), &fds[m->fd]);
		}
	}
	vma_file(v, f);
	e->n = i + 1;
}

/* A BTR_REC_VMAS record of process tgid with its program's text and the
 * mapping of pc (0: none; one bpf_find_vma() a program run: see
 * BTR_VMAS_MAX; 5.17). pc a mapping mmap() just made (m, its arguments;
 * NULL at a sleep): when the look-up fails (the mmap lock busy) or is
 * not made (an older kernel, --fallback find-vma), the mapping comes
 * from the arguments; else the failure is counted. Any kernel: the
 * program's text and the arguments' mapping need no 5.17 helper, so a
 * short-lived process's frames are placed on the older paths too. */
static __always_inline void emit_vmas(struct btr_cpu_acct *a, __u32 tgid,
				      __u64 pc, const struct mmap_args *m)
{
	/* read through probe reads (any kernel), the BTF pointer only for
	 * the look-up (5.11, where bpf_find_vma is) */
	struct task_struct *t = (void *)bpf_get_current_task();
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct vma_find c;
	struct btr_vmas *e;
	struct exe_path *ex;
	void *ring;

	e = bpf_map_lookup_elem(&vmas_scratch, &zero);
	if (!e)
		return;
	vma_text(t, e);
	ex = bpf_map_lookup_elem(&exe_paths, &tgid);
	if (ex)
		__builtin_memcpy(e->exe, ex->name, sizeof(e->exe));
	else
		e->exe[0] = '\0';
	c.e = e;
	if (pc && (pc < e->v[0].start || pc >= e->v[0].end)) {
		bool look = use_find_vma &&
			    bpf_core_enum_value_exists(enum bpf_func_id,
						       BPF_FUNC_find_vma);

		if (!look ||
		    bpf_find_vma(bpf_get_current_task_btf(), pc, vma_found, &c, 0)) {
			if (m)
				vma_from_args(t, e, pc, m);
			else if (a && look) /* none made: none failed */
				a->vmas_failed++;
		}
	}
	if (!e->n)
		return;
	e->tgid = (__s32)tgid;
	/* a process that has not exec'd since its fork has its parent's
	 * mappings besides its own */
	e->parent = BPF_CORE_READ(t, self_exec_id) ==
				    BPF_CORE_READ(t, parent_exec_id) ?
			    BPF_CORE_READ(t, real_parent, tgid) : 0;
	e->pad = 0;
	e->h.ts = bpf_ktime_get_boot_ns();
	e->h.lost = 0;
	e->h.pid = (__s32)bpf_get_current_pid_tgid();
	e->h.type = BTR_REC_VMAS;
	e->h.common_flags = 0;
	e->h.pad = 0;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if ((!ring || bpf_ringbuf_output(ring, e, sizeof(*e),
					 wake_flags(ring, a))) && a)
		a->vmas_lost++;
}

/* Before the stack of a process whose maps the reader has not read: its
 * program's text and the mapping of its first pc (b, after n kernel
 * frames, m user ones) outside it. */
#define VMAS_PCS 8

static __always_inline void record_vmas(struct stack_buf *b, __u32 n,
					__u32 m, struct btr_cpu_acct *a)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32), k;
	__u64 lo, hi, pc;

	if (maps_known(tgid) || n > BTR_STACK_MAX)
		return;
	lo = BPF_CORE_READ(t, mm, start_code);
	hi = BPF_CORE_READ(t, mm, end_code);
	pc = 0;
	for (k = 0; k < VMAS_PCS; k++) {
		if (k >= m)
			break;
		if (b->s.ips[n + k] < lo || b->s.ips[n + k] >= hi) {
			pc = b->s.ips[n + k];
			break;
		}
	}
	emit_vmas(a, tgid, pc, NULL);
}

static __always_inline long user_walk(struct stack_buf *b, __u32 n,
				      struct btr_cpu_acct *a)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct user_walk_state w = { .b = b, .n = n, .m = 1 };

	if (!regs || n > BTR_STACK_MAX)
		return -1;
	w.sp = regs->sp;
	w.fp = regs->bp;
	w.prev = w.sp;
	b->s.ips[n] = regs->ip;
	/* one frame more than kept, to see a cut */
	bpf_loop(BTR_USTACK_MAX, user_walk_frame, &w, 0);
	record_vmas(b, n, w.m, a);
	/* a chain of two frames or more starts at a frame pointer (a
	 * register used for other things seldom leads to two) */
	if (ustack_slice &&
	    take_slice(regs, w.m > 2 ? regs->bp : 0, a))
		b->s.flags |= BTR_USTACK_SLICE;
	return w.m;
}

/* x86-64's user code segment: a task whose saved cs differs is a 32-bit
 * (compat) one, its stack walked by the kernel. */
#define USER64_CS 0x33

/* Whether user_walk() can take the stack of the current task: x86-64,
 * a kernel with bpf_task_pt_regs() and bpf_loop(), a 64-bit task. */
static __always_inline bool user_walk_fits(void)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs;

	if (!use_user_walk ||
	    !bpf_core_enum_value_exists(enum bpf_func_id,
					BPF_FUNC_task_pt_regs) ||
	    !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return regs && regs->cs == USER64_CS;
#else
	return false;
#endif
}

/* The user stack of prev (current), after its n kernel frames: through
 * frame pointers, as deep as BTR_USTACK_MAX. Kernel threads have none,
 * which is not a failure. Returns the frames taken. */
static __always_inline __u32 user_stack(void *ctx, struct task_struct *prev,
					struct stack_buf *b, __u32 n,
					struct btr_cpu_acct *a)
{
	long m;

	if ((BPF_CORE_READ(prev, flags) & PF_KTHREAD) ||
	    !BPF_CORE_READ(prev, mm)) {
		b->s.flags |= BTR_USTACK_NONE;
		a->ustack_none++;
		return 0;
	}
	if (n > BTR_STACK_MAX) /* for the verifier: n is at most that */
		return 0;
	if (user_walk_fits()) {
		m = user_walk(b, n, a);
	} else {
		m = bpf_get_stack(ctx, &b->s.ips[n], (BTR_USTACK_MAX + 1) * 8,
				  BPF_F_USER_STACK);
		if (m >= 0) {
			m /= sizeof(__u64);
			record_vmas(b, n, (__u32)m, a);
		}
	}
	if (m < 0) {
		b->s.flags |= BTR_USTACK_FAILED;
		a->ustack_failed++;
		return 0;
	}
	if (m > BTR_USTACK_MAX) {
		m = BTR_USTACK_MAX;
		b->s.flags |= BTR_USTACK_TRUNCATED;
		a->ustack_truncated++;
	}
	return (__u32)m;
}

/* After the switch record of a task going to sleep: its kernel then user
 * call stack, built in the scratch and copied into the ring with only the
 * frames it has (bpf_ringbuf_output, as a reservation's size must be
 * constant). Truncated and failed stacks are counted, and flagged on
 * their record. Returns the kernel frames, *taken their number. */
static __always_inline const __u64 *do_stack(void *ctx,
					     struct task_struct *prev,
					     __s64 report, long *taken)
{
	struct btr_cpu_acct *a;
	struct stack_buf *b;
	__u32 zero = 0, cpu, size, nu = 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	void *ring;
	long n = 0;

	*taken = 0;
	if (report != 0x01 && report != 0x02)
		return NULL;
	a = acct_get(BTR_PROG_STACK);
	b = bpf_map_lookup_elem(&stack_buf, &zero);
	if (!a || !b)
		return NULL;
	n = kernel_stack(ctx, tid, b->s.ips, a);
	b->s.flags = 0;
	if (n < 0) {
		n = 0;
		b->s.flags = BTR_STACK_FAILED;
		a->stack_failed++;
	} else {
		n /= sizeof(__u64);
		if (n > BTR_STACK_MAX) {
			n = BTR_STACK_MAX;
			b->s.flags = BTR_STACK_TRUNCATED;
			a->stack_truncated++;
		}
	}
	/* A user stack only under a whole kernel one: joined to a cut or
	 * missing kernel stack it would make a wrong call path. */
	if (!b->s.flags && user_stacks)
		nu = user_stack(ctx, prev, b, (__u32)n, a);
	b->s.nr = (__u32)n;
	b->s.nr_user = nu;
	b->s.pad = 0;
	b->s.pid = BPF_CORE_READ(prev, pid);
	b->s.tgid = BPF_CORE_READ(prev, tgid);
	b->s.h.ts = bpf_ktime_get_boot_ns();
	b->s.h.lost = (__u32)a->lost_pending;
	b->s.h.pid = (__s32)bpf_get_current_pid_tgid();
	b->s.h.type = BTR_REC_STACK;
	b->s.h.common_flags = 0;
	b->s.h.pad = 0;
	size = BTR_STACK_SIZE((__u32)n + nu);
	if (size > sizeof(b->s))
		size = sizeof(b->s);
	cpu = bpf_get_smp_processor_id();
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (ring && !bpf_ringbuf_output(ring, &b->s, size,
					wake_flags(ring, a))) {
		a->lost_pending = 0;
	} else {
		a->lost_total++;
		a->lost_pending++;
	}
	*taken = n;
	return b->s.ips;
}

/* The switch record. Its own function, the reservation tested once
 * right after it is made: 6.1's verifier does not know that a ring
 * record it has seen non-NULL stays so, and a second test of the same
 * pointer later (which the compiler emitted when the state was computed
 * between the two) made it follow a path where the record is never
 * submitted ("Unreleased reference"). */
static __always_inline void switch_fields(bool btf, struct btr_switch *e,
					  __s64 report,
					  struct task_struct *prev,
					  struct task_struct *next)
{
	e->prev_state = report;
	e->prev_pid = TREAD(btf, prev, pid);
	e->prev_prio = TREAD(btf, prev, prio);
	e->next_pid = TREAD(btf, next, pid);
	e->next_prio = TREAD(btf, next, prio);
	read_comm(btf, e->prev_comm, prev);
	read_comm(btf, e->next_comm, next);
}

static __always_inline void switch_record(bool btf, struct btr_cpu_acct *a,
					  __s64 report,
					  struct task_struct *prev,
					  struct task_struct *next)
{
	struct resv r = reserve(a, sizeof(struct btr_switch), BTR_REC_SWITCH);
	struct btr_switch *e = (void *)r.rec;

	if (!e)
		return;
	switch_fields(btf, e, report, prev, next);
	submit(r);
}

/* The switch record of a sleep that gets a blocked reason and no call
 * stack: both in one record (record.h), the function found before the
 * reservation. The same single test of the reservation as above. */
static __always_inline void switch_blocked_record(void *ctx, bool btf,
						  struct btr_cpu_acct *a,
						  __s64 report,
						  struct task_struct *prev,
						  struct task_struct *next)
{
	__u64 caller = blocked_caller(ctx, NULL, 0, a);
	struct resv r;
	struct btr_switch_blocked *e;

	if (a)
		a->runs[BTR_PROG_BLOCKED]++;
	r = reserve(a, sizeof(struct btr_switch_blocked),
		    BTR_REC_SWITCH_BLOCKED);
	e = (void *)r.rec;
	if (!e) {
		/* two events lost, as two program runs were counted: one
		 * more than reserve() counts */
		if (a) {
			a->lost_total++;
			a->lost_pending++;
		}
		return;
	}
	switch_fields(btf, &e->sw, report, prev, next);
	e->caller = caller;
	e->io_wait = io_wait_of(btf, prev, report);
	e->pad = 0;
	submit(r);
}

static __always_inline int do_switch(void *ctx, bool btf, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next, __u32 state)
{
	struct btr_cpu_acct *a = acct_get(BTR_PROG_SWITCH);
	__s64 report = report_state(btf, preempt, state, prev);
	const __u64 *st = NULL;
	long ntaken = 0;

	if (!callstacks && blocked_wanted(report, NULL, 0)) {
		switch_blocked_record(ctx, btf, a, report, prev, next);
		return 0;
	}
	switch_record(btf, a, report, prev, next);
	/* With --callstacks the stack is taken once, for both records. */
	if (callstacks)
		st = do_stack(ctx, prev, report, &ntaken);
	if (blocked_mode != BTR_BLOCKED_NONE)
		do_blocked(ctx, btf, prev, report, st, ntaken);
	return 0;
}

static __always_inline int do_wakeup(bool btf, struct task_struct *p,
				     enum btr_prog prog, __u16 type)
{
	struct btr_cpu_acct *a = acct_get(prog);
	struct resv r = reserve(a, sizeof(struct btr_wakeup), type);
	struct btr_wakeup *e = (void *)r.rec;

	if (!e)
		return 0;
	e->h.common_flags = irq_flags(btf, a);
	e->pid = TREAD(btf, p, pid);
	e->prio = TREAD(btf, p, prio);
	e->target_cpu = task_cpu(btf, p);
	e->pad = 0;
	read_comm(btf, e->comm, p);
	submit(r);
	return 0;
}

static __always_inline int do_newtask(bool btf, struct task_struct *p,
				      __u64 flags)
{
	struct btr_cpu_acct *a = acct_get(BTR_PROG_NEWTASK);
	struct resv r = reserve(a, sizeof(struct btr_newtask), BTR_REC_NEWTASK);
	struct btr_newtask *e = (void *)r.rec;

	if (!e)
		return 0;
	e->clone_flags = flags;
	e->pid = TREAD(btf, p, pid);
	e->oom_score_adj = oom_score_adj(btf, p);
	read_comm(btf, e->comm, p);
	submit(r);
	return 0;
}

static __always_inline int do_rename(bool btf, struct task_struct *p,
				     const char *comm)
{
	struct btr_cpu_acct *a = acct_get(BTR_PROG_RENAME);
	struct resv r = reserve(a, sizeof(struct btr_rename), BTR_REC_RENAME);
	struct btr_rename *e = (void *)r.rec;

	if (!e)
		return 0;
	e->pid = TREAD(btf, p, pid);
	e->oom_score_adj = oom_score_adj(btf, p);
	read_comm(btf, e->oldcomm, p);
	__builtin_memset(e->newcomm, 0, BTR_COMM_LEN);
	bpf_probe_read_kernel_str(e->newcomm, BTR_COMM_LEN, comm);
	submit(r);
	return 0;
}

static __always_inline int do_fork(bool btf, struct task_struct *parent,
				   struct task_struct *child)
{
	struct btr_cpu_acct *a = acct_get(BTR_PROG_FORK);
	struct resv r = reserve(a, sizeof(struct btr_fork), BTR_REC_FORK);
	struct btr_fork *e = (void *)r.rec;

	if (!e)
		return 0;
	e->parent_pid = TREAD(btf, parent, pid);
	e->child_pid = TREAD(btf, child, pid);
	e->child_tgid = TREAD(btf, child, tgid);
	e->pad = 0;
	read_comm(btf, e->parent_comm, parent);
	read_comm(btf, e->child_comm, child);
	submit(r);
	return 0;
}

static __always_inline int do_exec(bool btf, struct task_struct *p, int old_pid,
				   struct linux_binprm *bprm)
{
	struct btr_cpu_acct *a = acct_get(BTR_PROG_EXEC);
	struct resv r = reserve(a, sizeof(struct btr_exec), BTR_REC_EXEC);
	struct btr_exec *e = (void *)r.rec;
	__u32 tgid, zero = 0;
	__u64 now;

	if (!e)
		return 0;
	e->pid = TREAD(btf, p, pid);
	e->old_pid = old_pid;
	/* a new program: where its frames are mapped is not known (maps
	 * read before now are the old program's); its text is mapped
	 * already (its libraries not yet). The key from the stack: 6.1
	 * takes no map key in ring memory. */
	tgid = (__u32)e->pid;
	now = bpf_ktime_get_boot_ns();
	bpf_map_update_elem(&exec_times, &tgid, &now, BPF_ANY);
	if (user_stacks) {
		struct exe_path *ex = bpf_map_lookup_elem(&vmas_scratch_exe,
							  &zero);

		if (ex) {
			bpf_probe_read_kernel_str(ex->name, sizeof(ex->name),
						  TREAD(btf, bprm, filename));
			bpf_map_update_elem(&exe_paths, &tgid, ex, BPF_ANY);
		}
		emit_vmas(a, tgid, 0, NULL);
	}
	__builtin_memset(e->filename, 0, BTR_FILENAME_LEN);
	bpf_probe_read_kernel_str(e->filename, BTR_FILENAME_LEN,
				  TREAD(btf, bprm, filename));
	submit(r);
	return 0;
}

static __always_inline int do_exit(bool btf, struct task_struct *p,
				   enum btr_prog prog, __u16 type)
{
	struct btr_cpu_acct *a = acct_get(prog);
	struct resv r = reserve(a, sizeof(struct btr_exit), type);
	struct btr_exit *e = (void *)r.rec;

	if (!e)
		return 0;
	e->pid = TREAD(btf, p, pid);
	e->tgid = TREAD(btf, p, tgid);
	e->prio = TREAD(btf, p, prio);
	e->pad = 0;
	read_comm(btf, e->comm, p);
	submit(r);
	return 0;
}

/* Each tracepoint gets a tp_btf and a raw_tp program with the same body;
 * `btf` tells the body which kind of pointers it has. */
#define BTR_TP(tp, name, args, body)                                           \
	SEC("tp_btf/" #tp) int BPF_PROG(btf_##name, args)                      \
	{                                                                      \
		const bool btf = true;                                         \
		body                                                           \
	}                                                                      \
	SEC("raw_tp/" #tp) int BPF_PROG(raw_##name, args)                      \
	{                                                                      \
		const bool btf = false;                                        \
		body                                                           \
	}
#define ARGS(...) __VA_ARGS__

/* Kernels >= 5.18 pass prev_state; older ones need the task's state. */
BTR_TP(sched_switch, sched_switch,
       ARGS(bool preempt, struct task_struct *prev, struct task_struct *next,
	    unsigned int prev_state),
       return do_switch(ctx, btf, preempt, prev, next, prev_state);)
BTR_TP(sched_switch, sched_switch_old,
       ARGS(bool preempt, struct task_struct *prev, struct task_struct *next),
       return do_switch(ctx, btf, preempt, prev, next,
			 raw_task_state(prev));)
BTR_TP(sched_waking, sched_waking, ARGS(struct task_struct *p),
       return do_wakeup(btf, p, BTR_PROG_WAKING, BTR_REC_WAKING);)
BTR_TP(sched_wakeup_new, sched_wakeup_new, ARGS(struct task_struct *p),
       return do_wakeup(btf, p, BTR_PROG_WAKEUP_NEW, BTR_REC_WAKEUP_NEW);)
BTR_TP(task_newtask, task_newtask, ARGS(struct task_struct *p, __u64 flags),
       return do_newtask(btf, p, flags);)
BTR_TP(task_rename, task_rename, ARGS(struct task_struct *p, const char *comm),
       return do_rename(btf, p, comm);)
BTR_TP(sched_process_fork, sched_process_fork,
       ARGS(struct task_struct *parent, struct task_struct *child),
       return do_fork(btf, parent, child);)
BTR_TP(sched_process_exec, sched_process_exec,
       ARGS(struct task_struct *p, int old_pid, struct linux_binprm *bprm),
       return do_exec(btf, p, old_pid, bprm);)
BTR_TP(sched_process_exit, sched_process_exit, ARGS(struct task_struct *p),
       return do_exit(btf, p, BTR_PROG_EXIT, BTR_REC_EXIT);)
BTR_TP(sched_process_free, sched_process_free, ARGS(struct task_struct *p),
       return do_exit(btf, p, BTR_PROG_FREE, BTR_REC_FREE);)


/* Clock sync, run on demand by userspace (BPF_PROG_TEST_RUN): BOOTTIME,
 * MONOTONIC and TAI read back to back in the kernel, then BOOTTIME again so
 * userspace can see how tight the reads were. */
/* An executable mapping made by mmap() (the loader mapping a program's
 * libraries), at the system call's exit, where interrupts are on: the
 * only place a look-up of it can be made on a PREEMPT_RT kernel, and one
 * that never finds the mmap lock's deferred release busy. Recorded
 * (BTR_REC_VMAS), so that a short-lived process's library frames are
 * placed though it is gone before the reader reads its maps. Loaded with user
 * stacks (capture.c). */
#define X86_NR_MMAP 9
#define PROT_EXEC 0x4

static __always_inline int do_mmap_exit(__u64 nr, __u64 prot, long ret,
					struct mmap_args *m)
{
	__u32 tgid;

	if (nr != X86_NR_MMAP || (unsigned long)ret >= (unsigned long)-4095L ||
	    !(prot & PROT_EXEC))
		return 0;
	/* whether or not its maps were read: a reading before this mmap
	 * lacks it (a process's executable mmaps are few) */
	tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	emit_vmas(acct_get(BTR_PROG_MAX), tgid, (__u64)ret, m);
	return 0;
}

/* tp_btf: the registers read directly (every system call's exit runs it,
 * so the cheaper the better); raw_tp: through probe reads. */
SEC("tp_btf/sys_exit")
int BPF_PROG(btf_mmap_exit, struct pt_regs *regs, long ret)
{
	struct mmap_args m;

	if (regs->orig_ax != X86_NR_MMAP)
		return 0;
	m.len = regs->si;
	m.off = regs->r9;
	m.flags = regs->r10;
	m.fd = (__s64)regs->r8;
	return do_mmap_exit(regs->orig_ax, regs->dx, ret, &m);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(raw_mmap_exit, struct pt_regs *regs, long ret)
{
	__u64 nr = BPF_CORE_READ(regs, orig_ax);
	struct mmap_args m;

	if (nr != X86_NR_MMAP)
		return 0;
	m.len = BPF_CORE_READ(regs, si);
	m.off = BPF_CORE_READ(regs, r9);
	m.flags = BPF_CORE_READ(regs, r10);
	m.fd = (__s64)BPF_CORE_READ(regs, r8);
	return do_mmap_exit(nr, BPF_CORE_READ(regs, dx), ret, &m);
}

SEC("raw_tp")
int BPF_PROG(clock_sync, __u64 seq)
{
	struct resv r = reserve(NULL, sizeof(struct btr_clock), BTR_REC_CLOCK);
	struct btr_clock *e = (void *)r.rec;

	if (!e)
		return 1;
	e->h.ts = bpf_ktime_get_boot_ns();
	e->mono = bpf_ktime_get_ns();
	e->tai = 0;
	if (use_tai && bpf_core_enum_value_exists(enum bpf_func_id,
						  BPF_FUNC_ktime_get_tai_ns))
		e->tai = bpf_ktime_get_tai_ns();
	e->boot_after = bpf_ktime_get_boot_ns();
	e->seq = seq;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}
