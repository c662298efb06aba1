/* Unit tests of the off-CPU call stack encoder (encode/callstacks.c):
 * BTR_REC_STACK records in, PerfSample packets out (collected by a test
 * sink, decoded with protobuf-c): the timebase defaults on the packet
 * that clears the state, frames trimmed to start in the scheduler and
 * named in the kernel mapping, root first, cut and missing stacks marked,
 * the state cleared again after a reset, bad records refused; user frames
 * after the kernel ones in the resolver's mappings (range, offsets, build
 * id, rel_pc) or in "[unknown]", their losses marked; a stack cut at a
 * leaf without CFI marked so. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "encode/callstacks.h"
#include "perfetto/trace.pb-c.h"
#include "coll_sink.h"
#include "unit.h"

typedef Perfetto__Protos__TracePacket Packet;

#define SEQ 7
#define SCHED_START 0x2000
#define SCHED_END 0x3000

/* A kernel of five functions; 0x9000 and above are in none. */
static const char *names(void *ctx, uint64_t addr, uint64_t *id)
{
	static const struct {
		uint64_t start;
		const char *name;
	} syms[] = { { 0x1000, "bpf_trampoline" }, { 0x2000, "__schedule" },
		     { 0x2100, "schedule" },        { 0x4000, "do_nanosleep" },
		     { 0x5000, "do_syscall_64" } };
	int i;

	(void)ctx;
	if (addr < 0x1000 || addr >= 0x9000)
		return NULL;
	for (i = 4; i > 0 && addr < syms[i].start; i--)
		;
	*id = (uint64_t)i + 1;
	return syms[i].name;
}

static struct btr_stack rec(uint32_t nr, uint32_t flags, const uint64_t *ips)
{
	struct btr_stack r;

	memset(&r, 0, sizeof(r));
	r.h.ts = 1000 + nr;
	r.h.type = BTR_REC_STACK;
	r.pid = 42;
	r.tgid = 40;
	r.nr = nr;
	r.flags = flags;
	if (nr)
		memcpy(r.ips, ips, nr * sizeof(*ips));
	return r;
}

/* The function name of a frame defined in packet p (a static copy). */
static const char *fn_name(const Packet *p, uint64_t frame_iid)
{
	static char buf[64];
	const Perfetto__Protos__InternedData *d = p->interned_data;
	uint64_t fid = 0;
	size_t i;

	for (i = 0; d && i < d->n_frames; i++)
		if (d->frames[i]->iid == frame_iid)
			fid = d->frames[i]->function_name_id;
	for (i = 0; d && i < d->n_function_names; i++)
		if (d->function_names[i]->iid == fid) {
			size_t n = d->function_names[i]->str.len;

			if (n >= sizeof(buf))
				n = sizeof(buf) - 1;
			if (n)
				memcpy(buf, d->function_names[i]->str.data, n);
			buf[n] = 0;
			return buf;
		}
	return "?";
}

