/* BTR_REC_STACK records into PerfSamples (see callstacks.h): the frames
 * are named, trimmed and given their mappings here, the rest is the perf
 * sample encoder's. */
#include "encode/callstacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "encode/perf_samples.h"
#include "util/grow.h"

#define KERNEL_MAPPING "/kernel"

/* Where user frames of no known mapping go: rel_pc is the pc. */
static const struct perf_mapping unknown_mapping = { .path = "[unknown]" };

struct callstack_enc {
	struct perf_samples *ps;
	bundle_symbolize_fn fn;
	void *ctx;
	callstack_user_fn ufn;
	void *uctx;
	callstack_unwind_fn unwind;
	void *wctx;
	struct btr_ustack *slice; /* the last slice record, allocated at
				   * the first */
	bool have_slice;
	/* stack records whose user pc no mapping placed yet, kept to the
	 * end of the drain pass (callstack_enc_flush): a mapping record of
	 * their process may be in a ring drained later in the pass, or
	 * (one still unplaced then, kept once more) in the next pass */
	struct deferred {
		struct btr_hdr *rec;
		size_t len;
		uint32_t cpu;
		struct btr_ustack *slice; /* NULL: none */
		bool carried; /* kept over a pass end already */
	} *deferred;
	size_t ndeferred, deferred_cap;
	bool flushing;
	__u64 pcs[BTR_USTACK_MAX];
	uint64_t sched_start, sched_end;
	struct perf_frame frames[BTR_STACK_MAX + BTR_USTACK_MAX];
	struct callstack_enc_stats st;
};

struct callstack_enc *callstack_enc_new(struct packet_sink *sink,
					uint32_t seq_id,
					bundle_symbolize_fn fn, void *ctx,
					uint64_t sched_start,
					uint64_t sched_end)
{
	struct perf_samples_opts o = {
		.seq_id = seq_id,
		.timebase_tracepoint = "sched/sched_switch",
	};
	struct callstack_enc *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ps = perf_samples_new(sink, &o);
	if (!c->ps) {
		free(c);
		return NULL;
	}
	c->fn = fn;
	c->ctx = ctx;
	c->sched_start = sched_start;
	c->sched_end = sched_end;
	return c;
}

void callstack_enc_set_user(struct callstack_enc *c, callstack_user_fn fn,
			    void *ctx)
{
	c->ufn = fn;
	c->uctx = ctx;
}

void callstack_enc_set_unwind(struct callstack_enc *c, callstack_unwind_fn fn,
			      void *ctx)
{
	c->unwind = fn;
	c->wctx = ctx;
}

int callstack_enc_note_slice(struct callstack_enc *c, const struct btr_hdr *rec,
			     size_t len)
{
	const struct btr_ustack *u = (const struct btr_ustack *)rec;

	if (!rec || rec->type != BTR_REC_USTACK || len < BTR_USTACK_SIZE(0) ||
	    u->size > BTR_SLICE_MAX || len < BTR_USTACK_SIZE(u->size))
		return -EINVAL;
	if (!c->slice) {
		c->slice = malloc(sizeof(*c->slice));
		if (!c->slice)
			return -ENOMEM;
	}
	memcpy(c->slice, u, BTR_USTACK_SIZE(u->size));
	c->have_slice = true;
	return 0;
}

/* Index of the first frame in the scheduler, 0 when there is none. */
static uint32_t first_sched_frame(const struct callstack_enc *c,
				  const struct btr_stack *r)
{
	uint32_t i;

	for (i = 0; i < r->nr; i++)
		if (r->ips[i] >= c->sched_start && r->ips[i] < c->sched_end)
			return i;
	return 0;
}

/* The user pcs of r: unwound from its slice when it has one (the
 * frame-pointer walk's where that fails at once), else the walk's; into
 * *pcs, their number. *error: the sample's unwind_error (0: none). */
