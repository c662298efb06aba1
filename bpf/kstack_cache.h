/* --callstacks: the per-thread cache of kernel stacks (x86-64), included
 * by sched.bpf.c. A thread that blocks again where it blocked before has
 * the same kernel stack; that is proven from the stack's memory instead of
 * walked again. After a walk, each return address from the first one in
 * the scheduler's text (the frames before it are this program's own
 * tracing path, the same at every switch) to the outermost is located on
 * the thread's kernel stack, as an offset below its top (where the user
 * registers, pt_regs, sit). At the thread's next sleep the same slots are
 * read back: all equal, the cached frames are the stack (a hit); else it
 * is walked again (a miss).
 *
 * Why equal slots give the same stack: the ORC unwinder goes from a frame
 * to its caller from the return address and the stack pointer alone (a
 * frame's size at a call site is fixed by the call site), so from a fixed
 * start each return address read at its slot fixes where the next one
 * is. That holds as long as each recorded slot is the one the unwinder
 * reads and not a stale copy of the same value elsewhere. The slots are
 * located from the tracepoint's arguments up, the innermost frame first,
 * each at the nearest word above the slot before it that holds its
 * return address: between two live slots lies the frame of one function
 * (saved registers, locals), which holds no return address into its own
 * caller. Stale copies lie further up, in the gap a system call leaves
 * (below), where earlier, shallower calls wrote the same frames: a scan
 * from the top down meets them first, which is why it is not one.
 *
 * One frame has no fixed size: with CONFIG_RANDOMIZE_KSTACK_OFFSET
 * (default on in most distributions) each system call leaves a gap of
 * random size in do_syscall_64's frame. The slots above the gap stay at
 * their offsets from the top, the ones below it (and the tracepoint's
 * arguments, ctx) all move by the same amount, the change of depth
 * (top - ctx) since the fill. Which frames move is learnt from a second
 * walk of the same frames at another depth: each slot is either where it
 * was (above the gap) or moved by the change of depth (below it), the
 * ones below being the innermost; any other pattern leaves the entry
 * unlearnt. An unlearnt entry is used only at the depth of its fill,
 * where every slot is where it was. Other frames of variable size
 * (rbp-based ORC entries; the kernel has no VLAs, none are on the common
 * sleeping paths) would break the pattern, or be assumed away: the cache
 * assumes no other on a cached path. */
#ifndef BTR_KSTACK_CACHE_H
#define BTR_KSTACK_CACHE_H

/* The kernel stack read to locate the slots: at most this many bytes below
 * the top (a kernel stack is 16K on x86-64, the pt_regs at its top). */
#define KSTACK_SCAN 16384
#define KSTACK_WORDS (KSTACK_SCAN / 8)
/* Threads whose last stack is kept: least recently used ones go first. */
#define KSTACK_CACHE_ENTRIES 4096

/* Kernel text (and modules) on x86-64 lies in the top 2 GiB: other words
 * on the stack (data, stack addresses, small numbers) are below. */
#define KTEXT_MIN 0xffffffff80000000ull

struct kstack_entry {
	__u32 n;       /* frames */
	__u32 first;   /* index of the first frame with a slot */
	__u32 depth;   /* top - ctx at the fill */
	__s32 moving;  /* frames first .. moving move with the depth; -1:
			* not learnt */
	__u32 caller;  /* the first frame past the scheduler's (the blocked
			* function: kstack_caller()), 0: none */
	__u32 pad;
	__u64 top;     /* the top of the thread's kernel stack: it stays
			* where it is for the task's life (kstack_caller()) */
	__u64 ips[BTR_STACK_MAX];
	__u16 off[BTR_STACK_MAX]; /* slot of ips[i] (i >= first): bytes
				   * below the top */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KSTACK_CACHE_ENTRIES);
	__type(key, __u32);
	__type(value, struct kstack_entry);
} kstack_cache SEC(".maps");