static void test_sample(void)
{
	static const uint64_t ips[] = { 0x1010, 0x2010, 0x2110, 0x4010,
					0x5010, 0x9999 };
	struct coll c;
	struct callstack_enc *e;
	struct btr_stack r = rec(6, 0, ips);
	const Perfetto__Protos__Callstack *cs;
	Packet *p;

	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, names, NULL, SCHED_START, SCHED_END);
	CHECK(e != NULL);
	CHECK_EQ_I64(callstack_enc_add(e, 1, &r.h, BTR_STACK_SIZE(6)), 0);
	CHECK_EQ_I64(c.n, 1);
	CHECK_EQ_I64(c.p[0].seq, SEQ);
	p = coll_unpack(&c, 0);
	CHECK(p->has_sequence_flags && p->sequence_flags == 1);
	CHECK(p->trace_packet_defaults &&
	      p->trace_packet_defaults->perf_sample_defaults &&
	      p->trace_packet_defaults->perf_sample_defaults->timebase);
	CHECK_STR(p->trace_packet_defaults->perf_sample_defaults->timebase
			  ->tracepoint->name,
		  "sched/sched_switch");
	CHECK_EQ_I64(p->timestamp, 1006);
	CHECK(p->perf_sample->has_cpu && p->perf_sample->cpu == 1);
	CHECK_EQ_I64(p->perf_sample->pid, 40);
	CHECK_EQ_I64(p->perf_sample->tid, 42);
	CHECK_EQ_I64(p->perf_sample->cpu_mode,
		     PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_KERNEL);
	CHECK(!p->perf_sample->has_unwind_error);
	CHECK(p->perf_sample->has_callstack_iid);
	CHECK_EQ_I64(p->interned_data->n_callstacks, 1);
	cs = p->interned_data->callstacks[0];
	/* the trampoline frame is trimmed; root first */
	CHECK_EQ_I64(cs->n_frame_ids, 5);
	CHECK_STR(fn_name(p, cs->frame_ids[0]), "");
	CHECK_STR(fn_name(p, cs->frame_ids[1]), "do_syscall_64");
	CHECK_STR(fn_name(p, cs->frame_ids[3]), "schedule");
	CHECK_STR(fn_name(p, cs->frame_ids[4]), "__schedule");
	CHECK_EQ_I64(p->interned_data->n_mapping_paths, 1);
	CHECK_EQ_I64(p->interned_data->mapping_paths[0]->str.len, 7);
	CHECK(!memcmp(p->interned_data->mapping_paths[0]->str.data, "/kernel",
		      7));
	CHECK_EQ_I64(callstack_enc_stats(e)->frames_unnamed, 1);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);

	/* the same stack again: no new interned data, no defaults */
	CHECK_EQ_I64(callstack_enc_add(e, 1, &r.h, BTR_STACK_SIZE(6)), 0);
	p = coll_unpack(&c, 1);
	CHECK(p->interned_data == NULL && p->trace_packet_defaults == NULL);
	CHECK_EQ_I64(p->sequence_flags, 2);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);

	/* after a reset the state is cleared and defined again */
	callstack_enc_reset(e);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(6)), 0);
	p = coll_unpack(&c, 2);
	CHECK_EQ_I64(p->sequence_flags, 1);
	CHECK(p->trace_packet_defaults != NULL);
	CHECK(p->interned_data && p->interned_data->n_callstacks == 1 &&
	      p->interned_data->callstacks[0]->iid == 1);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	CHECK_EQ_I64(callstack_enc_stats(e)->samples, 3);
	callstack_enc_free(e);
	coll_free(&c);
}

static void test_losses(void)
{
	static const uint64_t ips[] = { 0x2010, 0x2110, 0x4010 };
	struct coll c;
	struct callstack_enc *e;
	struct btr_stack cut = rec(3, BTR_STACK_TRUNCATED, ips);
	struct btr_stack none = rec(0, BTR_STACK_FAILED, NULL);
	Packet *p;

	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, names, NULL, 0, 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &cut.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &none.h, BTR_STACK_SIZE(0)), 0);
	p = coll_unpack(&c, 0);
	CHECK(p->perf_sample->has_callstack_iid);
	CHECK(p->perf_sample->has_unwind_error &&
	      p->perf_sample->unwind_error ==
		      PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_MAX_FRAMES_EXCEEDED);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 1);
	CHECK(!p->perf_sample->has_callstack_iid);
	CHECK(p->perf_sample->has_unwind_error &&
	      p->perf_sample->unwind_error ==
		      PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_UNKNOWN);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	CHECK_EQ_I64(callstack_enc_stats(e)->samples, 2);
	CHECK_EQ_I64(callstack_enc_stats(e)->truncated, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->failed, 1);
	callstack_enc_free(e);
	coll_free(&c);
}

