/* Wire-level decoding of the packets the report reads (decode.h). */
#include "report/decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/packet_info.h"
#include "util/grow.h"
#include "util/wire.h"

/* TracePacket, FtraceEventBundle, CompactSched, FtraceEvent fields. */
enum {
	P_BUNDLE = 1, P_PROCESS_TREE = 2, P_SEQ = 10, P_PREV_DROPPED = 42,
	P_SYSTEM_INFO = 45, P_MACHINE = 98, P_INTERNED = 12,
	SI_NUM_CPUS = 8, ID_KERNEL_SYMBOLS = 26, IS_IID = 1, IS_STR = 2,
	E_BLOCKED = 18,
	B_CPU = 1, B_EVENT = 2, B_LOST = 3, B_COMPACT = 4,
	C_SW_TS = 1, C_SW_STATE = 2, C_SW_PID = 3, C_INTERN = 5,
	C_SW_COMM = 6, C_WK_TS = 7, C_WK_PID = 8, C_WK_COMM = 11,
	C_WK_FLAGS = 12, E_FLAGS = 5,
	E_TS = 1, E_PID = 2, E_SWITCH = 4, E_WAKING = 20, E_NEWTASK = 235,
	E_RENAME = 236,
	PT_PROCESS = 1, PT_THREAD = 2,
};

#define CLONE_THREAD 0x00010000u

void decoder_init(struct decoder *d, struct names *names, struct merge *mg,
		  struct model *model)
{
	memset(d, 0, sizeof(*d));
	d->names = names;
	d->merge = mg;
	d->model = model;
	hmap_init(&d->ksyms, sizeof(struct ksym_key), sizeof(uint32_t),
		  hmap_random_seed());
}

void decoder_free(struct decoder *d)
{
	free(d->sw.v);
	free(d->wk.v);
	free(d->reg.v);
	free(d->intern);
	hmap_free(&d->ksyms);
	trig_seen_free(&d->triggers);
}

/* InternedData of the packet: its kernel_symbols, by iid. A later entry
 * with the same iid (after an incremental-state clear) replaces it. */
static int interned(struct decoder *d, const struct wire_field *idf)
{
	struct wire_reader r, sr;
	struct wire_field f, g;

	wire_reader_init(&r, idf->data, (size_t)idf->val);
	while (wire_next(&r, &f) > 0) {
		struct ksym_key k = { d->cur_machine, d->cur_seq, 0 };
		uint32_t name = 0, *v;
		bool has_iid = false, added;

		if (f.num != ID_KERNEL_SYMBOLS || f.type != WIRE_LEN)
			continue;
		wire_reader_init(&sr, f.data, (size_t)f.val);
		while (wire_next(&sr, &g) > 0) {
			if (g.num == IS_IID && g.type == WIRE_VARINT) {
				k.iid = g.val;
				has_iid = true;
			} else if (g.num == IS_STR && g.type == WIRE_LEN) {
				name = names_long_id(d->names, g.data,
						     (size_t)g.val);
				if (name == UINT32_MAX)
					return -ENOMEM;
			}
		}
		if (!has_iid || !name)
			continue;
		v = hmap_insert(&d->ksyms, &k, &added);
		if (!v)
			return -ENOMEM;
		*v = name;
	}
	return 0; /* malformed interned data is the stats' business */
}

/* The name id of a kernel symbol iid of the current sequence; 0 unknown. */
static uint32_t ksym_name(const struct decoder *d, uint64_t iid)
{
	struct ksym_key k = { d->cur_machine, d->cur_seq, iid };
	const uint32_t *v = hmap_find(&d->ksyms, &k);

	return v ? *v : 0;
}

static int run_reserve(struct run *r, size_t n)
{
	return grow_array((void **)&r->v, &r->cap, n, sizeof(*r->v), 1024);
}

struct arr {
	const uint8_t *p, *end;
};

static void arr_set(struct arr *a, const struct wire_field *f)
{
	if (f->type == WIRE_LEN) {
		a->p = f->data;
		a->end = f->data + f->val;
	} else {
		a->p = a->end = NULL; /* unpacked: trace_processor ignores it */
	}
}

