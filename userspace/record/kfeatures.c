/* The running kernel's features for the BPF programs, from its BTF (the
 * helpers in enum bpf_func_id, the kfuncs, the tracepoints' argument
 * lists, the per-CPU section), and the fallbacks forced by --fallback. */
#include "record/kfeatures.h"

#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "util/log.h"

/* name: --fallback's; what: the newer path; since: its first kernel;
 * instead: what the recorder does without it. */
static const struct {
	const char *name, *what, *since, *instead;
} info[KF_COUNT] = {
	[KF_TP_BTF] = { "raw-tp", "tp_btf programs", "5.5",
			"raw tracepoints (fields read with bpf_probe_read_kernel)" },
	[KF_SWITCH_STATE] = { "switch-state", "sched_switch's prev_state argument",
			      "5.18", "the task's state read at the switch" },
	[KF_RDONLY_CAST] = { "rdonly-cast", "bpf_rdonly_cast for the preempt count",
			     "6.2", "the preempt count read with bpf_probe_read_kernel" },
	[KF_USER_WALK] = { "user-walk",
			   "user stacks walked in BPF (bpf_task_pt_regs, bpf_loop)",
			   "5.17", "user stacks from bpf_get_stack(BPF_F_USER_STACK)" },
	[KF_KSTACK_CACHE] = { "kstack-cache",
			      "the per-thread kernel stack cache (bpf_task_pt_regs, bpf_loop)",
			      "5.17", "every sleep's kernel stack walked" },
	[KF_TAI] = { "tai", "bpf_ktime_get_tai_ns", "6.1",
		     "clock snapshots without TAI" },
	[KF_FIND_VMA] = { "find-vma", "mapping look-ups in BPF (bpf_find_vma)",
			  "5.17",
			  "executable mmaps recorded from their arguments, a "
			  "sleeping process's libraries left to /proc" },
};

const char *kfeatures_fallback_names(void)
{
	static char names[128];
	size_t n = 0;
	int f;

	if (!names[0]) {
		for (f = 0; f < KF_COUNT; f++)
			n += (size_t)snprintf(names + n, sizeof(names) - n,
					      "%s, ", info[f].name);
		snprintf(names + n, sizeof(names) - n, "all");
	}
	return names;
}

int kfeatures_parse_fallback(const char *list, bool forced[KF_COUNT],
			     const char **bad, int *badlen)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ",");
		int f, hit = 0;

		for (f = 0; f < KF_COUNT; f++) {
			if ((n == 3 && !strncmp(p, "all", 3)) ||
			    (strlen(info[f].name) == n &&
			     !strncmp(p, info[f].name, n))) {
				forced[f] = true;
				hit = 1;
			}
		}
		if (!hit && n) {
			*bad = p;
			*badlen = (int)n;
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Whether enum bpf_func_id has BPF_FUNC_<name>: the kernel has the
 * helper (as the BPF side's bpf_core_enum_value_exists() sees it). */
static bool has_helper(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, "bpf_func_id", BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e;
	char full[64];
	int i;

	if (!t)
		return false;
	snprintf(full, sizeof(full), "BPF_FUNC_%s", name);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), full))
			return true;
	return false;
}

/* Does this kernel pass prev_state to sched_switch (5.18+)? Looks at the
 * arity of the tracepoint's BTF type: ctx + 4 arguments. */
static bool switch_has_prev_state(const struct btf *btf)
{
	const struct btf_type *t;
	int id;

	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch",
				    BTF_KIND_TYPEDEF);
	if (id <= 0)
		return true;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type); /* pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	return !(t && btf_is_func_proto(t)) || btf_vlen(t) >= 5;
}

/* The offset of per-CPU variable `name` in the kernel's .data..percpu
 * section (BTF), or -1. */
static long long percpu_offset(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_var_secinfo *v;
	int i;

	if (!sec)
		return -1;
	v = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *t = btf__type_by_id(btf, v->type);

		if (t && !strcmp(btf__name_by_offset(btf, t->name_off), name))
			return v->offset;
	}
	return -1;
}

/* The byte offset of member `name` in struct or union `t`, looked for
 * in anonymous members too (6.2 to 6.14 keep the preempt count in an
 * anonymous struct inside a union of struct pcpu_hot); -1 when absent. */
