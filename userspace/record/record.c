/* `bpftrace-rec record`: the recording loop. Loads and attaches the BPF
 * side, writes the start packets, drains the per-CPU rings on a timer into
 * the per-CPU bundle encoders, takes periodic clock snapshots, describes new
 * processes from /proc, and at stop writes the closing statistics. With
 * several readers (record/readers.h) the rings are drained by reader
 * threads and this thread keeps the rest: what the readers hand over (tids
 * for the process tree, clock stamps, their counts) goes through the
 * recorder's `share` lock once per pass; see docs/DESIGN.md, "Readers". */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "encode/bundle.h"
#include "encode/callstacks.h"
#include "encode/packet.h"
#include "encode/trigger.h"
#include "record/capture.h"
#include "record/child.h"
#include "record/clocks.h"
#include "record/kallsyms.h"
#include "record/hotplug.h"
#include "record/options.h"
#include "record/output.h"
#include "record/plan.h"
#include "record/privileges.h"
#include "record/procfs.h"
#include "record/readers.h"
#include "record/service.h"
#include "record/status.h"
#include "record/tidbatch.h"
#include "record/triggers.h"
#include "trigger/watch.h"
#include "record/ustacks.h"
#include "util/log.h"

#define READER_NICE (-10)
#define HOTPLUG_PERIOD_NS 1000000000ull /* how often online CPUs are read */

static volatile sig_atomic_t stop_requests, snapshot_requests;
/* The trace file this recorder created, while it holds nothing yet (its
 * header is written at the start): a second SIGINT before
 * then removes it rather than leave an empty file that is no trace. */
static const char *volatile empty_output;

/* The first SIGINT or SIGTERM asks for a clean stop; a second one exits at
 * once, leaving the file with what is written (the header at least, whole
 * records, or a torn last one that readers ignore). */
static void on_signal(int sig)
{
	static const char msg[] =
		"bpftrace-rec: interrupted twice: exiting with what is written\n";
	static const char msg_none[] =
		"bpftrace-rec: interrupted twice before recording began: no "
		"trace written\n";
	const char *empty = empty_output;
	ssize_t w;

	if (sig == SIGUSR1) {
		snapshot_requests++;
		return;
	}
	if (++stop_requests > 1) {
		if (empty) {
			unlink(empty);
			w = write(STDERR_FILENO, msg_none, sizeof(msg_none) - 1);
		} else {
			w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
		}
		(void)w;
		_exit(130);
	}
}

struct recorder;

/* One reader's own state: the tids its records named in this pass (on
 * cache lines of its own). */
struct reader_ctx {
	_Alignas(64) struct recorder *r;
	uint32_t id;
	struct tid_batch tids;
	uint64_t last_pass; /* when its last pass ended (trace clock) */
};