/* Scratch of a CPU: the kernel stack words read, the entry being filled,
 * and addresses turned into numbers (stored as pointers, read back as
 * scalars: the recorder loads with CAP_PERFMON, which allows it). */
struct kstack_scratch {
	__u64 words[KSTACK_WORDS];
	struct kstack_entry e;
	union {
		void *p;
		__u64 v;
	} top, sp;
};

/* One scratch per CPU id, indexed by the CPU (the programs using it run
 * with preemption off and do not nest): an array, not a per-CPU one,
 * so that userspace sizes it to one entry when --callstacks is off (17K
 * for every possible CPU otherwise), which turns the cache off. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kstack_scratch);
} kstack_scratch SEC(".maps");

static __always_inline struct kstack_scratch *kstack_scratch_get(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&kstack_scratch, &cpu);
}

/* Whether the cache can work here: x86-64 and a kernel with
 * bpf_task_pt_regs() and bpf_loop(). */
static __always_inline bool kstack_cache_fits(void)
{
#if defined(__TARGET_ARCH_x86)
	return use_kstack_cache &&
	       bpf_core_enum_value_exists(enum bpf_func_id,
					  BPF_FUNC_task_pt_regs) &&
	       bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop);
#else
	return false;
#endif
}

/* A pointer stored in the scratch, read back as a number: the load must
 * be made (volatile), or the compiler reuses the register that holds the
 * pointer, and a verifier that does not keep the bounds of a spilled
 * scalar (6.1) refuses the arithmetic on it. */
static __always_inline __u64 kstack_number(const __u64 *v)
{
	return *(const volatile __u64 *)v;
}

/* The top of the current task's kernel stack (its pt_regs) as a number. */
static __always_inline __u64 kstack_top(struct kstack_scratch *k)
{
	k->top.p = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return kstack_number(&k->top.v);
}

/* The depth of the program's context below the top, 0 when unknown. */
static __always_inline __u64 kstack_depth(struct kstack_scratch *k,
					  void *ctx, __u64 top)
{
	__u64 sp;

	k->sp.p = ctx;
	sp = kstack_number(&k->sp.v);
	if (!top || sp >= top || top - sp > KSTACK_SCAN)
		return 0;
	return top - sp;
}

/* v, already tested to be below KSTACK_SCAN, as a number the verifier
 * knows to be: the compiler may spill v before the test and test the
 * reloaded copy, and 6.1's verifier forgets the bounds of a scalar
 * spilled while unbounded; the mask (kept, as the compiler cannot see
 * through the empty asm) bounds it wherever it is. */
static __always_inline __u64 kstack_clamp(__u64 v)
{
	asm volatile("" : "+r"(v));
	return v & (KSTACK_SCAN - 1);
}

/* A frame index already tested to be below BTR_STACK_MAX (a power of
 * two), bounded where the verifier sees it, as kstack_clamp(). */
static __always_inline __u32 kstack_index(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (BTR_STACK_MAX - 1);
}

/* The slot of frame i of e now, in bytes below the top, for a stack
 * delta bytes deeper than at the fill; 0 when out of reach. */
static __always_inline __u64 kstack_slot(const struct kstack_entry *e,
					 __u32 i, __s64 delta)
{
	__s64 off;

	if (i >= BTR_STACK_MAX)
		return 0;
	off = e->off[kstack_index(i)];
	if ((__s32)i <= e->moving)
		off += delta;
	if (off < 8 || off >= KSTACK_SCAN)
		return 0;
	return kstack_clamp((__u64)off);
}

/* How much deeper than at the fill of e the program's context is now,
 * below top, into *delta; false when it is out of reach, or moved while
 * e has not learnt which of its frames move with it. */
static __always_inline bool kstack_shift(struct kstack_scratch *k, void *ctx,
					 __u64 top,
					 const struct kstack_entry *e,
					 __s64 *delta)
{
	__u64 depth = kstack_depth(k, ctx, top);

	if (!depth)
		return false;
	*delta = (__s64)depth - (__s64)e->depth;
	return !*delta || e->moving >= 0;
}