static int intern_add(struct decoder *d, const struct wire_field *f)
{
	uint32_t id;

	if (f->type != WIRE_LEN)
		return 0;
	if (grow_array((void **)&d->intern, &d->capintern, d->nintern + 1,
		       sizeof(*d->intern), 64))
		return -ENOMEM;
	id = names_id(d->names, f->data, (size_t)f->val);
	if (id == UINT32_MAX)
		return -ENOMEM;
	d->intern[d->nintern++] = id;
	return 0;
}

/* The columns of a compact stream are read one at a time (a tight loop
 * each), each up to the events the ones before it gave: the stream ends
 * where its shortest column does, as in a lockstep walk. */

/* The next varint of a (at most three bytes without a branch on the
 * size when four can be read); false at the end or when malformed. */
static inline bool next_varint(struct arr *a, uint64_t *v)
{
	size_t k;

	if (a->end - a->p >= 4 && (k = wire_read_varint3(a->p, v))) {
		a->p += k;
		return true;
	}
	return wire_read_varint(&a->p, a->end, v);
}

/* Times (first absolute, then deltas, modulo 2^64) into e[0..), with the
 * fields no column gives; how many. *unsorted: a time is earlier than the
 * one before it; *negative: one is past INT64_MAX (the converter passes
 * the arrays on unread: report.c). */
static size_t column_ts(struct arr *a, struct rev *e, enum rev_kind kind,
			bool *unsorted, bool *negative)
{
	uint64_t t = 0, dt, over = 0;
	int64_t prev = INT64_MIN;
	bool down = false;
	size_t n = 0;

	while (next_varint(a, &dt)) {
		t += dt;
		over |= t;
		down |= (int64_t)t < prev;
		prev = (int64_t)t;
		e[n] = (struct rev){ .ts = (int64_t)t, .kind = (uint8_t)kind };
		n++;
	}
	*unsorted = down;
	*negative = over > INT64_MAX;
	return n;
}

/* Leaves out the events of r[0..n) whose time is past INT64_MAX (negative
 * here), as the converter would have, counting them; how many stay. */
static size_t drop_negative(struct decoder *d, struct rev *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i].ts >= 0)
			v[k++] = v[i];
	d->times_dropped += n - k;
	return k;
}

/* Eight varints of one byte each at p (before end): comm indexes and
 * prev_states nearly always are, and are then read eight at a time; the
 * eight bytes in *w (byte i of p in bits 8i..8i+7). */
static inline bool eight_bytes(const uint8_t *p, const uint8_t *end,
			       uint64_t *w)
{
	if (end - p < 8)
		return false;
	*w = wire_load_le(p, 8);
	return !(*w & 0x8080808080808080ull);
}

static size_t column_pid(struct arr a, struct rev *e, size_t max)
{
	uint64_t v;
	size_t n = 0;

	/* pids take the same size mostly: the branches of the general
	 * reader are predicted */
	while (n < max && wire_read_varint(&a.p, a.end, &v))
		e[n++].pid = (int32_t)v;
	return n;
}

/* The eight one-byte values of w into e[0..8) by f (state, name). */
#define EIGHT(e, f, val)                                                      \
	do {                                                                   \
		(e)[0].f = val((w) & 0xff);                                    \
		(e)[1].f = val((w) >> 8 & 0xff);                               \
		(e)[2].f = val((w) >> 16 & 0xff);                              \
		(e)[3].f = val((w) >> 24 & 0xff);                              \
		(e)[4].f = val((w) >> 32 & 0xff);                              \
		(e)[5].f = val((w) >> 40 & 0xff);                              \
		(e)[6].f = val((w) >> 48 & 0xff);                              \
		(e)[7].f = val((w) >> 56);                                     \
	} while (0)
#define AS_STATE(b) ((uint16_t)(b))
#define AS_NAME(b) (intern[b]) /* the caller's intern table */