static long long member_offset(const struct btf *btf, const struct btf_type *t,
			       const char *name, int depth)
{
	const struct btf_member *m;
	int i;

	if (!t || !btf_is_composite(t) || depth > 8)
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		long long off = btf_member_bit_offset(t, i) / 8, in;

		if (mn && *mn) {
			if (!strcmp(mn, name))
				return off;
			continue;
		}
		in = member_offset(btf, btf__type_by_id(btf, m->type), name,
				   depth + 1);
		if (in >= 0)
			return off + in;
	}
	return -1;
}

/* Where this CPU's preempt count is, from its runqueue: the distance
 * between __preempt_count (or pcpu_hot.preempt_count, 6.2 to 6.14) and
 * runqueues in the per-CPU section; 0 when the kernel's BTF does not
 * tell (x86 only: arm64 reads the count from the task). */
static long long preempt_count_from_rq(const struct btf *btf)
{
	long long rq, pc;
	int id;

	rq = percpu_offset(btf, "runqueues");
	pc = percpu_offset(btf, "__preempt_count");
	id = btf__find_by_name_kind(btf, "pcpu_hot", BTF_KIND_STRUCT);
	if (pc < 0 && id > 0 && (pc = percpu_offset(btf, "pcpu_hot")) >= 0) {
		long long in = member_offset(btf, btf__type_by_id(btf, id),
					     "preempt_count", 0);

		pc = in >= 0 ? pc + in : -1;
	}
	return rq >= 0 && pc >= 0 ? pc - rq : 0;
}

int kfeatures_probe(struct kfeatures *k)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool walk;
	int id;

	if (!btf)
		return -1;
	k->have[KF_TP_BTF] = true;
	k->have[KF_SWITCH_STATE] = switch_has_prev_state(btf);
	k->have[KF_RDONLY_CAST] =
		btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	walk = has_helper(btf, "task_pt_regs") && has_helper(btf, "loop");
#if defined(__x86_64__)
	k->have[KF_USER_WALK] = walk;
	k->have[KF_KSTACK_CACHE] = walk;
#else
	(void)walk;
#endif
	k->have[KF_TAI] = has_helper(btf, "ktime_get_tai_ns");
	k->have[KF_FIND_VMA] = has_helper(btf, "find_vma");
	k->pc_from_rq = preempt_count_from_rq(btf);
	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	k->rt_softirq = id > 0 && member_offset(btf, btf__type_by_id(btf, id),
						"softirq_disable_cnt", 0) >= 0;
	btf__free(btf);
	return 0;
}

bool kfeatures_use(const struct kfeatures *k, enum kfeature f)
{
	return f < KF_COUNT && k->have[f] && !k->forced[f];
}

void kfeatures_log(const struct kfeatures *k, bool raw_tp, bool callstacks,
		   bool kstacks)
{
	int f;

	for (f = 0; f < KF_COUNT; f++) {
		const char *why;

		if (((f == KF_USER_WALK || f == KF_FIND_VMA) && !callstacks) ||
		    (f == KF_KSTACK_CACHE && !kstacks))
			continue;
		if (f == KF_TP_BTF ? !raw_tp : kfeatures_use(k, f)) {
			log_debug("kernel: %s (since %s): yes", info[f].what,
				  info[f].since);
			continue;
		}
		why = k->forced[f]  ? "forced by --fallback"
		      : !k->have[f] ? "not in this kernel"
				    : "refused by the verifier";
		log_debug("kernel: %s (since %s): no, %s; %s instead",
			  info[f].what, info[f].since, why, info[f].instead);
	}
	if (!k->pc_from_rq) {
#if defined(__x86_64__)
		log_warn("wakeups will not say whether they came from an "
			 "interrupt: the kernel's BTF does not show where its "
			 "preempt count is");
#endif
	} else {
		log_debug("kernel: interrupt context of wakeups: yes (the "
			  "preempt count %+lld bytes from the runqueue%s)",
			  k->pc_from_rq,
			  k->rt_softirq ? "; PREEMPT_RT: softirqs from the "
					  "task's softirq_disable_cnt" : "");
	}
}