/* The cached stack of the current thread when its slots still hold its
 * frames: copies them into ips and returns their number, else 0. */
static __always_inline __u32 kstack_lookup(void *ctx, __u32 tid, __u64 *ips)
{
	struct kstack_scratch *k = kstack_scratch_get();
	struct kstack_entry *e = bpf_map_lookup_elem(&kstack_cache, &tid);
	__u64 top, span, off;
	__s64 delta;
	__u32 i, idx;

	if (!k || !e)
		return 0;
	top = kstack_top(k);
	if (!kstack_shift(k, ctx, top, e, &delta))
		return 0;
	/* the innermost slot is the deepest */
	span = kstack_slot(e, e->first, delta);
	if (!span)
		return 0;
	if (bpf_probe_read_kernel(k->words, span, (void *)(top - span)))
		return 0;
	for (i = 0; i < BTR_STACK_MAX; i++) {
		if (i >= e->n)
			break;
		if (i < e->first)
			continue;
		off = kstack_slot(e, i, delta);
		if (!off || off > span)
			return 0;
		/* words[idx] is the word at top - off */
		idx = (__u32)((span - off) / 8);
		if (idx >= KSTACK_WORDS || k->words[idx] != e->ips[i])
			return 0;
	}
	__builtin_memcpy(ips, e->ips, sizeof(e->ips));
	return e->n;
}

/* The blocked function of the current thread from its cached stack (the
 * first frame past the scheduler's, as blocked_caller() finds it in a
 * walk), when the slots from its first frame in the scheduler's text to
 * that one still hold the cached frames: from the fixed start, that part
 * of the stack is the cached one (the argument above), whatever lies
 * past it. Only the span of those few slots is read back, not the
 * whole stack: the cost of --blocked-reason all. 0: no entry, or a
 * miss. */
#define KSTACK_CALLER_SPAN 8 /* frames from the first scheduler one to it */

static __always_inline __u64 kstack_caller(void *ctx, __u32 tid)
{
	struct kstack_scratch *k = kstack_scratch_get();
	struct kstack_entry *e = bpf_map_lookup_elem(&kstack_cache, &tid);
	__u64 top, off, hi, lo;
	__u32 i, j, c, first, idx;
	__s64 delta;

	if (!k || !e)
		return 0;
	c = e->caller;
	first = e->first;
	if (c <= first || c - first >= KSTACK_CALLER_SPAN || c >= BTR_STACK_MAX)
		return 0;
	/* the top kept at the fill, not asked of the task again: a task's
	 * stack does not move; a new task of the same tid elsewhere leaves
	 * the program's context outside the span (a miss), and one given
	 * the same stack has the same top */
	top = e->top;
	if (!kstack_shift(k, ctx, top, e, &delta))
		return 0;
	/* the words from the innermost slot (the deepest) to the caller's,
	 * in one read (measured cheaper than a read a slot), each slot
	 * checked in them */
	hi = kstack_slot(e, first, delta);
	lo = kstack_slot(e, c, delta);
	if (!hi || !lo || lo > hi)
		return 0;
	if (bpf_probe_read_kernel(k->words, kstack_clamp(hi - lo + 8),
				  (void *)(top - hi)))
		return 0;
	for (j = 0; j < KSTACK_CALLER_SPAN; j++) {
		i = first + j;
		if (i > c)
			break;
		off = kstack_slot(e, i, delta);
		if (!off || off > hi || off < lo)
			return 0;
		idx = (__u32)((hi - off) / 8);
		if (idx >= KSTACK_WORDS ||
		    k->words[idx] != e->ips[kstack_index(i)])
			return 0;
	}
	return e->ips[kstack_index(c)];
}

/* The scan of kstack_fill(): one word a call, from the program's context
 * up to the top. */
