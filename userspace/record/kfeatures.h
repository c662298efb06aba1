/* What the running kernel offers the BPF programs, read from its BTF
 * before they load, and the fallbacks a test forces (--fallback, a test
 * hook): each newer path has an older one that kernels without it take,
 * and forcing it on a kernel that has the newer one is how the older path
 * is tested (scripts/kernel-check.sh). docs/kernels.md lists each
 * feature's first kernel. */
#ifndef BTR_KFEATURES_H
#define BTR_KFEATURES_H

#include <stdbool.h>
#include <stdint.h>

enum kfeature {
	KF_TP_BTF,       /* tp_btf programs (5.5); else raw_tp */
	KF_SWITCH_STATE, /* sched_switch passes prev_state (5.18); else the
			  * task's state is read */
	KF_RDONLY_CAST,  /* bpf_rdonly_cast (6.2): the preempt count by a
			  * plain load; else bpf_probe_read_kernel */
	KF_USER_WALK,    /* bpf_task_pt_regs (5.15) and bpf_loop (5.17):
			  * user stacks walked in BPF; else bpf_get_stack's */
	KF_KSTACK_CACHE, /* the same two: the per-thread kernel stack
			  * cache; else every sleep's stack is walked */
	KF_TAI,          /* bpf_ktime_get_tai_ns (6.1); else no TAI clock */
	KF_FIND_VMA,     /* bpf_find_vma (5.17): a mapping looked up at a
			  * sleep and at an executable mmap(); else the
			  * latter's from the system call's arguments */
	KF_COUNT
};

struct kfeatures {
	bool have[KF_COUNT];   /* the kernel has it (KF_TP_BTF: BTF) */
	bool forced[KF_COUNT]; /* --fallback: take the older path */
	/* distance from the runqueue to the preempt count in the per-CPU
	 * area (x86), 0 when the BTF does not tell */
	long long pc_from_rq;
	/* PREEMPT_RT: softirqs counted per task (task_struct's
	 * softirq_disable_cnt), which the BPF side reads too */
	bool rt_softirq;
};

/* The names --fallback takes: "raw-tp, switch-state, ..., all". */
const char *kfeatures_fallback_names(void);

/* Parses a --fallback list ("raw-tp,user-walk", "all", "" for none)
 * into forced[]. Returns 0, or -1 with the bad name in *bad. */
int kfeatures_parse_fallback(const char *list, bool forced[KF_COUNT],
			     const char **bad, int *badlen);

/* Reads the running kernel's BTF into k (forced[] left as it is).
 * Returns 0, or -1 when there is no kernel BTF. */
int kfeatures_probe(struct kfeatures *k);

/* Whether the recording takes the newer path. */
bool kfeatures_use(const struct kfeatures *k, enum kfeature f);

/* One -v line a feature: used, forced off, or missing with the kernel
 * that brought it. raw_tp: the programs ended up as raw_tp; the user
 * stack walk's line with callstacks, the kernel stack cache's with
 * kstacks (record_opts_kstacks). */
void kfeatures_log(const struct kfeatures *k, bool raw_tp, bool callstacks,
		   bool kstacks);

#endif