static uint32_t user_pcs(struct callstack_enc *c, const struct btr_stack *r,
			 const __u64 **pcs, int32_t *error)
{
	const __u64 *fp = r->ips + r->nr;
	enum callstack_unwound how;
	bool sliced = r->flags & BTR_USTACK_SLICE;
	uint32_t n;

	*pcs = fp;
	*error = r->flags & BTR_USTACK_TRUNCATED ?
			 PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED
		 : r->flags & BTR_USTACK_FAILED ? PERF_UNWIND_ERROR_UNKNOWN
						: 0;
	if (sliced && (!c->have_slice || c->slice->pid != r->pid))
		c->st.slice_missing++;
	if (!sliced || !c->have_slice || c->slice->pid != r->pid ||
	    !c->unwind || !r->nr_user)
		return r->nr_user;
	c->have_slice = false;
	n = c->unwind(c->wctx, r->tgid, c->slice, fp, r->nr_user, c->pcs,
		      BTR_USTACK_MAX, &how);
	if (how != CALLSTACK_WHOLE && how != CALLSTACK_JOINED && n <= 1) {
		/* nothing better than the chain; where the chain went no
		 * further either, and the leaf has no CFI (code generated at
		 * run time, a JIT's, making the system call itself), the
		 * stack is cut at the leaf: said so, not written as whole */
		if (how == CALLSTACK_NO_CFI && n == 1 && r->nr_user <= 1 &&
		    !*error) {
			c->st.user_cfi_failed++;
			*error = PERF_UNWIND_ERROR_UNWIND_INFO;
		}
		return r->nr_user;
	}
	c->st.user_unwound++;
	*pcs = c->pcs;
	switch (how) {
	case CALLSTACK_JOINED:
		c->st.user_joined++;
		break; /* the chain's own cut, if any, stays */
	case CALLSTACK_WHOLE:
		*error = 0;
		break;
	case CALLSTACK_CUT:
		c->st.user_cut++;
		*error = PERF_UNWIND_ERROR_MEMORY_INVALID;
		break;
	case CALLSTACK_NO_CFI:
		c->st.user_cfi_failed++;
		*error = PERF_UNWIND_ERROR_UNWIND_INFO;
		break;
	case CALLSTACK_FULL:
		*error = PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED;
		break;
	}
	return n;
}

/* The user frames of r after the n kernel ones in c->frames; their
 * number. */
static size_t user_frames(struct callstack_enc *c, const struct btr_stack *r,
			  size_t n, int32_t *error)
{
	const __u64 *ips;
	uint32_t i, nu = user_pcs(c, r, &ips, error);

	for (i = 0; i < nu; i++) {
		struct perf_frame *f = &c->frames[n + i];

		*f = (struct perf_frame){ .address = ips[i] };
		if (!c->ufn || !c->ufn(c->uctx, r->tgid, ips[i], i == 0, f)) {
			f->map = &unknown_mapping;
			f->rel_pc = ips[i];
			f->symbol = NULL;
			c->st.user_unmapped++;
		}
		f->dso = f->map->path;
		if (!f->symbol) {
			f->symbol = "";
			c->st.user_unnamed++;
		}
	}
	c->st.user_frames += nu;
	return nu;
}

/* Keeps a copy of r (and of its slice) for callstack_enc_flush(), when
 * its user leaf is in no known mapping yet; false when it is (or the
 * copy cannot be made: it is written now). */
static bool defer(struct callstack_enc *c, uint32_t cpu,
		  const struct btr_stack *r, size_t len)
{
	struct perf_frame f = { 0 };
	struct deferred *d;
	bool sliced = r->flags & BTR_USTACK_SLICE && c->have_slice &&
		      c->slice->pid == r->pid;

	/* once one waits, the samples after it wait too: a sequence's
	 * samples stay in time order (sync and the interned state need it) */
	if (c->flushing || c->ndeferred >= CALLSTACK_DEFER_MAX ||
	    (!c->ndeferred &&
	     (!c->unwind || !r->nr_user || !c->ufn ||
	      c->ufn(c->uctx, r->tgid, r->ips[r->nr], true, &f))) ||
	    grow_array((void **)&c->deferred, &c->deferred_cap,
		       c->ndeferred + 1, sizeof(*c->deferred), 16))
		return false;
	d = &c->deferred[c->ndeferred];
	*d = (struct deferred){ .rec = malloc(len), .len = len, .cpu = cpu };
	if (sliced)
		d->slice = malloc(BTR_USTACK_SIZE(c->slice->size));
	if (!d->rec || (sliced && !d->slice)) {
		free(d->rec);
		free(d->slice);
		return false;
	}
	memcpy(d->rec, r, len);
	if (sliced)
		memcpy(d->slice, c->slice, BTR_USTACK_SIZE(c->slice->size));
	c->have_slice = false;
	c->ndeferred++;
	c->st.deferred++;
	return true;
}

/* Whether the user leaf of kept sample d is in a known mapping now. */
static bool placed(struct callstack_enc *c, const struct deferred *d)
{
	const struct btr_stack *r = (const struct btr_stack *)d->rec;
	struct perf_frame f = { 0 };

	return !r->nr_user || !c->ufn ||
	       c->ufn(c->uctx, r->tgid, r->ips[r->nr], true, &f);
}