struct recorder {
	struct record_opts o;
	struct plan plan;
	struct hotplug hotplug; /* CPUs that come online */
	struct trace_output out;
	struct packet_sink *data;   /* the central buffer */
	struct packet_sink *clocks; /* where the next clock snapshot goes */
	uint32_t clocks_seq;        /* and on which sequence */
	struct capture *cap;
	struct kfeatures kf; /* the kernel's, less the forced fallbacks */
	struct bundle_enc **enc;
	struct ksyms *ksyms; /* names of blocked functions, NULL: none */
	struct callstack_enc **stacks; /* per CPU with --callstacks, else NULL */
	uint64_t *stack_records;      /* per CPU: stack records read */
	struct ustacks *ustacks;      /* their user frames, or NULL */
	uint32_t ncpus;
	struct procfs *procs;
	struct child child;
	struct status status;
	struct rec_counts counts;
	uint64_t *read_events; /* per CPU, for the trailer (records_read) */
	struct user_clocks user_clocks;
	uint64_t clock_seq;
	int err; /* first error from the record callback */
	struct readers *readers;
	struct reader_ctx *rctx; /* one per reader */
	uint32_t nreaders;
	/* Handed over by reader threads, under share: */
	pthread_mutex_t share;
	struct tid_batch shared_tids;
	struct btr_clock clock_rec; /* a clock stamp read, not written yet */
	bool clock_pending;
	struct bundle_enc_stats *pub; /* per CPU: counts at the last pass */
	uint64_t *pub_stack_records;
	int write_wanted; /* atomic: the buffer is under pressure */
	struct rec_triggers *trig; /* --trigger, else NULL */
	struct trig_watch *watch;  /* its conditions, or NULL */
	bool trigger_stop;         /* a trigger ended the recording */
	bool finishing;            /* the last pass: nothing kept past it */
	bool flush_all;            /* a snapshot's: the same (atomic) */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The clock snapshot of stamp k, on the clock sequence: this thread's. */
static int emit_clock(struct recorder *r, const struct btr_clock *k)
{
	struct clock_value v[CLOCKS_MAX];
	int n;

	if (k->seq != r->clock_seq)
		return 0; /* a stale stamp: its userspace half is gone */
	n = clocks_combine(k, &r->user_clocks, v);
	return service_emit_clock_snapshot(r->clocks, r->clocks_seq, v, n);
}

/* A reader thread hands the stamp to the main thread, which writes it. */
static int on_clock_record(struct recorder *r, const struct btr_clock *k)
{
	if (!readers_threaded(r->readers))
		return emit_clock(r, k);
	pthread_mutex_lock(&r->share);
	r->clock_rec = *k;
	r->clock_pending = true;
	pthread_mutex_unlock(&r->share);
	readers_notify_main(r->readers);
	return 0;
}

/* Which tids a record shows, for the process tree. */
static void note_tids(struct tid_batch *b, const struct btr_hdr *h)
{
	switch (h->type) {
	case BTR_REC_SWITCH:
	case BTR_REC_SWITCH_BLOCKED:
		tidbatch_note(b, ((const struct btr_switch *)h)->next_pid);
		break;
	case BTR_REC_WAKING:
	case BTR_REC_WAKEUP_NEW:
		tidbatch_note(b, ((const struct btr_wakeup *)h)->pid);
		break;
	case BTR_REC_NEWTASK:
		tidbatch_note(b, ((const struct btr_newtask *)h)->pid);
		break;
	case BTR_REC_RENAME:
		tidbatch_forget(b, ((const struct btr_rename *)h)->pid);
		tidbatch_note(b, ((const struct btr_rename *)h)->pid);
		break;
	case BTR_REC_EXEC:
		tidbatch_forget_process(b, ((const struct btr_exec *)h)->pid);
		tidbatch_note(b, ((const struct btr_exec *)h)->pid);
		break;
	default:
		break;
	}
}

/* The buffer fills faster than the period writes it: write now rather
 * than lose data (a reader thread asks the main thread, once). */
static int write_under_pressure(struct recorder *r)
{
	if (!readers_threaded(r->readers))
		return output_write(&r->out);
	if (!__atomic_exchange_n(&r->write_wanted, 1, __ATOMIC_ACQ_REL))
		readers_notify_main(r->readers);
	return 0;
}

/* The maps of process tgid were read: its samples need not carry where
 * their frames are mapped any more. */
static void note_known_proc(void *ctx, int32_t tgid, uint64_t ts)
{
	struct recorder *r = ctx;

	if (r->cap)
		capture_note_known_proc(r->cap, tgid, ts);
}

static int on_record(void *ctx, uint32_t cpu, const void *data, size_t len)
{
	struct reader_ctx *rc = ctx;
	struct recorder *r = rc->r;
	const struct btr_hdr *h = data;
	int e;

	if (len < sizeof(*h) || cpu >= r->ncpus)
		return -EINVAL;
	if (h->type == BTR_REC_CLOCK) {
		if (len < sizeof(struct btr_clock))
			return -EINVAL;
		e = bundle_enc_note_lost(r->enc[cpu], h->lost);
		return e ? e : on_clock_record(r, data);
	}
	if (h->type == BTR_REC_VMAS) /* a stack record of the process follows */
		return r->ustacks ? ustacks_note_vmas(r->ustacks, h, len) : -EINVAL;
	if (h->type == BTR_REC_USTACK) /* its stack record follows */
		return r->stacks ? callstack_enc_note_slice(r->stacks[cpu], h, len)
				 : -EINVAL;
	if (h->type == BTR_REC_STACK && r->stacks) {
		e = bundle_enc_note_lost(r->enc[cpu], h->lost);
		if (!e && r->ustacks) {
			ustacks_lock(r->ustacks);
			e = callstack_enc_add(r->stacks[cpu], cpu, h, len);
			ustacks_unlock(r->ustacks);
		} else if (!e) {
			e = callstack_enc_add(r->stacks[cpu], cpu, h, len);
		}
		if (!e)
			r->stack_records[cpu]++;
		return e;
	}
	if (r->watch)
		e = trig_watch_around(r->watch, cpu, h, len,
				      (struct trig_enc)BUNDLE_ENC_CBS,
				      r->enc[cpu]);
	else
		e = bundle_enc_add(r->enc[cpu], h, len);
	if (e)
		return e;
	note_tids(&rc->tids, h);
	if (r->ustacks && (h->type == BTR_REC_EXEC || h->type == BTR_REC_EXIT ||
			   h->type == BTR_REC_FORK))
		ustacks_note_record(r->ustacks, h, len);
	/* Streaming, and a drain pass fills the buffer faster than the
	 * period writes it. */
	if (r->o.stream && central_under_pressure(central_unread_chunks(r->out.buf),
						  central_slots(r->out.buf)))
		return write_under_pressure(r);
	return 0;
}

/* One clock snapshot: userspace reads, then the kernel stamp, whose record
 * the drain hands to on_clock_record. */
static int take_clock_snapshot(struct recorder *r)
{
	int e;

	clocks_read_user(&r->user_clocks);
	e = capture_clock_stamp(r->cap, ++r->clock_seq);
	if (e == -ENOSPC) {
		/* This CPU's ring is full: the next period will try again. */
		log_debug("clock snapshot skipped: ring full");
		r->counts.clock_skipped++;
		return 0;
	}
	if (e || readers_threaded(r->readers))
		return e; /* a reader hands the stamp over */
	e = capture_drain(r->cap);
	return e < 0 ? e : 0;
}

/* The counts of CPU cpu's encoder, and its stack records: its own, or
 * with reader threads the ones published at its reader's last pass (the
 * caller holds r->share). */
static const struct bundle_enc_stats *cpu_stats(const struct recorder *r,
						uint32_t cpu, uint64_t *stacks)
{
	bool pub = readers_threaded(r->readers);

	*stacks = !r->stack_records ? 0
		  : pub		    ? r->pub_stack_records[cpu]
				    : r->stack_records[cpu];
	return pub ? &r->pub[cpu] : bundle_enc_stats(r->enc[cpu]);
}

/* Records the encoder of `cpu` took (its own count, by type); with reader
 * threads the caller holds r->share. */
static uint64_t records_read(const struct recorder *r, uint32_t cpu)
{
	uint64_t n, stacks;
	const uint64_t *ev = cpu_stats(r, cpu, &stacks)->events;
	uint32_t t;

	for (n = stacks, t = 0; t < BTR_REC_TYPE_MAX; t++)
		n += ev[t];
	return n;
}

/* The counts of the status line and summary, from the encoders' own:
 * records by type, and the losses the records carried so far (the BPF
 * side's totals replace them at the end, report_accounting). */
static void count_records(struct recorder *r)
{
	const struct bundle_enc_stats *st;
	uint32_t cpu, t;
	uint64_t stacks;

	memset(r->counts.by_type, 0, sizeof(r->counts.by_type));
	r->counts.events = r->counts.lost = r->counts.switch_unmatched = 0;
	pthread_mutex_lock(&r->share);
	for (cpu = 0; r->enc && cpu < r->ncpus; cpu++) {
		if (!r->enc[cpu])
			continue;
		st = cpu_stats(r, cpu, &stacks);
		for (t = 0; t < BTR_REC_TYPE_MAX; t++) {
			r->counts.by_type[t] += st->events[t];
			r->counts.events += st->events[t];
		}
		r->counts.lost += st->lost;
		r->counts.switch_unmatched += st->switch_unmatched;
		if (r->stack_records) {
			r->counts.by_type[BTR_REC_STACK] += stacks;
			r->counts.events += stacks;
		}
	}
	pthread_mutex_unlock(&r->share);
}

/* The end of a drain pass over CPUs cpus[0..n): their encoders emit what
 * they hold. */
static int flush_cpus(struct recorder *r, const uint32_t *cpus, uint32_t n)
{
	uint32_t i;
	int e = 0;

	for (i = 0; i < n && !e; i++)
		e = bundle_enc_flush(r->enc[cpus[i]]);
	/* The samples kept for mappings that came later in the pass, then
	 * each drain pass starts the stacks' interned state anew, so a ring
	 * that overwrote older chunks leaves the later samples readable. */
	for (i = 0; r->stacks && i < n && !e; i++) {
		if (r->ustacks)
			ustacks_lock(r->ustacks);
		e = callstack_enc_flush(r->stacks[cpus[i]],
					r->finishing ||
						__atomic_load_n(&r->flush_all,
								__ATOMIC_ACQUIRE));
		if (r->ustacks)
			ustacks_unlock(r->ustacks);
	}
	for (i = 0; r->stacks && i < n; i++)
		callstack_enc_reset(r->stacks[cpus[i]]);
	return e;
}

/* The main thread takes what reader threads handed over: tids into the
 * process tree, a clock stamp; then describes the new tids. */
static int take_handoff(struct recorder *r)
{
	struct btr_clock k;
	bool clock;
	int e = 0;

	pthread_mutex_lock(&r->share);
	tidbatch_apply(&r->shared_tids, r->procs);
	clock = r->clock_pending;
	k = r->clock_rec;
	r->clock_pending = false;
	pthread_mutex_unlock(&r->share);
	if (clock)
		e = emit_clock(r, &k);
	return e ? e : procfs_flush(r->procs);
}

/* Before a reader's pass (one reader, with a watch): the states of the
 * threads read of late start loading. */
static void reader_pass_begin(void *ctx)
{
	struct reader_ctx *rc = ctx;

	trig_watch_warm(rc->r->watch);
}

/* After a reader's pass: on the main thread (one reader, or none running)
 * its tids go to the process tree now; a reader thread hands them over
 * with its counts. */
static int reader_pass_done(void *ctx, int records)
{
	struct reader_ctx *rc = ctx;
	struct recorder *r = rc->r;
	uint32_t n, i;
	const uint32_t *cpus = readers_rings(r->readers, rc->id, &n);
	int e = flush_cpus(r, cpus, n);
	bool tids = rc->tids.n > 0;

	/* Maps retired by an exec or an exit go now: every stack encoded
	 * with them was encoded under the ustacks lock. */
	if (r->ustacks)
		ustacks_end_pass(r->ustacks);

	if (!readers_threaded(r->readers)) {
		tidbatch_apply(&rc->tids, r->procs);
		return e ? e : take_handoff(r);
	}
	if (r->watch) {
		/* every record older than the last pass's end is read now
		 * (this pass began after it): hits that end before it may go */
		uint64_t now = clocks_boottime_ns();

		trig_watch_frontier(r->watch, rc->id, rc->last_pass, cpus, n);
		rc->last_pass = now;
	}
	if (!records)
		return e;
	pthread_mutex_lock(&r->share);
	if (!e)
		e = tidbatch_move(&r->shared_tids, &rc->tids);
	for (i = 0; i < n; i++) {
		r->pub[cpus[i]] = *bundle_enc_stats(r->enc[cpus[i]]);
		if (r->stack_records)
			r->pub_stack_records[cpus[i]] = r->stack_records[cpus[i]];
	}
	pthread_mutex_unlock(&r->share);
	if (tids)
		readers_notify_main(r->readers);
	return e;
}

/* A reader commits its CPUs' partly filled chunks. */
static void reader_commit(void *ctx)
{
	struct reader_ctx *rc = ctx;
	struct recorder *r = rc->r;
	uint32_t n, i;
	const uint32_t *cpus = readers_rings(r->readers, rc->id, &n);

	for (i = 0; i < n; i++) {
		central_flush_seq(r->out.buf, SEQ_FTRACE_BASE + cpus[i]);
		if (r->stacks)
			central_flush_seq(r->out.buf,
					  SEQ_FTRACE_BASE + r->ncpus + cpus[i]);
	}
}

/* Every encoder flushed and every tid described, on the main thread with
 * no reader thread running. */
static int flush_encoders(struct recorder *r)
{
	uint32_t k;
	int e = 0;

	for (k = 0; !e && k < r->nreaders; k++)
		e = reader_pass_done(&r->rctx[k], 0);
	return e;
}

static int check_privileges(void)
{
	cap_t caps;
	cap_flag_value_t bpf = CAP_CLEAR, perfmon = CAP_CLEAR,
			 admin = CAP_CLEAR;

	if (geteuid() == 0)
		return 0;
	caps = cap_get_proc();
	if (caps) {
		cap_get_flag(caps, CAP_BPF, CAP_EFFECTIVE, &bpf);
		cap_get_flag(caps, CAP_PERFMON, CAP_EFFECTIVE, &perfmon);
		cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &admin);
		cap_free(caps);
	}
	if (admin == CAP_SET || (bpf == CAP_SET && perfmon == CAP_SET))
		return 0;
	log_error("recording needs root, or CAP_BPF and CAP_PERFMON (try sudo)");
	return -EPERM;
}