struct kstack_scan {
	struct kstack_scratch *k;
	__u32 nwords; /* words read, the first one at the context */
	__u32 next;   /* the frame looked for, from the innermost up */
	__u32 n;
};

/* Each frame's slot is the nearest word above the slot of the frame
 * before it that holds its return address: that is where the unwinder
 * reads it (see the top of this file). */
static long kstack_scan_word(__u64 w, void *data)
{
	struct kstack_scan *s = data;
	struct kstack_scratch *k = s->k;
	__u32 idx = (__u32)w, nx = s->next;

	if (idx >= KSTACK_WORDS || nx >= s->n || nx >= BTR_STACK_MAX)
		return 1;
	/* bounded where the verifier sees it, as kstack_index() */
	asm volatile("" : "+r"(idx));
	idx &= KSTACK_WORDS - 1;
	if (k->words[idx] == k->e.ips[nx & (BTR_STACK_MAX - 1)]) {
		/* words[idx] lies (nwords - idx) words below the top */
		k->e.off[nx & (BTR_STACK_MAX - 1)] =
			(__u16)(8 * (s->nwords - idx));
		s->next++;
	}
	return 0;
}

/* kstack_learn(): one frame a call. */
struct kstack_cmp {
	struct kstack_entry *e;
	struct kstack_entry *old;
	__s64 delta;
	__s32 moving;
	bool fixed;
	bool bad;
};

static long kstack_learn_frame(__u64 i, void *data)
{
	struct kstack_cmp *c = data;
	__s64 d;

	if (i >= BTR_STACK_MAX || i >= c->e->n)
		return 1;
	if (c->old->ips[i] != c->e->ips[i]) {
		c->bad = true;
		return 1;
	}
	if (i < c->e->first)
		return 0;
	d = (__s64)c->e->off[i] - (__s64)c->old->off[i];
	if (!d) {
		c->fixed = true;
	} else if (d == c->delta && !c->fixed) {
		c->moving = (__s32)i;
	} else {
		c->bad = true;
		return 1;
	}
	return 0;
}

/* The frames of e that moved with the depth since old, a walk of the same
 * frames: each slot where it was or moved by the change of depth, the
 * moved ones the innermost (see the top of this file). Sets e->moving
 * when the pattern holds, or keeps what old learnt at the same depth. */
static __always_inline void kstack_learn(struct kstack_entry *e,
					 struct kstack_entry *old)
{
	struct kstack_cmp c = {
		.e = e,
		.old = old,
		.delta = (__s64)e->depth - (__s64)old->depth,
		.moving = -1,
	};

	if (old->n != e->n || old->first != e->first)
		return;
	bpf_loop(BTR_STACK_MAX, kstack_learn_frame, &c, 0);
	if (c.bad)
		return;
	/* at the same depth nothing moved: what old learnt still holds */
	e->moving = c.delta ? c.moving : old->moving;
}

/* kstack_find(): one frame a call. */
struct kstack_find {
	const __u64 *ips;
	__u32 at;   /* the frame found */
	__u32 from; /* from this one on */
	bool in;    /* one in the scheduler's text, or one not */
};

static long kstack_find_frame(__u64 i, void *data)
{
	struct kstack_find *f = data;

	if (i < f->from)
		return 0;
	if (i >= BTR_STACK_MAX || in_sched_text(f->ips[i]) == f->in) {
		f->at = (__u32)i;
		return 1;
	}
	return 0;
}

/* The index of the first frame from `from` on that is in the scheduler's
 * text (in) or not (!in), n when none (bpf_loop: the verifier sees one
 * frame, not each). */
static __always_inline __u32 kstack_find(const __u64 *ips, __u32 n,
					 __u32 from, bool in)
{
	struct kstack_find f = { .ips = ips, .at = n, .from = from, .in = in };

	if (n > BTR_STACK_MAX)
		return n;
	bpf_loop(n, kstack_find_frame, &f, 0);
	return f.at;
}

