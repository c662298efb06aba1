/* Loading, attaching and draining the BPF side of a recording. */
#include "record/capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
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
	program_pairs(c->skel, pairs, &n,
		      kfeatures_use(c->o.kf, KF_SWITCH_STATE));
	for (i = 0; i < n; i++)
		bpf_program__set_autoload(pairs[i][raw ? 1 : 0], true);
	/* the libraries' mappings of short-lived processes, with user
	 * stacks (a look-up with bpf_find_vma from 5.17, the call's
	 * arguments before); x86-64's mmap */
#if defined(__x86_64__)
	bpf_program__set_autoload(raw ? c->skel->progs.raw_mmap_exit
				      : c->skel->progs.btf_mmap_exit,
				  c->o.user_stacks);
#endif
}

static int open_and_load(struct capture *c, bool raw, char *err, size_t errlen)
{
	bool cache;
	uint32_t slice;
	int e;

	c->skel = sched_bpf__open();
	if (!c->skel) {
		snprintf(err, errlen, "cannot open BPF object: %s",
			 strerror(errno));
		return -errno;
	}
	c->skel->rodata->wakeup_bytes = c->ring_size / 2;
	c->skel->rodata->pc_from_rq = c->o.kf->pc_from_rq;
	c->skel->rodata->use_rdonly_cast = kfeatures_use(c->o.kf, KF_RDONLY_CAST);
	c->skel->rodata->use_user_walk = kfeatures_use(c->o.kf, KF_USER_WALK);
	c->skel->rodata->use_tai = kfeatures_use(c->o.kf, KF_TAI);
	c->skel->rodata->use_find_vma = kfeatures_use(c->o.kf, KF_FIND_VMA);
	c->skel->rodata->blocked_mode = c->o.blocked_mode;
	c->skel->rodata->callstacks = c->o.callstacks;
	c->skel->rodata->user_stacks = c->o.user_stacks;
	c->skel->rodata->kstack_check = c->o.kstack_check;
	/* the slice needs the frame-pointer walk's registers (5.17) */
	slice = c->o.user_stacks && kfeatures_use(c->o.kf, KF_USER_WALK) ?
			c->o.stack_slice : 0;
	c->skel->rodata->ustack_slice = slice;
	c->skel->rodata->sched_text_start = c->o.sched_text[0];
	c->skel->rodata->sched_text_end = c->o.sched_text[1];
	c->skel->rodata->lock_text_start = c->o.lock_text[0];
	c->skel->rodata->lock_text_end = c->o.lock_text[1];
	e = bpf_map__set_max_entries(c->skel->maps.rings, c->ncpus);
	/* the kernel stacks' cache: a scratch per CPU id and 4096 threads
	 * with --callstacks or --blocked-reason all where the kernel has the
	 * cache, one entry each (unused) without */
	cache = (c->o.callstacks || c->o.blocked_mode == BTR_BLOCKED_ALL) &&
		kfeatures_use(c->o.kf, KF_KSTACK_CACHE);
	/* the programs use the cache only when it is sized for them: the
	 * default's D sleeps would otherwise look up a one-entry cache
	 * and walk 64 frames instead of 32 */
	c->skel->rodata->use_kstack_cache = cache;
	if (!e)
		e = bpf_map__set_max_entries(c->skel->maps.kstack_scratch,
					     cache ? c->ncpus : 1);
	if (!e && !cache)
		e = bpf_map__set_max_entries(c->skel->maps.kstack_cache, 1);
	if (!e)
		e = bpf_map__set_max_entries(c->skel->maps.ustack_scratch,
					     slice ? c->ncpus : 1);
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
	e = !kfeatures_use(o->kf, KF_TP_BTF) ? -1
					      : open_and_load(c, false, err, errlen);
	if (e) {
		if (kfeatures_use(o->kf, KF_TP_BTF))
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

void capture_note_known_proc(struct capture *c, int32_t tgid, uint64_t ts)
{
	bpf_map__update_elem(c->skel->maps.known_procs, &tgid, sizeof(tgid),
			     &ts, sizeof(ts), BPF_ANY);
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