static size_t column_state(struct arr a, struct rev *e, size_t max)
{
	uint64_t v, w;
	size_t n = 0;

	for (;;) {
		for (; n + 8 <= max && eight_bytes(a.p, a.end, &w);
		     n += 8, a.p += 8)
			EIGHT(e + n, state, AS_STATE);
		if (n >= max || !wire_read_varint(&a.p, a.end, &v))
			return n;
		e[n++].state = (uint16_t)v;
	}
}

/* Comm indexes, up to the first past the intern table. */
static size_t column_comm(const struct decoder *d, struct arr a,
			  struct rev *e, size_t max)
{
	const uint32_t *intern = d->intern;
	size_t n = 0, nintern = d->nintern;
	/* eight bytes below 128 are all below nintern when adding 128 -
	 * nintern to each sets no top bit (no carry between them) */
	uint64_t add = nintern >= 128 ? 0 :
		       0x0101010101010101ull * (128 - nintern);
	uint64_t v, w;

	for (;;) {
		for (; n + 8 <= max && eight_bytes(a.p, a.end, &w) &&
		       !((w + add) & 0x8080808080808080ull);
		     n += 8, a.p += 8)
			EIGHT(e + n, name, AS_NAME);
		if (n >= max || !wire_read_varint(&a.p, a.end, &v) ||
		    v >= nintern)
			return n;
		e[n++].name = intern[v];
	}
}

static int malformed_times(const char **why)
{
	*why = "malformed compact_sched array";
	return -1;
}

/* Decodes a compact stream: times, one int array, and comm indexes (and,
 * for switches, prev_state) of the same events, into r. It stops at the
 * first event one of its arrays cannot give (a parse error). */
static int compact_stream(struct decoder *d, struct run *r, enum rev_kind kind,
			  struct arr ts, struct arr pid, struct arr comm,
			  struct arr state, const char **why)
{
	size_t cap = (size_t)(ts.end - ts.p), n, all;
	bool negative;

	r->n = 0;
	if (!ts.p)
		return 0;
	if (run_reserve(r, cap))
		return -ENOMEM;
	all = column_ts(&ts, r->v, kind, &r->unsorted, &negative);
	if (ts.p < ts.end) /* as the converter, which reads them otherwise */
		return malformed_times(why);
	n = column_pid(pid, r->v, all);
	n = column_comm(d, comm, r->v, n);
	/* switches: prev_state, each; wakings: common_flags, where the
	 * trace has them (0 for the others: not in an interrupt) */
	if (kind == REV_SWITCH)
		n = column_state(state, r->v, n);
	else if (state.p)
		(void)column_state(state, r->v, n);
	/* times left unread: one was malformed */
	if (n < all)
		d->parse_errors++;
	if (__builtin_expect(negative, 0))
		n = drop_negative(d, r->v, n);
	r->n = n;
	return 0;
}

/* Every packed occurrence of time field num (one that is not the last
 * one the stream is read from) is well formed. */
static bool times_well_formed(const struct wire_field *cf, uint32_t num)
{
	struct wire_reader r;
	struct wire_field f;
	const uint8_t *p;
	uint64_t v;

	wire_reader_init(&r, cf->data, (size_t)cf->val);
	while (wire_next(&r, &f) > 0) {
		if (f.num != num || f.type != WIRE_LEN)
			continue;
		for (p = f.data; p < f.data + f.val;)
			if (!wire_read_varint(&p, f.data + f.val, &v))
				return false;
	}
	return true;
}

static int compact(struct decoder *d, const struct wire_field *cf,
		   struct decoded *out, const char **why)
{
	struct wire_reader r;
	struct wire_field f;
	struct arr a[13] = { { 0 } };
	unsigned times[2] = { 0, 0 }; /* occurrences of the time arrays */
	int rc, e;