static const char *symbolize(void *ctx, uint64_t addr, uint64_t *id)
{
	return ksyms_name(ctx, addr, id);
}

/* The kernel symbols of --blocked-reason: the text ranges the BPF side
 * skips, and the names the encoders intern. Without readable addresses
 * (kptr_restrict) blocked reasons carry io_wait only, and no stack is
 * taken. */
static void load_ksyms(struct recorder *r, struct capture_opts *co)
{
	if (co->blocked_mode == BTR_BLOCKED_NONE && !co->callstacks)
		return;
	r->ksyms = ksyms_load(NULL);
	if (!ksyms_usable(r->ksyms) ||
	    !ksyms_addr(r->ksyms, "__sched_text_end")) {
		log_warn("kernel functions cannot be symbolized: /proc/kallsyms "
			 "shows no kernel addresses (kptr_restrict?); blocked "
			 "reasons will carry io_wait only%s",
			 co->callstacks ? ", call stacks unnamed frames" : "");
		ksyms_free(r->ksyms);
		r->ksyms = NULL;
		return;
	}
	co->sched_text[0] = ksyms_addr(r->ksyms, "__sched_text_start");
	co->sched_text[1] = ksyms_addr(r->ksyms, "__sched_text_end");
	co->lock_text[0] = ksyms_addr(r->ksyms, "__lock_text_start");
	co->lock_text[1] = ksyms_addr(r->ksyms, "__lock_text_end");
	log_debug("%zu kernel text symbols for blocked functions",
		  ksyms_count(r->ksyms));
}