static void test_bad_records(void)
{
	static const uint64_t ips[] = { 0x2010 };
	struct coll c;
	struct callstack_enc *e;
	struct btr_stack r = rec(1, 0, ips);

	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, NULL, NULL, 0, 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(0)), -EINVAL);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, 20), -EINVAL);
	r.nr = BTR_STACK_MAX + 1;
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, sizeof(r)), -EINVAL);
	r.nr = 1;
	r.h.type = BTR_REC_BLOCKED;
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, sizeof(r)), -EINVAL);
	CHECK_EQ_I64(c.n, 0);
	/* without a symbolizer every frame is unnamed, none is dropped */
	r.h.type = BTR_REC_STACK;
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(1)), 0);
	CHECK_EQ_I64(callstack_enc_stats(e)->frames_unnamed, 1);
	CHECK_EQ_I64(c.n, 1);
	callstack_enc_free(e);
	coll_free(&c);
}

/* A process with one mapping, of app at 0x400000..0x401000 from file
 * offset 0x1000, load bias 0x10; main at its ELF address 0x1010. */
static const uint8_t app_id[] = { 0xab, 0x00, 0xcd };
static const struct perf_mapping app = {
	.path = "/bin/app", .build_id = app_id, .build_id_len = 3,
	.start = 0x400000, .end = 0x401000, .exact_offset = 0x1000,
	.load_bias = 0x10,
};

static bool resolve(void *ctx, int32_t tgid, uint64_t pc, bool leaf,
		    struct perf_frame *f)
{
	(void)ctx;
	if (tgid != 40 || pc < app.start || pc >= app.end)
		return false;
	f->map = &app;
	f->rel_pc = pc - app.start + app.exact_offset + app.load_bias;
	f->symbol = leaf ? "leaf_fn" : NULL;
	return true;
}

/* The frame of iid in packet p. */
static const Perfetto__Protos__Frame *frame(const Packet *p, uint64_t iid)
{
	size_t i;

	for (i = 0; i < p->interned_data->n_frames; i++)
		if (p->interned_data->frames[i]->iid == iid)
			return p->interned_data->frames[i];
	return NULL;
}

static void test_user_frames(void)
{
	/* two kernel frames, then user: leaf in app, a caller nowhere */
	static const uint64_t ips[] = { 0x2010, 0x4010, 0x400200, 0x7777 };
	struct coll c;
	struct callstack_enc *e;
	struct btr_stack r = rec(2, 0, ips), cut, failed, kthread;
	const Perfetto__Protos__Callstack *cs;
	const Perfetto__Protos__Mapping *m = NULL;
	const Perfetto__Protos__Frame *f;
	Packet *p;
	size_t i;

	r.nr_user = 2;
	memcpy(r.ips, ips, sizeof(ips));
	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, names, NULL, SCHED_START, SCHED_END);
	callstack_enc_set_user(e, resolve, NULL);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(3)), -EINVAL);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(4)), 0);
	p = coll_unpack(&c, 0);
	CHECK(!p->perf_sample->has_unwind_error);
	cs = p->interned_data->callstacks[0];
	CHECK_EQ_I64(cs->n_frame_ids, 4); /* root first: user, then kernel */
	CHECK_STR(fn_name(p, cs->frame_ids[0]), "");
	CHECK_STR(fn_name(p, cs->frame_ids[1]), "leaf_fn");
	CHECK_STR(fn_name(p, cs->frame_ids[2]), "do_nanosleep");
	f = frame(p, cs->frame_ids[1]);
	CHECK(f && f->has_rel_pc && f->rel_pc == 0x200 + 0x1000 + 0x10);
	for (i = 0; i < p->interned_data->n_mappings; i++)
		if (f && p->interned_data->mappings[i]->iid == f->mapping_id)
			m = p->interned_data->mappings[i];
	CHECK(m && m->start == 0x400000 && m->end == 0x401000 &&
	      m->exact_offset == 0x1000 && m->load_bias == 0x10 &&
	      !m->has_start_offset && m->has_build_id);
	CHECK_EQ_I64(p->interned_data->n_build_ids, 1);
	CHECK_EQ_I64(p->interned_data->build_ids[0]->str.len, 3);
	CHECK(!memcmp(p->interned_data->build_ids[0]->str.data, app_id, 3));
	/* the pc of no mapping: "[unknown]", rel_pc the pc */
	f = frame(p, cs->frame_ids[0]);
	CHECK(f && f->rel_pc == 0x7777);
	CHECK_EQ_I64(p->interned_data->n_mapping_paths, 3);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_frames, 2);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_unmapped, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_unnamed, 1);

	/* a cut user stack, a failed one, a kernel thread's */
	cut = r;
	cut.flags = BTR_USTACK_TRUNCATED;
	failed = rec(2, BTR_USTACK_FAILED, ips);
	kthread = rec(2, BTR_USTACK_NONE, ips);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &cut.h, BTR_STACK_SIZE(4)), 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &failed.h, BTR_STACK_SIZE(2)), 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &kthread.h, BTR_STACK_SIZE(2)), 0);
	p = coll_unpack(&c, 1);
	CHECK(p->perf_sample->has_unwind_error &&
	      p->perf_sample->unwind_error ==
		      PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_MAX_FRAMES_EXCEEDED);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 2);
	CHECK(p->perf_sample->has_callstack_iid); /* the kernel frames */
	CHECK(p->perf_sample->has_unwind_error &&
	      p->perf_sample->unwind_error ==
		      PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_UNKNOWN);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 3);
	CHECK(p->perf_sample->has_callstack_iid);
	CHECK(!p->perf_sample->has_unwind_error);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_truncated, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_failed, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_none, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->failed, 0);
	callstack_enc_free(e);
	coll_free(&c);
}