/* After a walk of n whole frames (ips): locate their slots and keep the
 * stack for the thread's next sleep. Frames before the first one in the
 * scheduler's text have no slot; a frame not found, or found twice, and
 * the stack is not kept. ctx: the program's context, the tracepoint's
 * arguments, which the tracing code keeps on the kernel stack below the
 * scheduler's frames. */
static __always_inline void kstack_fill(void *ctx, __u32 tid, const __u64 *ips,
					__u32 n)
{
	struct kstack_scratch *k = kstack_scratch_get();
	struct kstack_scan s = {};
	struct kstack_entry *old;
	__u64 top, depth, size;
	__u32 first;

	if (!k || n == 0 || n > BTR_STACK_MAX)
		return;
	first = kstack_find(ips, n, 0, true);
	if (first >= n)
		return;
	top = kstack_top(k);
	/* the live stack: from the tracepoint's arguments up (this program's
	 * own frame may be on a private stack) */
	depth = kstack_depth(k, ctx, top);
	size = depth & ~7ull;
	if (size < 8 || size >= KSTACK_SCAN)
		return;
	size = kstack_clamp(size);
	if (bpf_probe_read_kernel(k->words, size, (void *)(top - size)))
		return;
	__builtin_memcpy(k->e.ips, ips, sizeof(k->e.ips));
	s.k = k;
	s.nwords = (__u32)(size / 8);
	s.next = first;
	s.n = n;
	bpf_loop(s.nwords, kstack_scan_word, &s, 0);
	if (s.next < n)
		return;
	k->e.n = n;
	k->e.first = first;
	k->e.top = top;
	k->e.caller = kstack_find(ips, n, first + 1, false);
	if (k->e.caller >= n)
		k->e.caller = 0;
	k->e.pad = 0;
	k->e.depth = (__u32)depth;
	k->e.moving = -1;
	old = bpf_map_lookup_elem(&kstack_cache, &tid);
	if (old)
		kstack_learn(&k->e, old);
	bpf_map_update_elem(&kstack_cache, &tid, &k->e, BPF_ANY);
}

/* kstack_agrees(): one frame a call. */
struct kstack_agree {
	const __u64 *walk; /* the walk, from its first scheduler frame */
	const __u64 *ips;  /* the cached stack, from its first one */
	bool differ;
};

static long kstack_agree_frame(__u64 i, void *data)
{
	struct kstack_agree *c = data;

	if (i >= BTR_STACK_MAX)
		return 1;
	if (c->walk[i] != c->ips[i]) {
		c->differ = true;
		return 1;
	}
	return 0;
}

/* --kstack-check (a test hook): whether a stack taken from the cache (n
 * frames, ips) is the one a walk gives now, from the first frame in the
 * scheduler's text on (the frames before are this program's own, their
 * first one where it calls the walk). */
static __always_inline bool kstack_agrees(void *ctx, const __u64 *ips,
					  __u32 n)
{
	struct kstack_scratch *k = kstack_scratch_get();
	struct kstack_agree c = {};
	__u32 fw, fc;
	long m;

	if (!k || n > BTR_STACK_MAX)
		return false;
	m = bpf_get_stack(ctx, k->words, (BTR_STACK_MAX + 1) * 8, 0);
	if (m <= 0)
		return false;
	m /= sizeof(__u64);
	if (m > BTR_STACK_MAX)
		return false;
	fw = kstack_find(k->words, (__u32)m, 0, true);
	fc = kstack_find(ips, n, 0, true);
	if (fw >= m || fc >= n || m - fw != n - fc ||
	    fw >= BTR_STACK_MAX || fc >= BTR_STACK_MAX)
		return false;
	/* the compiler drops the last two tests (fc < n <= 64), which 6.1's
	 * verifier cannot do (it bounds a register by a constant only) */
	c.walk = &k->words[kstack_index(fw)];
	c.ips = &ips[kstack_index(fc)];
	bpf_loop(n - fc, kstack_agree_frame, &c, 0);
	return !c.differ;
}

#endif