static int setup(struct recorder *r)
{
	struct capture_opts co = {
		.ringbuf_size = r->o.ringbuf_size,
		.ring_sizes = r->plan.ring_sizes,
		.nrings = r->plan.nslots,
		.kf = &r->kf,
		.blocked_mode = (uint32_t)r->o.blocked_mode,
		.callstacks = r->o.callstacks,
		.user_stacks = r->o.callstacks && !r->o.kernel_stacks_only,
		.stack_slice = r->o.stack_slice,
		.kstack_check = r->o.kstack_check,
		.on_record = on_record,
	};
	struct readers_ops ops = { false, on_record, reader_pass_done,
				   reader_commit, NULL };
	void **ctxs;
	char err[256];
	uint32_t cpu, k;

	if (access("/sys/kernel/btf/vmlinux", R_OK) || kfeatures_probe(&r->kf)) {
		log_error("this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			  "it needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	memcpy(r->kf.forced, r->o.fallback, sizeof(r->kf.forced));
	r->nreaders = r->o.readers ? r->o.readers
				   : readers_default(r->plan.b.nonline,
						     r->plan.nslots);
	if (r->nreaders > r->plan.nslots)
		r->nreaders = r->plan.nslots;
	r->rctx = aligned_alloc(64, r->nreaders * sizeof(*r->rctx));
	if (!r->rctx)
		return -ENOMEM;
	memset(r->rctx, 0, r->nreaders * sizeof(*r->rctx));
	for (k = 0; k < r->nreaders; k++) {
		r->rctx[k].r = r;
		r->rctx[k].id = k;
	}
	co.ctx = &r->rctx[0]; /* the main thread's drains */
	load_ksyms(r, &co);
	r->cap = capture_open(&co, err, sizeof(err));
	if (!r->cap) {
		log_error("%s", err);
		return -EINVAL;
	}
	kfeatures_log(&r->kf, capture_uses_raw_tp(r->cap), r->o.callstacks,
		      record_opts_kstacks(&r->o));
	r->ncpus = capture_ncpus(r->cap);
	if (r->o.ntriggers &&
	    !(r->trig = rec_triggers_new(&r->o, r->ncpus, r->data, err,
					 sizeof(err)))) {
		log_error("%s", err);
		return -EINVAL;
	}
	r->watch = r->trig ? rec_triggers_watch(r->trig) : NULL;
	if (r->watch && r->nreaders > 1 &&
	    trig_watch_readers(r->watch, r->nreaders))
		return -ENOMEM;
	if (hotplug_init(&r->hotplug, &r->plan))
		return -ENOMEM;
	r->enc = calloc(r->ncpus, sizeof(*r->enc));
	r->read_events = calloc(r->ncpus, sizeof(*r->read_events));
	r->procs = procfs_new(r->data, SEQ_PROCESS_TREE);
	if (!r->enc || !r->read_events || !r->procs)
		return -ENOMEM;
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		r->enc[cpu] = bundle_enc_new(cpu, SEQ_FTRACE_BASE + cpu,
					     r->data);
		if (!r->enc[cpu])
			return -ENOMEM;
		if (r->ksyms)
			bundle_enc_set_symbolizer(r->enc[cpu], symbolize,
						  r->ksyms);
	}
	if (r->o.callstacks) {
		r->stack_records = calloc(r->ncpus, sizeof(*r->stack_records));
		r->stacks = calloc(r->ncpus, sizeof(*r->stacks));
		r->ustacks = ustacks_new();
		if (!r->stack_records || !r->stacks || !r->ustacks)
			return -ENOMEM;
		ustacks_set_readers(r->ustacks, r->nreaders);
		for (cpu = 0; cpu < r->ncpus; cpu++) {
			r->stacks[cpu] = callstack_enc_new(
				r->data, SEQ_FTRACE_BASE + r->ncpus + cpu,
				r->ksyms ? symbolize : NULL, r->ksyms,
				co.sched_text[0], co.sched_text[1]);
			if (!r->stacks[cpu])
				return -ENOMEM;
			callstack_enc_set_user(r->stacks[cpu], ustacks_resolve,
					       r->ustacks);
			callstack_enc_set_unwind(r->stacks[cpu], ustacks_unwind,
						 r->ustacks);
		}
		ustacks_on_maps_read(r->ustacks, note_known_proc, r);
	}
	r->pub = calloc(r->ncpus, sizeof(*r->pub));
	r->pub_stack_records = calloc(r->ncpus, sizeof(*r->pub_stack_records));
	ctxs = calloc(r->nreaders, sizeof(*ctxs));
	if (!r->pub || !r->pub_stack_records || !ctxs) {
		free(ctxs);
		return -ENOMEM;
	}
	for (k = 0; k < r->nreaders; k++)
		ctxs[k] = &r->rctx[k];
	/* with --trigger and one reader, the rings are read in time order
	 * across them: the watch pairs a thread's records from several rings
	 * (a waking in the waker's CPU's, its run in its own). Reader threads
	 * note the records instead, and the main thread merges the notes */
	ops.time_order = r->watch != NULL && r->nreaders <= 1;
	if (ops.time_order)
		ops.pass_begin = reader_pass_begin;
	r->readers = readers_new(capture_rings(r->cap), r->nreaders, &ops,
				 ctxs, err, sizeof(err));
	free(ctxs);
	if (!r->readers) {
		log_error("%s", err);
		return -EINVAL;
	}
	for (k = 0; r->nreaders > 1 && k < r->nreaders; k++) {
		uint32_t n;
		const uint32_t *cpus = readers_rings(r->readers, k, &n);

		log_debug("reader %u: CPU ids %u-%u", k, cpus[0], cpus[n - 1]);
	}
	log_debug("%u CPU ids, a %llu-byte ring each online one, %s; %u "
		  "reader%s", r->ncpus,
		  (unsigned long long)capture_ring_size(r->cap),
		  capture_uses_raw_tp(r->cap) ? "raw tracepoints" : "tp_btf",
		  r->nreaders, r->nreaders > 1 ? " threads" : "");
	return 0;
}

/* Marks the CPUs' sequences as the reader threads' (or back as this
 * thread's once they ended), and makes this thread's. */
static int own_cpu_sequences(struct recorder *r, bool owned)
{
	uint32_t cpu;
	int e = 0;

	for (cpu = 0; cpu < r->ncpus && !e; cpu++) {
		e = central_set_owned(r->out.buf, SEQ_FTRACE_BASE + cpu, owned);
		if (!e && r->stacks)
			e = central_set_owned(r->out.buf,
					      SEQ_FTRACE_BASE + r->ncpus + cpu,
					      owned);
	}
	/* this thread's sequences exist before the readers own theirs: none
	 * can be added meanwhile (a trigger's first marks, SEQ_TRIGGERS,
	 * were refused with reader threads) */
	if (!e && owned && r->trig)
		e = central_set_owned(r->out.buf, SEQ_TRIGGERS, false);
	return e;
}

/* Several readers: the reader threads take over the rings. */
static int start_readers(struct recorder *r)
{
	uint64_t stacks;
	uint32_t cpu;
	int e;

	if (r->nreaders < 2)
		return 0;
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		r->pub[cpu] = *cpu_stats(r, cpu, &stacks);
		r->pub_stack_records[cpu] = stacks;
	}
	e = own_cpu_sequences(r, true);
	if (!e)
		e = readers_start(r->readers,
				  (int)(r->o.drain_period_ns / 1000000ull));
	if (e)
		log_error("cannot start the reader threads: %s", strerror(-e));
	return e;
}