int callstack_enc_flush(struct callstack_enc *c, bool all)
{
	size_t i, k;
	int e = 0;

	c->flushing = true;
	for (i = 0; i < c->ndeferred; i++) {
		struct deferred *d = &c->deferred[i];

		if (!all && !d->carried && !placed(c, d))
			break; /* this one and those after it: next pass */
		if (!e && d->slice &&
		    (e = callstack_enc_note_slice(c, &d->slice->h,
						  BTR_USTACK_SIZE(d->slice->size))))
			e = e == -EINVAL ? 0 : e;
		if (!e)
			e = callstack_enc_add(c, d->cpu, d->rec, d->len);
		free(d->rec);
		free(d->slice);
	}
	for (k = 0; i < c->ndeferred; i++, k++) {
		c->deferred[k] = c->deferred[i];
		c->deferred[k].carried = true;
		c->st.carried++;
	}
	c->ndeferred = k;
	c->flushing = false;
	return e;
}

int callstack_enc_add(struct callstack_enc *c, uint32_t cpu,
		      const struct btr_hdr *rec, size_t len)
{
	const struct btr_stack *r = (const struct btr_stack *)rec;
	struct perf_sample s = { .comm = "", .event = "", .cpu = (int32_t)cpu };
	uint32_t i, skip;
	int32_t uerr = 0;
	uint64_t id;
	int err;

	if (!rec || len < BTR_STACK_SIZE(0) || rec->type != BTR_REC_STACK ||
	    r->nr > BTR_STACK_MAX || r->nr_user > BTR_USTACK_MAX ||
	    len < BTR_STACK_SIZE(r->nr + r->nr_user) || r->pid < 0)
		return -EINVAL;
	if (c->ndeferred >= CALLSTACK_DEFER_MAX && !c->flushing) {
		/* a full queue goes out first, in order */
		err = callstack_enc_flush(c, true);
		if (err)
			return err;
	}
	if (defer(c, cpu, r, len))
		return 0;
	skip = first_sched_frame(c, r);
	for (i = skip; i < r->nr; i++) {
		struct perf_frame *f = &c->frames[i - skip];

		*f = (struct perf_frame){ .address = r->ips[i],
					  .dso = KERNEL_MAPPING };
		f->symbol = c->fn ? c->fn(c->ctx, r->ips[i], &id) : NULL;
		if (!f->symbol) {
			f->symbol = "";
			c->st.frames_unnamed++;
		}
	}
	s.pid = r->tgid;
	s.tid = r->pid;
	s.frames = c->frames;
	s.nframes = r->nr - skip;
	if (r->flags & BTR_STACK_FAILED || !s.nframes) {
		s.nframes = 0;
		s.has_unwind_error = true;
		s.unwind_error = PERF_UNWIND_ERROR_UNKNOWN;
	} else {
		s.nframes += user_frames(c, r, s.nframes, &uerr);
		if (r->flags & BTR_STACK_TRUNCATED) {
			s.has_unwind_error = true;
			s.unwind_error = PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED;
		} else if (uerr) {
			s.has_unwind_error = true;
			s.unwind_error = uerr;
		} else if (r->flags & BTR_USTACK_FAILED) {
			s.has_unwind_error = true;
			s.unwind_error = PERF_UNWIND_ERROR_UNKNOWN;
		}
	}
	err = perf_samples_add(c->ps, &s, rec->ts);
	if (err)
		return err;
	c->st.samples++;
	c->st.truncated += !!(r->flags & BTR_STACK_TRUNCATED);
	c->st.failed += !s.nframes;
	c->st.user_truncated += uerr == PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED;
	c->st.user_failed += !!(r->flags & BTR_USTACK_FAILED);
	c->st.user_none += !!(r->flags & BTR_USTACK_NONE);
	return 0;
}

void callstack_enc_reset(struct callstack_enc *c)
{
	perf_samples_reset(c->ps);
}

const struct callstack_enc_stats *
callstack_enc_stats(const struct callstack_enc *c)
{
	return &c->st;
}

void callstack_enc_free(struct callstack_enc *c)
{
	if (!c)
		return;
	c->flushing = true; /* what is left is dropped */
	for (size_t i = 0; i < c->ndeferred; i++) {
		free(c->deferred[i].rec);
		free(c->deferred[i].slice);
	}
	free(c->deferred);
	perf_samples_free(c->ps);
	free(c->slice);
	free(c);
}
