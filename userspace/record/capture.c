/* Loading, attaching and draining the BPF side of a recording. */
#include "record/capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/rings.h"
#include "sched.skel.h"
#include "util/log.h"

struct capture {
	struct sched_bpf *skel;
	struct capture_opts o;
	uint32_t ncpus;
	uint64_t ring_size; /* the largest */
	const uint64_t *ring_sizes; /* per CPU id, or NULL: ring_size each */
	struct rings *rings;
	struct bpf_link **links;
	size_t nlinks;
	bool raw_tp;
};

static uint64_t round_pow2(uint64_t v, uint64_t min)
{
	uint64_t p = min;

	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

/* Does this kernel pass prev_state to sched_switch (5.18+)? Looks at the
 * arity of the tracepoint's BTF type: ctx + 4 arguments. */
static bool switch_has_prev_state(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool ok = true;
	int id;

	if (!btf)
		return true;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch",
				    BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		t = btf__type_by_id(btf, t->type); /* pointer */
		if (t && btf_is_ptr(t))
			t = btf__type_by_id(btf, t->type);
		if (t && btf_is_func_proto(t))
			ok = btf_vlen(t) >= 5;
	}
	btf__free(btf);
	return ok;
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
 * between __preempt_count (or pcpu_hot.preempt_count) and runqueues in the
 * per-CPU section; 0 when the kernel's BTF does not tell (x86 only: arm64
 * reads the count from the task). */
static long long preempt_count_from_rq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long rq, pc = -1;
	int id;

	if (!btf)
		return 0;
	rq = percpu_offset(btf, "runqueues");
	pc = percpu_offset(btf, "__preempt_count");
	id = btf__find_by_name_kind(btf, "pcpu_hot", BTF_KIND_STRUCT);
	if (pc < 0 && id > 0 && (pc = percpu_offset(btf, "pcpu_hot")) >= 0) {
		long long in = member_offset(btf, btf__type_by_id(btf, id),
					     "preempt_count", 0);

		pc = in >= 0 ? pc + in : -1;
	}
	btf__free(btf);
	return rq >= 0 && pc >= 0 ? pc - rq : 0;
}

/* The tracepoint programs as (tp_btf, raw_tp) pairs; the clock program is
 * handled apart. */
static void program_pairs(struct sched_bpf *s, struct bpf_program *pairs[][2],
			  size_t *n, bool new_switch)
{
	size_t i = 0;
#define PAIR(name)                                                             \
	do {                                                                   \
		pairs[i][0] = s->progs.btf_##name;                             \
		pairs[i][1] = s->progs.raw_##name;                             \
		i++;                                                           \
	} while (0)
	if (new_switch)
		PAIR(sched_switch);
	else
		PAIR(sched_switch_old);
	PAIR(sched_waking);
	PAIR(sched_wakeup_new);
	PAIR(task_newtask);
	PAIR(task_rename);
	PAIR(sched_process_fork);
	PAIR(sched_process_exec);
	PAIR(sched_process_exit);
	PAIR(sched_process_free);
#undef PAIR
	*n = i;
}

static void select_programs(struct capture *c, bool raw)
{
	struct bpf_program *pairs[16][2];
	struct bpf_program *p;
	size_t n, i;

	bpf_object__for_each_program(p, c->skel->obj)
		bpf_program__set_autoload(p, false);
	bpf_program__set_autoload(c->skel->progs.clock_sync, true);
	program_pairs(c->skel, pairs, &n, switch_has_prev_state());
	for (i = 0; i < n; i++)
		bpf_program__set_autoload(pairs[i][raw ? 1 : 0], true);
}

static int open_and_load(struct capture *c, bool raw, char *err, size_t errlen)
{
	int e;

	c->skel = sched_bpf__open();
	if (!c->skel) {
		snprintf(err, errlen, "cannot open BPF object: %s",
			 strerror(errno));
		return -errno;
	}
	c->skel->rodata->wakeup_bytes = c->ring_size / 2;
	c->skel->rodata->pc_from_rq = preempt_count_from_rq();
	c->skel->rodata->blocked_mode = c->o.blocked_mode;
	c->skel->rodata->callstacks = c->o.callstacks;
	c->skel->rodata->user_stacks = c->o.user_stacks;
	c->skel->rodata->kstack_check = c->o.kstack_check;
	c->skel->rodata->sched_text_start = c->o.sched_text[0];
	c->skel->rodata->sched_text_end = c->o.sched_text[1];
	c->skel->rodata->lock_text_start = c->o.lock_text[0];
	c->skel->rodata->lock_text_end = c->o.lock_text[1];
#if defined(__x86_64__)
	if (!c->skel->rodata->pc_from_rq)
		log_warn("wakeups will not say whether they came from an "
			 "interrupt: the kernel's BTF does not show where its "
			 "preempt count is");
#endif
	e = bpf_map__set_max_entries(c->skel->maps.rings, c->ncpus);
	/* the kernel stacks' cache: a scratch per CPU id and 4096 threads
	 * with --callstacks, one entry each (unused) without */
	if (!e)
		e = bpf_map__set_max_entries(c->skel->maps.kstack_scratch,
					     c->o.callstacks ? c->ncpus : 1);
	if (!e && !c->o.callstacks)
		e = bpf_map__set_max_entries(c->skel->maps.kstack_cache, 1);
	if (!e) {
		select_programs(c, raw);
		e = sched_bpf__load(c->skel);
	}
	if (e) {
		snprintf(err, errlen, "cannot load BPF programs (%s): %s",
			 raw ? "raw_tp" : "tp_btf", strerror(-e));
		sched_bpf__destroy(c->skel);
		c->skel = NULL;
		return e;
	}
	c->raw_tp = raw;
	return 0;
}