/* The reader threads drain, flush, commit and end; this thread is the
 * only reader after. Returns the first reader error. */
static int stop_readers(struct recorder *r)
{
	int e;

	if (!r->readers || !readers_threaded(r->readers))
		return r->readers ? readers_error(r->readers) : 0;
	e = readers_stop(r->readers);
	own_cpu_sequences(r, false);
	return e;
}

/* The header packets, kept apart from the buffer, then the first process
 * tree into the buffer. */
static int write_start(struct recorder *r)
{
	struct packet_sink *h = output_header_sink(&r->out);
	int e;

	r->clocks = h;
	r->clocks_seq = SEQ_SERVICE;
	e = take_clock_snapshot(r);
	r->clocks = r->data;
	r->clocks_seq = SEQ_SERVICE_RING;
	if (!e)
		e = service_emit_config(h, &r->o);
	if (!e)
		e = service_emit_uuid(h);
	if (!e)
		e = service_emit_system_info(h, r->o.machine_name);
	if (!e)
		e = service_emit_event(h, SEQ_SERVICE, clocks_boottime_ns(), 1);
	if (!e)
		e = procfs_scan_all(r->procs);
	/* Commit the scan now: with --fill-policy discard it is among the
	 * oldest data, which that policy keeps. */
	central_flush(r->out.buf);
	return e;
}

static int start(struct recorder *r)
{
	char err[256];
	int e;

	if (r->o.command) {
		e = child_spawn(&r->child, r->o.command, err, sizeof(err));
		if (e) {
			log_error("%s", err);
			return e;
		}
	}
	e = write_start(r);
	/* the header into the file now, before the command is let go: a
	 * file that cannot take it fails the start, and the file is a
	 * trace from here on */
	if (!e)
		e = output_write_header(&r->out);
	if (!e)
		empty_output = NULL;
	if (!e)
		e = capture_attach(r->cap, err, sizeof(err));
	if (e) {
		if (e != -ENOSPC && err[0])
			log_error("%s", err);
		return e;
	}
	if (r->o.command) {
		e = child_release(&r->child, r->o.command, err, sizeof(err));
		if (e) {
			log_error("%s", err);
			return e;
		}
	}
	/* The reader must keep up with the CPUs it drains: it runs ahead of
	 * ordinary tasks (the BPF side wakes it only once per half-full
	 * ring). Best effort: only while it may still do so. */
	if (setpriority(PRIO_PROCESS, 0, READER_NICE))
		log_debug("cannot raise the reader's priority: %s", strerror(errno));
	/* Loaded, attached, output open: keep only what snapshot files
	 * need (their hand-over to the sudo user). */
	e = privileges_drop(getenv("SUDO_UID") != NULL,
			    r->o.callstacks && !r->o.kernel_stacks_only,
			    r->plan.b.noffline > 0);
	if (e)
		log_warn("cannot drop privileges: %s", strerror(-e));
	return start_readers(r);
}

static bool should_stop(struct recorder *r, uint64_t now, uint64_t t0)
{
	if (stop_requests)
		return true;
	if (r->o.duration_ns && now - t0 >= r->o.duration_ns)
		return true;
	if (r->trigger_stop)
		return true;
	return r->o.command && child_poll(&r->child);
}

/* A periodic task: due when now passes next, then rescheduled. */
static bool due(uint64_t now, uint64_t *next, uint64_t period)
{
	if (!period || now < *next)
		return false;
	*next = now + period;
	return true;
}

/* The buffer as it is now into the next OUTPUT.N (SIGUSR1 or a trigger);
 * a failure to write it is reported, not fatal. */
static int write_snapshot(struct recorder *r)
{
	int e;

	/* A pass begun after the request, so that the snapshot has what
	 * was committed before it (the pass that ran when SIGUSR1 came may
	 * have read a ring before the records its sender waited for: a
	 * program that exited, then signalled); the stack samples held for
	 * a mapping record go in too: that pass end keeps none. */
	__atomic_store_n(&r->flush_all, true, __ATOMIC_RELEASE);
	if (readers_threaded(r->readers))
		e = readers_sync(r->readers);
	else
		e = readers_poll(r->readers, 0);
	__atomic_store_n(&r->flush_all, false, __ATOMIC_RELEASE);
	if (!e)
		e = take_handoff(r);
	if (e)
		return e;
	e = output_snapshot(&r->out);
	if (r->trig)
		rec_triggers_snapshot_written(r->trig, e ? NULL : r->out.last_snapshot,
					      r->out.last_snapshot_bytes);
	return 0;
}