	d->nintern = 0;
	wire_reader_init(&r, cf->data, (size_t)cf->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		if (f.num == C_SW_TS || f.num == C_WK_TS) {
			/* the times are the converter's to check, which passes
			 * arrays on the trace clock on unread (report.c): what
			 * it would refuse is refused here */
			if (f.type != WIRE_LEN && f.type != WIRE_VARINT)
				return malformed_times(why);
			times[f.num == C_WK_TS]++;
		}
		if (f.num == C_INTERN) {
			if ((e = intern_add(d, &f)))
				return e;
		} else if (f.num < 13) {
			arr_set(&a[f.num], &f);
		}
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	/* arrays given more than once: each is checked (the last one is
	 * read; a hostile bundle's case) */
	if ((times[0] > 1 && !times_well_formed(cf, C_SW_TS)) ||
	    (times[1] > 1 && !times_well_formed(cf, C_WK_TS)))
		return malformed_times(why);
	e = compact_stream(d, &d->sw, REV_SWITCH, a[C_SW_TS], a[C_SW_PID],
			   a[C_SW_COMM], a[C_SW_STATE], why);
	if (!e)
		e = compact_stream(d, &d->wk, REV_WAKING, a[C_WK_TS],
				   a[C_WK_PID], a[C_WK_COMM], a[C_WK_FLAGS],
				   why);
	if (!e && d->sw.n) {
		out->sb.switches = d->sw.n;
		out->sb.last_next_pid = d->sw.v[d->sw.n - 1].pid;
	}
	return e;
}

/* The string of a LEN field as a name id (0 if it is not LEN). */
static uint32_t name_of(struct decoder *d, const struct wire_field *f)
{
	return f->type == WIRE_LEN ? names_id(d->names, f->data, (size_t)f->val) : 0;
}

/* Reads the fields of a sched event's message into e. */
static int event_body(struct decoder *d, const struct wire_field *body,
		      struct rev *e, const char **why)
{
	struct wire_reader r;
	struct wire_field f;
	uint64_t flags = 0;
	int rc;

	wire_reader_init(&r, body->data, (size_t)body->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		bool v = f.type == WIRE_VARINT;

		switch (e->kind) {
		case REV_SWITCH_FULL: /* prev_pid 2, prev_state 4, next 5, 6 */
			if (f.num == 2 && v)
				e->pid2 = (int32_t)f.val;
			else if (f.num == 4 && v)
				e->state = (uint16_t)f.val;
			else if (f.num == 5)
				e->name = name_of(d, &f);
			else if (f.num == 6 && v)
				e->pid = (int32_t)f.val;
			break;
		case REV_WAKING_FULL: /* comm 1, pid 2 */
			if (f.num == 1)
				e->name = name_of(d, &f);
			else if (f.num == 2 && v)
				e->pid = (int32_t)f.val;
			break;
		case REV_NEWTASK: /* pid 1, comm 2, clone_flags 3 */
			if (f.num == 1 && v)
				e->pid = (int32_t)f.val;
			else if (f.num == 2)
				e->name = name_of(d, &f);
			else if (f.num == 3 && v)
				flags = f.val;
			break;
		case REV_BLOCKED: /* pid 1, caller 2 (kernel_symbols iid) */
			if (f.num == 1 && v)
				e->pid = (int32_t)f.val;
			else if (f.num == 2 && v)
				e->name = ksym_name(d, f.val);
			break;
		default: /* REV_RENAME: pid 1, newcomm 3 */
			if (f.num == 1 && v)
				e->pid = (int32_t)f.val;
			else if (f.num == 3)
				e->name = name_of(d, &f);
			break;
		}
		if (e->name == UINT32_MAX)
			return -ENOMEM;
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	if (flags & CLONE_THREAD)
		e->flags |= REV_CLONE_THREAD;
	return 0;
}

/* One regular FtraceEvent; appended to d->reg when it is one we use. */
static int regular(struct decoder *d, const struct wire_field *ef,
		   struct decoded *out, const char **why)
{
	struct wire_reader r;
	struct wire_field f, body = { 0 };
	struct rev e = { 0 };
	bool has_ts = false, has_body = false;
	uint64_t pid = 0, common_flags = 0;
	int rc;