/* test_carried's resolver: app's mapping once `mapped` says it came. */
static bool mapped;

static bool resolve_late(void *ctx, int32_t tgid, uint64_t pc, bool leaf,
			 struct perf_frame *f)
{
	return mapped && resolve(ctx, tgid, pc, leaf, f);
}

static uint32_t no_unwind(void *ctx, int32_t tgid, const struct btr_ustack *u,
			  const __u64 *fp, uint32_t nfp, __u64 *out,
			  uint32_t max, enum callstack_unwound *how)
{
	(void)ctx, (void)tgid, (void)u, (void)fp, (void)nfp, (void)out;
	(void)max, (void)how;
	return 0;
}

/* A sample whose user leaf no mapping holds yet is kept to the end of the
 * pass, then to the next one when still unplaced (its mapping record may
 * come in that pass), with the samples after it, in order; once only;
 * the last pass writes all. */
static void test_carried(void)
{
	static const uint64_t ips[] = { 0x2010, 0x4010, 0x400200 };
	struct btr_stack r = rec(2, 0, ips), r2;
	struct callstack_enc *e;
	struct coll c;
	Packet *p;

	r.nr_user = 1;
	memcpy(r.ips, ips, sizeof(ips));
	r2 = r;
	r2.h.ts++;
	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, names, NULL, SCHED_START, SCHED_END);
	callstack_enc_set_user(e, resolve_late, NULL);
	callstack_enc_set_unwind(e, no_unwind, NULL);
	mapped = false;
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(c.n, 0);
	CHECK_EQ_I64(callstack_enc_flush(e, false), 0);
	CHECK_EQ_I64(c.n, 0); /* kept to the next pass */
	CHECK_EQ_I64(callstack_enc_stats(e)->carried, 1);
	callstack_enc_reset(e);
	/* the next pass: a sample after it waits behind it; the mapping
	 * record comes */
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r2.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(c.n, 0);
	mapped = true;
	CHECK_EQ_I64(callstack_enc_flush(e, false), 0);
	CHECK_EQ_I64(c.n, 2);
	p = coll_unpack(&c, 0);
	CHECK(p && p->timestamp == r.h.ts);
	CHECK(p && p->interned_data &&
	      !strcmp(fn_name(p, p->interned_data->callstacks[0]->frame_ids[0]),
		      "leaf_fn"));
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 1);
	CHECK(p && p->timestamp == r2.h.ts);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	callstack_enc_reset(e);
	/* never placed: kept once, then written as it is */
	mapped = false;
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(callstack_enc_flush(e, false), 0);
	CHECK_EQ_I64(c.n, 2);
	CHECK_EQ_I64(callstack_enc_flush(e, false), 0);
	CHECK_EQ_I64(c.n, 3);
	CHECK_EQ_I64(callstack_enc_stats(e)->carried, 2);
	/* the last pass keeps nothing */
	CHECK_EQ_I64(callstack_enc_add(e, 0, &r.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(callstack_enc_flush(e, true), 0);
	CHECK_EQ_I64(c.n, 4);
	CHECK_EQ_I64(callstack_enc_stats(e)->carried, 2);
	callstack_enc_free(e);
	coll_free(&c);
}

/* test_cut_at_leaf's unwinder: the leaf pc, its code without CFI (a
 * JIT's, or code that makes the system call itself): one pc. */
static uint32_t leaf_no_cfi(void *ctx, int32_t tgid,
			    const struct btr_ustack *u, const __u64 *fp,
			    uint32_t nfp, __u64 *out, uint32_t max,
			    enum callstack_unwound *how)
{
	(void)ctx, (void)tgid, (void)u, (void)max;
	if (!nfp)
		return 0;
	out[0] = fp[0];
	*how = CALLSTACK_NO_CFI;
	return 1;
}

/* A stack whose walk from its slice stopped at once at a leaf without
 * CFI, its frame-pointer chain no longer than that leaf: cut at the leaf
 * (UNWIND_INFO, counted), not written as whole. With a chain that went
 * further, the chain's frames are written as they are. */
static void test_cut_at_leaf(void)
{
	static const uint64_t ips[] = { 0x2010, 0x4010, 0x400200, 0x400300 };
	struct btr_ustack u;
	struct btr_stack one = rec(2, BTR_USTACK_SLICE, ips), two;
	struct callstack_enc *e;
	struct coll c;
	Packet *p;

	memset(&u, 0, sizeof(u));
	u.h.type = BTR_REC_USTACK;
	u.pid = one.pid;
	u.size = 16;
	one.nr_user = 1;
	memcpy(one.ips, ips, sizeof(ips));
	two = one;
	two.nr_user = 2;
	coll_init(&c);
	e = callstack_enc_new(&c.sink, SEQ, names, NULL, SCHED_START, SCHED_END);
	callstack_enc_set_user(e, resolve, NULL);
	callstack_enc_set_unwind(e, leaf_no_cfi, NULL);
	CHECK_EQ_I64(callstack_enc_note_slice(e, &u.h, BTR_USTACK_SIZE(16)), 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &one.h, BTR_STACK_SIZE(3)), 0);
	CHECK_EQ_I64(callstack_enc_note_slice(e, &u.h, BTR_USTACK_SIZE(16)), 0);
	CHECK_EQ_I64(callstack_enc_add(e, 0, &two.h, BTR_STACK_SIZE(4)), 0);
	CHECK_EQ_I64(c.n, 2);
	p = coll_unpack(&c, 0);
	CHECK(p && p->perf_sample && p->perf_sample->has_unwind_error &&
	      p->perf_sample->unwind_error ==
		      PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_UNWIND_INFO);
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 1);
	CHECK(p && p->perf_sample && !p->perf_sample->has_unwind_error);
	CHECK(p && p->interned_data && p->interned_data->n_callstacks == 1 &&
	      p->interned_data->callstacks[0]->n_frame_ids == 4);
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_cfi_failed, 1);
	CHECK_EQ_I64(callstack_enc_stats(e)->user_unwound, 0);
	callstack_enc_free(e);
	coll_free(&c);
}

int main(void)
{
	RUN(test_carried);
	RUN(test_cut_at_leaf);
	RUN(test_user_frames);
	RUN(test_sample);
	RUN(test_losses);
	RUN(test_bad_records);
	return unit_finish();
}