static int periodic_work(struct recorder *r, uint64_t now, uint64_t *next)
{
	int e = 0;

	if (due(now, &next[0], r->o.snapshot_period_ns))
		e = take_clock_snapshot(r);
	if (!e && due(now, &next[1], r->o.clear_period_ns))
		procfs_clear(r->procs);
	/* Reader threads commit their chunks first (readers_sync), so the
	 * flush, the write or the snapshot has what was in the rings now. */
	if (!e && due(now, &next[2], r->o.flush_period_ns)) {
		e = readers_sync(r->readers);
		central_flush(r->out.buf);
	}
	if (!e && r->o.stream && due(now, &next[3], r->o.file_write_period_ns)) {
		e = readers_sync(r->readers);
		if (!e)
			e = take_handoff(r);
		if (!e)
			e = output_write(&r->out);
	}
	if (!e && due(now, &next[4], HOTPLUG_PERIOD_NS))
		hotplug_check(&r->hotplug, capture_rings(r->cap), NULL);
	if (!e && r->out.file.err)
		e = r->out.file.err; /* from a write under buffer pressure */
	if (!e && snapshot_requests) {
		snapshot_requests = 0;
		e = write_snapshot(r);
	}
	if (!e && r->trig) {
		switch (rec_triggers_tick(r->trig, now)) {
		case TRIG_SNAPSHOT:
			e = write_snapshot(r);
			break;
		case TRIG_STOP:
			r->trigger_stop = true;
			break;
		case TRIG_NONE:
			break;
		}
	}
	return e;
}

/* One turn of the main thread with reader threads: waits for a reader's
 * hand-over or the drain period, takes it, writes under buffer pressure. */
static int main_turn(struct recorder *r, int timeout_ms)
{
	int e;

	readers_wait_main(r->readers, timeout_ms);
	e = readers_error(r->readers);
	if (!e)
		e = take_handoff(r);
	if (!e && __atomic_exchange_n(&r->write_wanted, 0, __ATOMIC_ACQ_REL))
		e = output_write(&r->out);
	return e;
}

static int run_loop(struct recorder *r)
{
	uint64_t t0 = clocks_boottime_ns(), now = t0;
	uint64_t next[5] = { t0 + r->o.snapshot_period_ns,
			     t0 + r->o.clear_period_ns,
			     t0 + r->o.flush_period_ns,
			     t0 + r->o.file_write_period_ns,
			     t0 + HOTPLUG_PERIOD_NS };
	int drain_ms = (int)(r->o.drain_period_ns / 1000000ull);
	int e = 0;

	status_init(&r->status, r->o.quiet, t0);
	while (!e && !should_stop(r, now, t0)) {
		if (readers_threaded(r->readers))
			e = main_turn(r, drain_ms);
		else
			e = readers_poll(r->readers, drain_ms);
		now = clocks_boottime_ns();
		if (!e)
			e = periodic_work(r, now, next);
		if (status_due(&r->status, now))
			count_records(r);
		status_tick(&r->status, now, &r->counts,
			    file_writer_bytes(&r->out.file));
	}
	if (e == -EFBIG && r->out.file.limit_reached) {
		log_info("stopping: the file reached --max-file-size");
		return 0;
	}
	return e < 0 ? e : 0;
}

static uint32_t *sequence_ids(uint32_t ncpus, bool stacks, bool triggers,
			      uint32_t *n)
{
	uint32_t *ids = calloc(2 * ncpus + 4, sizeof(*ids)), i;

	if (!ids)
		return NULL;
	ids[0] = SEQ_SERVICE;
	ids[1] = SEQ_SERVICE_RING;
	ids[2] = SEQ_PROCESS_TREE;
	for (i = 0; i < ncpus; i++)
		ids[3 + i] = SEQ_FTRACE_BASE + i;
	*n = ncpus + 3;
	for (i = 0; stacks && i < ncpus; i++)
		ids[(*n)++] = SEQ_FTRACE_BASE + ncpus + i;
	if (triggers)
		ids[(*n)++] = SEQ_TRIGGERS;
	return ids;
}

/* The statistics written after every file write: ftrace per-CPU stats
 * (START, then END with the BPF-side losses and records read) and
 * TraceStats with the central buffer's accounting. */
static int write_trailer(void *ctx, struct packet_sink *to, bool snapshot)
{
	struct recorder *r = ctx;
	struct btr_cpu_acct *acct = calloc(r->ncpus, sizeof(*acct));
	uint32_t nseq = 0, *seqs = sequence_ids(r->ncpus, r->stacks != NULL,
					r->trig != NULL, &nseq);
	struct central_stats cs;
	uint32_t cpu;
	int e = -ENOMEM;

	pthread_mutex_lock(&r->share);
	for (cpu = 0; cpu < r->ncpus; cpu++)
		r->read_events[cpu] = records_read(r, cpu);
	pthread_mutex_unlock(&r->share);
	central_stats_copy(r->out.buf, &cs);
	if (acct && seqs)
		e = capture_read_acct(r->cap, acct);
	if (!e)
		e = service_emit_ftrace_stats(to, SEQ_SERVICE, 1, NULL, NULL,
					      r->ncpus);
	if (!e)
		e = service_emit_ftrace_stats(to, SEQ_SERVICE, 2, acct,
					      r->read_events, r->ncpus);
	if (!e)
		e = service_emit_trace_stats(to, seqs, nseq, &cs);
	if (!e && r->trig)
		e = rec_triggers_trailer(r->trig, to, SEQ_SERVICE, snapshot);
	/* The names of the user frames so far; the final write has them in
	 * the buffer. */
	if (!e && snapshot && r->ustacks)
		e = ustacks_emit_symbols(r->ustacks, to, SEQ_SERVICE,
					 clocks_boottime_ns(), false);
	free(acct);
	free(seqs);
	return e;
}