	wire_reader_init(&r, ef->data, (size_t)ef->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		if (f.num == E_TS && f.type == WIRE_VARINT) {
			e.ts = (int64_t)f.val;
			has_ts = true;
		} else if (f.num == E_PID && f.type == WIRE_VARINT) {
			pid = f.val;
		} else if (f.num == E_FLAGS && f.type == WIRE_VARINT) {
			common_flags = f.val;
		} else if (f.type == WIRE_LEN &&
			   (f.num == E_SWITCH || f.num == E_WAKING ||
			    f.num == E_NEWTASK || f.num == E_RENAME ||
			    f.num == E_BLOCKED)) {
			body = f;
			has_body = true;
		}
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	if (!has_ts || !has_body)
		return 0;
	switch (body.num) {
	case E_SWITCH:
		e.kind = REV_SWITCH_FULL;
		out->full_switch = true;
		break;
	case E_WAKING:
		e.kind = REV_WAKING_FULL;
		e.state = (uint16_t)common_flags;
		break;
	case E_NEWTASK:
		e.kind = REV_NEWTASK;
		break;
	case E_BLOCKED:
		e.kind = REV_BLOCKED;
		break;
	default:
		e.kind = REV_RENAME;
		break;
	}
	if (e.kind != REV_SWITCH_FULL && e.kind != REV_BLOCKED)
		e.pid2 = (int32_t)pid; /* the waker, the creator */
	rc = event_body(d, &body, &e, why);
	if (rc)
		return rc;
	if (run_reserve(&d->reg, d->reg.n + 1))
		return -ENOMEM;
	d->reg.v[d->reg.n++] = e;
	return 0;
}

static int cmp_rev(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;

	/* equal times in any order: only a hostile bundle needs sorting */
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Sorts a run that is not in time order (a hostile or odd bundle). */
static void run_sort(struct run *r)
{
	size_t i;

	if (!r->unsorted)
		return; /* known to be in order */
	for (i = 1; i < r->n; i++)
		if (r->v[i].ts < r->v[i - 1].ts)
			break;
	if (i < r->n)
		qsort(r->v, r->n, sizeof(*r->v), cmp_rev);
}

static int bundle(struct decoder *d, const struct wire_field *bf,
		  uint32_t machine, struct decoded *out, const char **why)
{
	struct wire_reader r;
	struct wire_field f, cs = { 0 };
	const struct rev *runs[3];
	size_t n[3];
	bool has_cs = false;
	long qi;
	int rc, e;

	d->sw.n = d->wk.n = d->reg.n = 0;
	d->reg.unsorted = true; /* checked */
	wire_reader_init(&r, bf->data, (size_t)bf->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		if (f.num == B_CPU && f.type == WIRE_VARINT) {
			out->sb.has_cpu = true;
			out->sb.cpu = (uint32_t)f.val;
			if (f.val >= DECODE_MAX_CPU)
				out->sb.has_cpu = false;
		} else if (f.num == B_LOST && f.type == WIRE_VARINT) {
			out->sb.lost = f.val != 0;
		} else if (f.num == B_COMPACT && f.type == WIRE_LEN) {
			cs = f;
			has_cs = true;
		} else if (f.num == B_EVENT && f.type == WIRE_LEN) {
			if ((e = regular(d, &f, out, why)))
				return e;
		}
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	if (has_cs && (e = compact(d, &cs, out, why)))
		return e;
	if (!out->sb.has_cpu) {
		d->bundles_without_cpu++;
		return 0;
	}
	if (!d->sw.n && !d->wk.n && !d->reg.n)
		return 0;
	run_sort(&d->sw);
	run_sort(&d->wk);
	run_sort(&d->reg);
	runs[0] = d->sw.v;
	runs[1] = d->wk.v;
	runs[2] = d->reg.v;
	n[0] = d->sw.n;
	n[1] = d->wk.n;
	n[2] = d->reg.n;
	qi = merge_queue(d->merge, machine, out->sb.cpu);
	if (qi < 0 || merge_push(d->merge, (size_t)qi, runs, n, 3))
		return -ENOMEM;
	return 0;
}

/* A ProcessTree's processes and threads: which process, which name. */
static int process_tree(struct decoder *d, const struct wire_field *pf,
			uint32_t machine, const char **why)
{
	struct wire_reader r, s;
	struct wire_field f, g;
	int rc, rc2;

	wire_reader_init(&r, pf->data, (size_t)pf->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		int64_t id = 0, tgid = -1;
		uint32_t name = 0;

		if ((f.num != PT_PROCESS && f.num != PT_THREAD) ||
		    f.type != WIRE_LEN)
			continue;
		wire_reader_init(&s, f.data, (size_t)f.val);
		while ((rc2 = wire_next(&s, &g)) > 0) {
			if (g.num == 1 && g.type == WIRE_VARINT)
				id = (int32_t)g.val;
			else if (f.num == PT_THREAD && g.num == 3 &&
				 g.type == WIRE_VARINT)
				tgid = (int32_t)g.val;
			else if (f.num == PT_THREAD && g.num == 2 &&
				 (name = name_of(d, &g)) == UINT32_MAX)
				return -ENOMEM;
		}
		if (rc2 < 0) {
			*why = s.err;
			return -1;
		}
		if (f.num == PT_PROCESS)
			tgid = id;
		if (id > 0)
			model_thread_info(d->model, machine, (int32_t)id,
					  (int32_t)tgid, name);
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	return 0;
}

/* SystemInfo.num_cpus: the merge waits for each of those CPUs. */
static int declare_cpus(struct decoder *d, const struct wire_field *si,
			uint32_t machine)
{
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, si->data, (size_t)si->val);
	while (wire_next(&r, &f) > 0)
		if (f.num == SI_NUM_CPUS && f.type == WIRE_VARINT)
			return merge_declare_cpus(d->merge, machine,
						  f.val > UINT32_MAX ?
						  UINT32_MAX : (uint32_t)f.val) ?
				       -ENOMEM : 0;
	return 0; /* a malformed SystemInfo is the stats' business */
}

int decode_packet(struct decoder *d, const uint8_t *pkt, size_t len,
		  struct decoded *out, const char **why)
{
	struct wire_reader r;
	struct wire_field f, bf = { 0 }, pt = { 0 }, si = { 0 }, idf = { 0 };
	bool has_b = false, has_pt = false, has_si = false, has_id = false;
	bool trig = false;
	int rc;

	memset(out, 0, sizeof(*out));
	wire_reader_init(&r, pkt, len);
	while ((rc = wire_next(&r, &f)) > 0) {
		bool v = f.type == WIRE_VARINT, l = f.type == WIRE_LEN;

		if (f.num == P_BUNDLE && l) {
			bf = f;
			has_b = true;
		} else if (f.num == P_PROCESS_TREE && l) {
			pt = f;
			has_pt = true;
		} else if (f.num == P_SYSTEM_INFO && l) {
			si = f;
			has_si = true;
		} else if (f.num == P_INTERNED && l) {
			idf = f;
			has_id = true;
		} else if (f.num == P_SEQ && v) {
			out->sb.has_seq = true;
			out->sb.seq = (uint32_t)f.val;
		} else if (f.num == P_PREV_DROPPED && v) {
			out->sb.prev_dropped = (uint32_t)f.val;
		} else if (f.num == P_MACHINE && v) {
			out->sb.machine = (uint32_t)f.val;
		} else if (l && trig_seen_field(f.num)) {
			trig = true;
		}
	}
	if (rc < 0) {
		*why = r.err;
		return -1;
	}
	if (trig && trig_seen_packet(&d->triggers, pkt, len))
		return -ENOMEM;
	if (has_si && (rc = declare_cpus(d, &si, out->sb.machine)))
		return rc;
	if (has_si && out->sb.machine < DECODE_NAMED_MACHINES &&
	    !d->machine_name[out->sb.machine][0]) {
		char *dst = d->machine_name[out->sb.machine];
		const char *name;
		size_t n;

		if (system_info_machine_name(si.data, (size_t)si.val, &name, &n))
			snprintf(dst, sizeof(d->machine_name[0]), "%.*s",
				 (int)n, name);
	}
	if (has_pt && (rc = process_tree(d, &pt, out->sb.machine, why)))
		return rc;
	d->cur_machine = out->sb.machine;
	d->cur_seq = out->sb.seq;
	if (has_id && (rc = interned(d, &idf)))
		return rc;
	if (!has_b)
		return 0;
	out->bundle = true;
	return bundle(d, &bf, out->sb.machine, out, why);
}
