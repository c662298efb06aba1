// SPDX-License-Identifier: GPL-2.0
/* Benchmark floor: the cheapest BPF recorder of the tracepoints bpftrace-rec
 * records, to measure how far the real recorder is from the cost of its own
 * BPF programs (make bench). Same records (bpf/record.h) into one ring per
 * CPU (an array of ring-buffer maps), always submitted with
 * BPF_RB_NO_WAKEUP; fields read with direct BTF loads (tp_btf only, no
 * CO-RE probe-read helpers, no accounting other than a per-CPU drop count
 * on the failure path). sched_switch keeps the raw prev_state argument, with
 * the preemption flag in bit 62, instead of computing the report state.
 * With wake_every set (floor -w), every record is submitted with
 * BPF_RB_FORCE_WAKEUP instead: the price of a wakeup per record. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "rings.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool wake_every = false; /* set between open and load */


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void *reserve(__u32 size, __u16 type, __s32 pid)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	struct btr_hdr *h = ring ? bpf_ringbuf_reserve(ring, size, 0) : NULL;
	__u64 *d;

	if (!h) {
		d = bpf_map_lookup_elem(&drops, &zero);
		if (d)
			(*d)++;
		return NULL;
	}
	h->ts = bpf_ktime_get_boot_ns();
	h->lost = 0;
	h->pid = pid;
	h->type = type;
	h->common_flags = 0;
	h->pad = 0;
	return h;
}

static __always_inline void copy_comm(char *dst, struct task_struct *t)
{
	__u64 *d = (__u64 *)dst;

	d[0] = *(__u64 *)&t->comm[0];
	d[1] = *(__u64 *)&t->comm[8];
}

static __always_inline __u64 submit_flags(void)
{
	return wake_every ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline __s32 current_pid(void)
{
	return (__s32)bpf_get_current_pid_tgid();
}

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct btr_switch *e = reserve(sizeof(*e), BTR_REC_SWITCH, prev->pid);

	if (!e)
		return 0;
	e->prev_state = (__s64)prev_state | ((__s64)preempt << 62);
	e->prev_pid = prev->pid;
	e->prev_prio = prev->prio;
	e->next_pid = next->pid;
	e->next_prio = next->prio;
	copy_comm(e->prev_comm, prev);
	copy_comm(e->next_comm, next);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

static __always_inline int wakeup(struct task_struct *p, __u16 type)
{
	struct btr_wakeup *e = reserve(sizeof(*e), type, current_pid());

	if (!e)
		return 0;
	e->pid = p->pid;
	e->prio = p->prio;
	e->target_cpu = p->thread_info.cpu;
	e->pad = 0;
	copy_comm(e->comm, p);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(floor_waking, struct task_struct *p)
{
	return wakeup(p, BTR_REC_WAKING);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(floor_wakeup_new, struct task_struct *p)
{
	return wakeup(p, BTR_REC_WAKEUP_NEW);
}

SEC("tp_btf/task_newtask")
int BPF_PROG(floor_newtask, struct task_struct *p, __u64 flags)
{
	struct btr_newtask *e =
		reserve(sizeof(*e), BTR_REC_NEWTASK, current_pid());

	if (!e)
		return 0;
	e->clone_flags = flags;
	e->pid = p->pid;
	e->oom_score_adj = p->signal->oom_score_adj;
	copy_comm(e->comm, p);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(floor_rename, struct task_struct *p, const char *comm)
{
	struct btr_rename *e = reserve(sizeof(*e), BTR_REC_RENAME, current_pid());

	if (!e)
		return 0;
	e->pid = p->pid;
	e->oom_score_adj = p->signal->oom_score_adj;
	copy_comm(e->oldcomm, p);
	__builtin_memset(e->newcomm, 0, BTR_COMM_LEN);
	bpf_probe_read_kernel_str(e->newcomm, BTR_COMM_LEN, comm);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_fork, struct task_struct *parent, struct task_struct *child)
{
	struct btr_fork *e = reserve(sizeof(*e), BTR_REC_FORK, current_pid());

	if (!e)
		return 0;
	e->parent_pid = parent->pid;
	e->child_pid = child->pid;
	e->child_tgid = child->tgid;
	e->pad = 0;
	copy_comm(e->parent_comm, parent);
	copy_comm(e->child_comm, child);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(floor_exec, struct task_struct *p, int old_pid,
	     struct linux_binprm *bprm)
{
	struct btr_exec *e = reserve(sizeof(*e), BTR_REC_EXEC, current_pid());

	if (!e)
		return 0;
	e->pid = p->pid;
	e->old_pid = old_pid;
	__builtin_memset(e->filename, 0, BTR_FILENAME_LEN);
	bpf_probe_read_kernel_str(e->filename, BTR_FILENAME_LEN, bprm->filename);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

static __always_inline int exit_rec(struct task_struct *p, __u16 type)
{
	struct btr_exit *e = reserve(sizeof(*e), type, current_pid());

	if (!e)
		return 0;
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->prio = p->prio;
	e->pad = 0;
	copy_comm(e->comm, p);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(floor_exit, struct task_struct *p)
{
	return exit_rec(p, BTR_REC_EXIT);
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(floor_free, struct task_struct *p)
{
	return exit_rec(p, BTR_REC_FREE);
}