/* The closing summary of --callstacks: the encoders' counts summed. */
static void log_callstacks(struct recorder *r)
{
	struct callstack_enc_stats sum = { 0 };
	uint32_t cpu;

	for (cpu = 0; cpu < r->ncpus; cpu++) {
		const struct callstack_enc_stats *ss =
			callstack_enc_stats(r->stacks[cpu]);

		sum.samples += ss->samples;
		sum.truncated += ss->truncated;
		sum.failed += ss->failed;
		sum.user_truncated += ss->user_truncated;
		sum.user_failed += ss->user_failed;
		sum.user_none += ss->user_none;
		sum.user_frames += ss->user_frames;
		sum.user_unmapped += ss->user_unmapped;
		sum.user_unnamed += ss->user_unnamed;
		sum.user_unwound += ss->user_unwound;
		sum.user_joined += ss->user_joined;
		sum.user_cut += ss->user_cut;
		sum.user_cfi_failed += ss->user_cfi_failed;
		sum.slice_missing += ss->slice_missing;
		sum.deferred += ss->deferred;
		sum.carried += ss->carried;
	}
	log_debug("user stacks: %llu samples kept to the end of their drain "
		  "pass for a mapping record read later (%llu of them to the "
		  "next pass)",
		  (unsigned long long)sum.deferred,
		  (unsigned long long)sum.carried);
	ustacks_log(r->ustacks);
	if (r->o.quiet)
		return;
	log_info("call stacks: %llu samples, %llu truncated at %d frames, "
		 "%llu could not be taken",
		 (unsigned long long)sum.samples,
		 (unsigned long long)sum.truncated, BTR_STACK_MAX,
		 (unsigned long long)sum.failed);
	log_info("user stacks: %llu truncated at %d frames, %llu could not be "
		 "taken, %llu without user memory (kernel threads, exiting "
		 "tasks); %llu frames, %llu in "
		 "no known mapping, %llu unnamed",
		 (unsigned long long)sum.user_truncated, BTR_USTACK_MAX,
		 (unsigned long long)sum.user_failed,
		 (unsigned long long)sum.user_none,
		 (unsigned long long)sum.user_frames,
		 (unsigned long long)sum.user_unmapped,
		 (unsigned long long)sum.user_unnamed);
	if (record_opts_slice(&r->o) && kfeatures_use(&r->kf, KF_USER_WALK))
		log_info("user stacks by CFI from a %u-byte slice: %llu "
			 "unwound, %llu of them joined the frame-pointer chain, "
			 "%llu cut by the slice (--stack-slice), %llu stopped at "
			 "a frame without CFI; %llu slices lost (frame pointers "
			 "alone)", r->o.stack_slice,
			 (unsigned long long)sum.user_unwound,
			 (unsigned long long)sum.user_joined,
			 (unsigned long long)sum.user_cut,
			 (unsigned long long)sum.user_cfi_failed,
			 (unsigned long long)sum.slice_missing);
}

/* Events the programs never saw: a warning when any, the figure with -v. */
static void log_recursion_misses(const struct recorder *r)
{
	uint32_t progs;
	uint64_t n = capture_recursion_misses(r->cap, &progs);

	log_debug("BPF recursion misses: %llu, over %u programs",
		  (unsigned long long)n, progs);
	if (n)
		log_warn("%llu scheduler events were not recorded: they came "
			 "while a program was already running on their CPU (BPF "
			 "recursion misses, counted by the kernel per program, "
			 "not per CPU)", (unsigned long long)n);
}

static void report_accounting(struct recorder *r)
{
	struct btr_cpu_acct *acct = calloc(r->ncpus, sizeof(*acct));
	struct central_stats st;
	const struct central_stats *cs = &st;
	uint64_t hits = 0, misses = 0, wrong = 0, slices_lost = 0, vmas_lost = 0;
	uint64_t vmas_failed = 0;
	uint32_t cpu, p;

	central_stats_copy(r->out.buf, &st);
	count_records(r);
	if (!acct || capture_read_acct(r->cap, acct)) {
		free(acct);
		return;
	}
	r->counts.lost = 0;
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		uint64_t runs = 0;

		for (p = 0; p < BTR_PROG_MAX; p++)
			runs += acct[cpu].runs[p];
		r->counts.lost += acct[cpu].lost_total;
		log_debug("cpu %u: %llu program runs, %llu records read, %llu dropped",
			  cpu, (unsigned long long)runs,
			  (unsigned long long)records_read(r, cpu),
			  (unsigned long long)acct[cpu].lost_total);
		if (r->stacks)
			log_debug("cpu %u: %llu call stacks taken, %llu "
				  "truncated, %llu could not be taken; user "
				  "stacks %llu truncated, %llu could not be "
				  "taken, %llu without user memory", cpu,
				  (unsigned long long)acct[cpu].runs[BTR_PROG_STACK],
				  (unsigned long long)acct[cpu].stack_truncated,
				  (unsigned long long)acct[cpu].stack_failed,
				  (unsigned long long)acct[cpu].ustack_truncated,
				  (unsigned long long)acct[cpu].ustack_failed,
				  (unsigned long long)acct[cpu].ustack_none);
		if (r->stacks)
			log_debug("cpu %u: kernel stacks %llu from the thread's "
				  "cache, %llu walked after a look-up", cpu,
				  (unsigned long long)acct[cpu].kstack_hits,
				  (unsigned long long)acct[cpu].kstack_misses);
		if (r->stacks && r->o.kstack_check)
			log_debug("cpu %u: %llu kernel stacks from the cache "
				  "differ from a walk (--kstack-check)", cpu,
				  (unsigned long long)acct[cpu].kstack_wrong);
		hits += acct[cpu].kstack_hits;
		misses += acct[cpu].kstack_misses;
		slices_lost += acct[cpu].slice_lost;
		vmas_lost += acct[cpu].vmas_lost;
		vmas_failed += acct[cpu].vmas_failed;
		wrong += acct[cpu].kstack_wrong;
	}
	if (r->stacks)
		log_callstacks(r);
	if (slices_lost)
		log_warn("%llu user stack slices did not fit in their ring: "
			 "those stacks went by frame pointers alone",
			 (unsigned long long)slices_lost);
	if (r->ustacks && (vmas_failed || r->o.verbose) && !r->o.quiet)
		log_info("user stacks: %llu mapping look-ups in BPF failed (the "
			 "mmap lock busy, or a PREEMPT_RT kernel, where none can "
			 "be made at a switch): the library frames of those "
			 "processes are placed only if their maps could be read",
			 (unsigned long long)vmas_failed);
	if (vmas_lost)
		log_warn("%llu mappings of processes seen by the BPF side did not "
			 "fit in their ring: the frames of those processes, if "
			 "gone before their maps were read, are unknown",
			 (unsigned long long)vmas_lost);
	if (r->stacks && !r->o.quiet)
		log_info("kernel stacks: %llu from the thread's cache, %llu "
			 "walked (cache missed)", (unsigned long long)hits,
			 (unsigned long long)misses);
	else if (r->o.blocked_mode == BTR_BLOCKED_ALL)
		log_debug("blocked functions: kernel stacks %llu from the "
			  "thread's cache, %llu walked (cache missed), %llu "
			  "differ from a walk (--kstack-check)",
			  (unsigned long long)hits, (unsigned long long)misses,
			  (unsigned long long)wrong);
	log_recursion_misses(r);
	if (r->trig)
		rec_triggers_log(r->trig);
	if (r->hotplug.grown || r->hotplug.refused_n) {
		uint64_t failed, grown = rings_grown(capture_rings(r->cap), &failed);

		log_info("CPUs that came online: %llu rings grown, %llu could "
			 "not be (kept their page), %llu without room in the "
			 "budget", (unsigned long long)grown,
			 (unsigned long long)failed,
			 (unsigned long long)r->hotplug.refused_n);
	}
	if (r->counts.clock_skipped)
		log_debug("%llu clock snapshots skipped: their ring was full",
			  (unsigned long long)r->counts.clock_skipped);
	log_debug("buffer: %llu chunks written, %llu overwritten, %llu discarded, %llu packets lost",
		  (unsigned long long)cs->chunks_written,
		  (unsigned long long)cs->chunks_overwritten,
		  (unsigned long long)cs->chunks_discarded,
		  (unsigned long long)cs->packets_lost);
	free(acct);
}