static int create_rings(struct capture *c, char *err, size_t errlen)
{
	uint64_t *sizes = calloc(c->ncpus, sizeof(*sizes));
	uint32_t cpu;

	if (!sizes) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (cpu = 0; cpu < c->ncpus; cpu++)
		sizes[cpu] = c->ring_sizes ? c->ring_sizes[cpu] : c->ring_size;
	c->rings = rings_new(bpf_map__fd(c->skel->maps.rings), c->ncpus, sizes,
			     c->o.on_record, c->o.ctx, err, errlen);
	free(sizes);
	return c->rings ? 0 : -EINVAL;
}

struct capture *capture_open(const struct capture_opts *o, char *err,
			     size_t errlen)
{
	struct capture *c = calloc(1, sizeof(*c));
	int e, n;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->o = *o;
	n = libbpf_num_possible_cpus();
	if (n <= 0) {
		snprintf(err, errlen, "cannot count possible CPUs");
		goto fail;
	}
	c->ncpus = (uint32_t)n;
	if (o->ring_sizes && o->nrings != c->ncpus) {
		snprintf(err, errlen, "%u rings planned for %u possible CPUs",
			 o->nrings, c->ncpus);
		goto fail;
	}
	c->ring_sizes = o->ring_sizes;
	c->ring_size = round_pow2(o->ringbuf_size,
				  (uint64_t)sysconf(_SC_PAGESIZE));
	e = o->force_raw_tp ? -1 : open_and_load(c, false, err, errlen);
	if (e) {
		if (!o->force_raw_tp)
			log_debug("%s; trying raw tracepoints", err);
		if (open_and_load(c, true, err, errlen))
			goto fail;
	}
	if (create_rings(c, err, errlen))
		goto fail;
	return c;
fail:
	capture_close(c);
	return NULL;
}

int capture_attach(struct capture *c, char *err, size_t errlen)
{
	struct bpf_program *p;

	c->links = calloc(32, sizeof(*c->links));
	if (!c->links)
		return -ENOMEM;
	bpf_object__for_each_program(p, c->skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p) || p == c->skel->progs.clock_sync)
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			int e = -errno;

			snprintf(err, errlen, "cannot attach %s: %s",
				 bpf_program__section_name(p), strerror(errno));
			capture_detach(c);
			return e;
		}
		c->links[c->nlinks++] = l;
	}
	return 0;
}

void capture_detach(struct capture *c)
{
	size_t i;

	for (i = 0; i < c->nlinks; i++)
		bpf_link__destroy(c->links[i]);
	c->nlinks = 0;
}

int capture_poll(struct capture *c, int timeout_ms)
{
	return rings_poll(c->rings, timeout_ms);
}

int capture_drain(struct capture *c)
{
	return rings_drain(c->rings);
}

int capture_clock_stamp(struct capture *c, uint64_t seq)
{
	uint64_t args[1] = { seq };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(args));
	int e = bpf_prog_test_run_opts(
		bpf_program__fd(c->skel->progs.clock_sync), &opts);

	if (e)
		return -errno;
	return opts.retval ? -ENOSPC : 0;
}

int capture_read_acct(struct capture *c, struct btr_cpu_acct *out)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.acct), &zero, out))
		return -errno;
	return 0;
}

uint64_t capture_recursion_misses(const struct capture *c, uint32_t *nprogs)
{
	struct bpf_program *p;
	uint64_t n = 0;

	*nprogs = 0;
	bpf_object__for_each_program(p, c->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
			n += info.recursion_misses;
			++*nprogs;
		}
	}
	return n;
}

uint32_t capture_ncpus(const struct capture *c)
{
	return c->ncpus;
}

struct rings *capture_rings(struct capture *c)
{
	return c->rings;
}

uint64_t capture_ring_size(const struct capture *c)
{
	return c->ring_size;
}

bool capture_uses_raw_tp(const struct capture *c)
{
	return c->raw_tp;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	capture_detach(c);
	free(c->links);
	rings_free(c->rings);
	sched_bpf__destroy(c->skel);
	free(c);
}