/* Detach, drain what is left, write the closing packets and the file. */
static int finish(struct recorder *r)
{
	int e;

	capture_detach(r->cap);
	e = stop_readers(r);
	if (!e)
		e = capture_drain(r->cap);
	r->finishing = true;
	if (e >= 0)
		e = flush_encoders(r);
	if (!e && r->trig)
		rec_triggers_finish(r->trig, clocks_boottime_ns());
	if (!e)
		e = take_clock_snapshot(r);
	if (!e && r->ustacks)
		e = ustacks_emit_symbols(r->ustacks, r->data, SEQ_SERVICE_RING,
					 clocks_boottime_ns(), true);
	if (!e)
		e = service_emit_event(r->data, SEQ_SERVICE_RING,
				       clocks_boottime_ns(), 0);
	if (!e)
		e = output_write(&r->out);
	report_accounting(r);
	if (e == -EFBIG && r->out.file.limit_reached)
		e = 0; /* the file ends at the limit, by request */
	return e < 0 ? e : 0;
}

static void cleanup(struct recorder *r)
{
	uint32_t cpu, k;

	readers_free(r->readers); /* the threads end first */
	r->readers = NULL;
	rec_triggers_free(r->trig);
	r->trig = NULL;
	for (k = 0; r->rctx && k < r->nreaders; k++)
		tidbatch_free(&r->rctx[k].tids);
	free(r->rctx);
	tidbatch_free(&r->shared_tids);
	free(r->pub);
	free(r->pub_stack_records);
	for (cpu = 0; r->enc && cpu < r->ncpus; cpu++)
		bundle_enc_free(r->enc[cpu]);
	free(r->enc);
	free(r->read_events);
	for (cpu = 0; r->stacks && cpu < r->ncpus; cpu++)
		callstack_enc_free(r->stacks[cpu]);
	free(r->stacks);
	free(r->stack_records);
	ustacks_free(r->ustacks);
	procfs_free(r->procs);
	capture_close(r->cap);
	ksyms_free(r->ksyms);
	plan_free(&r->plan);
	hotplug_free(&r->hotplug);
	if (r->o.command)
		child_abort(&r->child);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void report_write_error(struct recorder *r, int e)
{
	log_error("%s: %s", strcmp(r->o.output, "-") ? r->o.output : "stdout",
		  strerror(-e));
}

int cmd_record(int argc, char **argv)
{
	struct recorder r;
	bool done;
	int e, rc, cmd_rc = EXIT_OK;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.share, NULL);
	rc = record_opts_parse(argc, argv, &r.o, &done);
	if (done)
		return rc;
	log_verbosity = r.o.quiet ? -1 : r.o.verbose ? 1 : 0;
	libbpf_set_print(r.o.verbose ? libbpf_print : NULL);
	e = plan_make(&r.plan, &r.o);
	if (e)
		return e == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	plan_log(&r.plan);
	if (check_privileges()) {
		plan_free(&r.plan);
		return EXIT_FAIL;
	}
	e = output_open(&r.out, &r.o, write_trailer, &r);
	if (e) {
		report_write_error(&r, e);
		output_discard(&r.out);
		plan_free(&r.plan);
		return EXIT_FAIL;
	}
	r.data = output_data_sink(&r.out);
	if (r.out.file.created)
		empty_output = r.out.file.path;
	install_signals();
	e = setup(&r);
	if (!e)
		e = start(&r);
	empty_output = NULL;
	if (e) {
		if (r.out.file.err)
			report_write_error(&r, r.out.file.err);
		cleanup(&r);
		output_discard(&r.out);
		return EXIT_FAIL;
	}
	e = run_loop(&r);
	if (!e)
		e = finish(&r);
	status_summary(&r.status, clocks_boottime_ns(), &r.counts,
		       file_writer_bytes(&r.out.file), r.o.output);
	/* A command that ended the recording gives its status, as a shell
	 * reports it (128 + N when signal N killed it). */
	if (r.o.command && r.child.exited) {
		cmd_rc = child_exit_code(r.child.status);
		if (!r.o.quiet)
			log_info("command exited with status %d", cmd_rc);
	}
	cleanup(&r);
	if (e)
		report_write_error(&r, r.out.file.err ? r.out.file.err : e);
	rc = output_close(&r.out);
	if (!e && rc)
		report_write_error(&r, rc);
	return e || rc ? EXIT_FAIL : cmd_rc;
}
