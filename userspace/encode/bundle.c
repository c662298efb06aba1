/* Per-CPU FtraceEventBundle encoder. sched_switch and sched_waking records
 * are appended to preallocated CompactSched arrays (per-bundle comm intern
 * table, delta-encoded timestamps); the rare other records are copied and
 * converted to regular FtraceEvents when the bundle is emitted. A switch
 * whose prev_pid is not the task the CPU's last switch put on it, with no
 * record lost in between (the kernel did not report a switch), is written
 * as a regular sched_switch, so that its real prev_pid is kept:
 * compact_sched has no prev fields and readers would infer the wrong task.
 * After a loss it stays compact, as traced writes it: the bundle's
 * lost_events already flags the CPU. A CPU's first switch is written as a
 * regular one too: a reader has no earlier switch to infer its prev from,
 * and trace_processor drops a first compact switch (no sched slice for
 * the task it puts on the CPU, compact_sched_switch_skipped). */
#include "encode/bundle.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "encode/packet.h"
#include "encode/span.h"
#include "perfetto/ftrace.pb-c.h"

typedef Perfetto__Protos__FtraceEvent FtraceEvent;

/* Field numbers written by hand (protos/perfetto/ftrace.proto, trace.proto):
 * the bundle is encoded straight into the sink (the central buffer's
 * chunk), its sizes counted as events arrive. */
enum {
	PKT_FTRACE_EVENTS = 1,
	PKT_TRUSTED_SEQ_ID = 10,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRUSTED_PID = 79,
	BUNDLE_CPU = 1,
	BUNDLE_EVENT = 2,
	BUNDLE_LOST_EVENTS = 3,
	BUNDLE_COMPACT_SCHED = 4,
	BUNDLE_PREV_END_TS = 10,
	CS_SWITCH_TS = 1,
	CS_SWITCH_PREV_STATE = 2,
	CS_SWITCH_NEXT_PID = 3,
	CS_SWITCH_NEXT_PRIO = 4,
	CS_INTERN_TABLE = 5,
	CS_SWITCH_NEXT_COMM = 6,
	CS_WAKING_TS = 7,
	CS_WAKING_PID = 8,
	CS_WAKING_TARGET_CPU = 9,
	CS_WAKING_PRIO = 10,
	CS_WAKING_COMM = 11,
	CS_WAKING_FLAGS = 12,
	CS_NFIELDS = 13,
	INTERNED_KERNEL_SYMBOLS = 26,
	ISTR_IID = 1,
	ISTR_STR = 2,
};

/* Slots of the comm intern table's hash index (twice its capacity). */
#define COMM_HASH (2 * BUNDLE_MAX_COMMS)
_Static_assert(BUNDLE_MAX_COMMS < 255, "comm index fits the hash slots");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "comm_key_make assumes a little-endian CPU"
#endif

/* Size estimates that drive the BUNDLE_MAX_BYTES cap: a compact event is a
 * handful of short varints; a regular one is about its record. */
#define EST_COMPACT_EVENT 12
#define EST_REGULAR_EXTRA 16
#define EST_COMM_EXTRA 2

#define EV_CASE(name) PERFETTO__PROTOS__FTRACE_EVENT__EVENT_##name

#define SET(msg, field, value)                                                 \
	do {                                                                   \
		(msg)->has_##field = 1;                                        \
		(msg)->field = (value);                                        \
	} while (0)

/* A comm as the intern table compares it: the bytes up to the first NUL
 * (at most BTR_COMM_LEN), zero-padded, so garbage after a NUL is ignored. */
union comm_key {
	uint64_t w[2];
	char c[BTR_COMM_LEN];
};
_Static_assert(sizeof(union comm_key) == BTR_COMM_LEN, "comm key size");

/* Copy of a regular record, converted in place when the bundle is emitted. */
union reg_rec {
	struct btr_hdr h;
	struct btr_switch sw;
	struct btr_wakeup wakeup;
	struct btr_newtask newtask;
	struct btr_rename rename;
	struct btr_fork fork;
	struct btr_exec exec;
	struct btr_exit exit;
	struct btr_blocked blocked;
};

union reg_msg {
	Perfetto__Protos__SchedSwitchFtraceEvent sw;
	Perfetto__Protos__SchedWakeupNewFtraceEvent wakeup_new;
	Perfetto__Protos__TaskNewtaskFtraceEvent newtask;
	Perfetto__Protos__TaskRenameFtraceEvent rename;
	Perfetto__Protos__SchedProcessForkFtraceEvent fork;
	Perfetto__Protos__SchedProcessExecFtraceEvent exec;
	Perfetto__Protos__SchedProcessExitFtraceEvent exit;
	Perfetto__Protos__SchedProcessFreeFtraceEvent free;
	Perfetto__Protos__SchedBlockedReasonFtraceEvent blocked;
};

struct reg_slot {
	union reg_rec rec;
	FtraceEvent ev;
	union reg_msg msg;
	/* NUL-terminated copies of the strings, for protobuf-c */
	char s1[BTR_FILENAME_LEN + 1];
	char s2[BTR_COMM_LEN + 1];
	uint64_t caller_iid; /* blocked reason: its kernel symbol, 0 none */
};

struct bundle_enc {
	uint32_t cpu, seq_id;
	struct packet_sink *sink;
	bool cleared_sent; /* SEQ_FLAG_INCREMENTAL_STATE_CLEARED emitted */
	bool lost_pending; /* next bundle gets lost_events */
	bool have_running; /* `running` is known */
	bool lost_since_switch; /* records or a bundle lost after it */
	int32_t running;   /* next_pid of the CPU's last switch */
	uint64_t prev_end_ts, last_ts;
	size_t est_bytes;

	/* CompactSched streams of the pending bundle */
	size_t n_sw, n_wk;
	uint64_t sw_prev_ts, wk_prev_ts;
	uint64_t sw_ts[BUNDLE_MAX_EVENTS];
	int64_t sw_state[BUNDLE_MAX_EVENTS];
	int32_t sw_pid[BUNDLE_MAX_EVENTS], sw_prio[BUNDLE_MAX_EVENTS];
	uint32_t sw_comm[BUNDLE_MAX_EVENTS];
	uint64_t wk_ts[BUNDLE_MAX_EVENTS];
	int32_t wk_pid[BUNDLE_MAX_EVENTS], wk_cpu[BUNDLE_MAX_EVENTS];
	int32_t wk_prio[BUNDLE_MAX_EVENTS];
	uint32_t wk_comm[BUNDLE_MAX_EVENTS], wk_flags[BUNDLE_MAX_EVENTS];

	/* encoded bytes of each packed CompactSched field, by field number */
	size_t cs_bytes[CS_NFIELDS];

	/* intern table of the pending bundle, with a hash index (slot:
	 * table index + 1, 0 for empty) and its encoded size */
	size_t n_comm, intern_bytes;
	union comm_key comm_key[BUNDLE_MAX_COMMS];
	uint8_t comm_len[BUNDLE_MAX_COMMS];
	uint8_t comm_slot[COMM_HASH];

	/* kernel symbols of the pending bundle's blocked reasons (names owned
	 * by the symbolizer), and the encoded size of their InternedData */
	bundle_symbolize_fn symbolize;
	void *symbolize_ctx;
	size_t n_ksym, ksym_bytes;
	uint64_t ksym_iid[BUNDLE_MAX_KSYMS];
	const char *ksym_name[BUNDLE_MAX_KSYMS];
	size_t ksym_len[BUNDLE_MAX_KSYMS];

	/* regular events of the pending bundle, and their packed sizes */
	size_t n_reg, reg_cap;
	struct reg_slot *reg;
	size_t *reg_size;

	struct bundle_enc_stats stats;
};

static char *str_copy(char *dst, const char *src, size_t max)
{
	size_t n = strnlen(src, max);

	memcpy(dst, src, n);
	dst[n] = '\0';
	return dst;
}

static void conv_switch(struct reg_slot *s)
{
	const struct btr_switch *r = &s->rec.sw;
	Perfetto__Protos__SchedSwitchFtraceEvent *m = &s->msg.sw;

	perfetto__protos__sched_switch_ftrace_event__init(m);
	m->prev_comm = str_copy(s->s1, r->prev_comm, BTR_COMM_LEN);
	SET(m, prev_pid, r->prev_pid);
	SET(m, prev_prio, r->prev_prio);
	SET(m, prev_state, r->prev_state);
	m->next_comm = str_copy(s->s2, r->next_comm, BTR_COMM_LEN);
	SET(m, next_pid, r->next_pid);
	SET(m, next_prio, r->next_prio);
	s->ev.event_case = EV_CASE(SCHED_SWITCH);
	s->ev.sched_switch = m;
}

static void conv_wakeup_new(struct reg_slot *s)
{
	const struct btr_wakeup *r = &s->rec.wakeup;
	Perfetto__Protos__SchedWakeupNewFtraceEvent *m = &s->msg.wakeup_new;

	perfetto__protos__sched_wakeup_new_ftrace_event__init(m);
	m->comm = str_copy(s->s1, r->comm, BTR_COMM_LEN);
	SET(m, pid, r->pid);
	SET(m, prio, r->prio);
	SET(m, success, 1);
	SET(m, target_cpu, r->target_cpu);
	s->ev.event_case = EV_CASE(SCHED_WAKEUP_NEW);
	s->ev.sched_wakeup_new = m;
}

static void conv_newtask(struct reg_slot *s)
{
	const struct btr_newtask *r = &s->rec.newtask;
	Perfetto__Protos__TaskNewtaskFtraceEvent *m = &s->msg.newtask;

	perfetto__protos__task_newtask_ftrace_event__init(m);
	SET(m, pid, r->pid);
	m->comm = str_copy(s->s1, r->comm, BTR_COMM_LEN);
	SET(m, clone_flags, r->clone_flags);
	SET(m, oom_score_adj, r->oom_score_adj);
	s->ev.event_case = EV_CASE(TASK_NEWTASK);
	s->ev.task_newtask = m;
}

static void conv_rename(struct reg_slot *s)
{
	const struct btr_rename *r = &s->rec.rename;
	Perfetto__Protos__TaskRenameFtraceEvent *m = &s->msg.rename;

	perfetto__protos__task_rename_ftrace_event__init(m);
	SET(m, pid, r->pid);
	m->oldcomm = str_copy(s->s1, r->oldcomm, BTR_COMM_LEN);
	m->newcomm = str_copy(s->s2, r->newcomm, BTR_COMM_LEN);
	SET(m, oom_score_adj, r->oom_score_adj);
	s->ev.event_case = EV_CASE(TASK_RENAME);
	s->ev.task_rename = m;
}

static void conv_fork(struct reg_slot *s)
{
	const struct btr_fork *r = &s->rec.fork;
	Perfetto__Protos__SchedProcessForkFtraceEvent *m = &s->msg.fork;

	perfetto__protos__sched_process_fork_ftrace_event__init(m);
	m->parent_comm = str_copy(s->s1, r->parent_comm, BTR_COMM_LEN);
	SET(m, parent_pid, r->parent_pid);
	m->child_comm = str_copy(s->s2, r->child_comm, BTR_COMM_LEN);
	SET(m, child_pid, r->child_pid);
	s->ev.event_case = EV_CASE(SCHED_PROCESS_FORK);
	s->ev.sched_process_fork = m;
}

static void conv_exec(struct reg_slot *s)
{
	const struct btr_exec *r = &s->rec.exec;
	Perfetto__Protos__SchedProcessExecFtraceEvent *m = &s->msg.exec;

	perfetto__protos__sched_process_exec_ftrace_event__init(m);
	m->filename = str_copy(s->s1, r->filename, BTR_FILENAME_LEN);
	SET(m, pid, r->pid);
	SET(m, old_pid, r->old_pid);
	s->ev.event_case = EV_CASE(SCHED_PROCESS_EXEC);
	s->ev.sched_process_exec = m;
}

static void conv_exit(struct reg_slot *s)
{
	const struct btr_exit *r = &s->rec.exit;
	Perfetto__Protos__SchedProcessExitFtraceEvent *m = &s->msg.exit;

	perfetto__protos__sched_process_exit_ftrace_event__init(m);
	m->comm = str_copy(s->s1, r->comm, BTR_COMM_LEN);
	SET(m, pid, r->pid);
	SET(m, tgid, r->tgid);
	SET(m, prio, r->prio);
	s->ev.event_case = EV_CASE(SCHED_PROCESS_EXIT);
	s->ev.sched_process_exit = m;
}

static void conv_free(struct reg_slot *s)
{
	const struct btr_exit *r = &s->rec.exit;
	Perfetto__Protos__SchedProcessFreeFtraceEvent *m = &s->msg.free;

	perfetto__protos__sched_process_free_ftrace_event__init(m);
	m->comm = str_copy(s->s1, r->comm, BTR_COMM_LEN);
	SET(m, pid, r->pid);
	SET(m, prio, r->prio);
	s->ev.event_case = EV_CASE(SCHED_PROCESS_FREE);
	s->ev.sched_process_free = m;
}

static void conv_blocked(struct reg_slot *s)
{
	const struct btr_blocked *r = &s->rec.blocked;
	Perfetto__Protos__SchedBlockedReasonFtraceEvent *m = &s->msg.blocked;

	perfetto__protos__sched_blocked_reason_ftrace_event__init(m);
	SET(m, pid, r->pid);
	if (s->caller_iid)
		SET(m, caller, s->caller_iid);
	SET(m, io_wait, r->io_wait);
	s->ev.event_case = EV_CASE(SCHED_BLOCKED_REASON);
	s->ev.sched_blocked_reason = m;
}

/* What this encoder takes, by record type: the minimum length and, for
 * regular events, the converter. size 0 means "not for this encoder". */
static const struct rec_kind {
	size_t size;
	void (*conv)(struct reg_slot *s);
} kinds[BTR_REC_TYPE_MAX] = {
	[BTR_REC_SWITCH] = { sizeof(struct btr_switch), conv_switch },
	[BTR_REC_WAKING] = { sizeof(struct btr_wakeup), NULL },
	[BTR_REC_WAKEUP_NEW] = { sizeof(struct btr_wakeup), conv_wakeup_new },
	[BTR_REC_NEWTASK] = { sizeof(struct btr_newtask), conv_newtask },
	[BTR_REC_RENAME] = { sizeof(struct btr_rename), conv_rename },
	[BTR_REC_FORK] = { sizeof(struct btr_fork), conv_fork },
	[BTR_REC_EXEC] = { sizeof(struct btr_exec), conv_exec },
	[BTR_REC_EXIT] = { sizeof(struct btr_exit), conv_exit },
	[BTR_REC_FREE] = { sizeof(struct btr_exit), conv_free },
	[BTR_REC_BLOCKED] = { sizeof(struct btr_blocked), conv_blocked },
	/* a switch, then a BTR_REC_BLOCKED (add_switch_blocked) */
	[BTR_REC_SWITCH_BLOCKED] = { sizeof(struct btr_switch_blocked), NULL },
};

struct bundle_enc *bundle_enc_new(uint32_t cpu, uint32_t seq_id,
				  struct packet_sink *sink)
{
	struct bundle_enc *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->cpu = cpu;
	b->seq_id = seq_id;
	b->sink = sink;
	return b;
}

void bundle_enc_compact_start(struct bundle_enc *b)
{
	b->have_running = true;
	b->lost_since_switch = true;
}

void bundle_enc_set_symbolizer(struct bundle_enc *b, bundle_symbolize_fn fn,
			       void *ctx)
{
	b->symbolize = fn;
	b->symbolize_ctx = ctx;
}

void bundle_enc_free(struct bundle_enc *b)
{
	if (!b)
		return;
	free(b->reg);
	free(b->reg_size);
	free(b);
}

const struct bundle_enc_stats *bundle_enc_stats(const struct bundle_enc *b)
{
	return &b->stats;
}

static size_t pending_events(const struct bundle_enc *b)
{
	return b->n_sw + b->n_wk + b->n_reg;
}

/* Converts the copied regular records (the slots no longer move) and
 * sizes them; returns the bytes their `event` fields take. */
static size_t size_regular(struct bundle_enc *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->n_reg; i++) {
		struct reg_slot *s = &b->reg[i];

		perfetto__protos__ftrace_event__init(&s->ev);
		SET(&s->ev, timestamp, s->rec.h.ts);
		SET(&s->ev, pid, (uint32_t)s->rec.h.pid);
		kinds[s->rec.h.type].conv(s);
		b->reg_size[i] = perfetto__protos__ftrace_event__get_packed_size(
			&s->ev);
		n += span_len_field_size(BUNDLE_EVENT, b->reg_size[i]);
	}
	return n;
}

static size_t size_compact(const struct bundle_enc *b)
{
	size_t n = b->intern_bytes;
	uint32_t f;

	for (f = 1; f < CS_NFIELDS; f++)
		if (b->cs_bytes[f])
			n += span_len_field_size(f, b->cs_bytes[f]);
	return n;
}

/* One packed repeated varint field per element type; signed values are
 * sign-extended to 64 bits, as protobuf encodes int32 and int64. */
#define PUT_PACKED(name, type, conv)                                           \
	static void name(struct span_writer *w, const struct bundle_enc *b,    \
			 uint32_t num, const type *v, size_t n)                \
	{                                                                      \
		size_t i;                                                      \
                                                                               \
		if (!n)                                                        \
			return;                                                \
		span_tag(w, num, WIRE_LEN);                                    \
		span_varint(w, b->cs_bytes[num]);                              \
		for (i = 0; i < n; i++)                                        \
			span_varint(w, (conv)v[i]);                            \
	}
PUT_PACKED(put_u64s, uint64_t, uint64_t)
PUT_PACKED(put_i64s, int64_t, uint64_t)
PUT_PACKED(put_i32s, int32_t, int64_t)
PUT_PACKED(put_u32s, uint32_t, uint64_t)

static void put_compact(struct span_writer *w, const struct bundle_enc *b,
			size_t len)
{
	size_t i;

	span_tag(w, BUNDLE_COMPACT_SCHED, WIRE_LEN);
	span_varint(w, len);
	put_u64s(w, b, CS_SWITCH_TS, b->sw_ts, b->n_sw);
	put_i64s(w, b, CS_SWITCH_PREV_STATE, b->sw_state, b->n_sw);
	put_i32s(w, b, CS_SWITCH_NEXT_PID, b->sw_pid, b->n_sw);
	put_i32s(w, b, CS_SWITCH_NEXT_PRIO, b->sw_prio, b->n_sw);
	for (i = 0; i < b->n_comm; i++) {
		span_tag(w, CS_INTERN_TABLE, WIRE_LEN);
		span_varint(w, b->comm_len[i]);
		span_put(w, b->comm_key[i].c, b->comm_len[i]);
	}
	put_u32s(w, b, CS_SWITCH_NEXT_COMM, b->sw_comm, b->n_sw);
	put_u64s(w, b, CS_WAKING_TS, b->wk_ts, b->n_wk);
	put_i32s(w, b, CS_WAKING_PID, b->wk_pid, b->n_wk);
	put_i32s(w, b, CS_WAKING_TARGET_CPU, b->wk_cpu, b->n_wk);
	put_i32s(w, b, CS_WAKING_PRIO, b->wk_prio, b->n_wk);
	put_u32s(w, b, CS_WAKING_COMM, b->wk_comm, b->n_wk);
	put_u32s(w, b, CS_WAKING_FLAGS, b->wk_flags, b->n_wk);
}

static size_t ksym_size(const struct bundle_enc *b, size_t i)
{
	return span_varint_field_size(ISTR_IID, b->ksym_iid[i]) +
	       span_len_field_size(ISTR_STR, b->ksym_len[i]);
}

/* The packet's InternedData: the kernel symbols the bundle's blocked
 * reasons name (kernel_symbols, InternedString iid and str). */
static void put_interned(struct span_writer *w, const struct bundle_enc *b)
{
	size_t i;

	span_tag(w, PKT_INTERNED_DATA, WIRE_LEN);
	span_varint(w, b->ksym_bytes);
	for (i = 0; i < b->n_ksym; i++) {
		span_tag(w, INTERNED_KERNEL_SYMBOLS, WIRE_LEN);
		span_varint(w, ksym_size(b, i));
		span_tag(w, ISTR_IID, WIRE_VARINT);
		span_varint(w, b->ksym_iid[i]);
		span_tag(w, ISTR_STR, WIRE_LEN);
		span_varint(w, b->ksym_len[i]);
		span_put(w, b->ksym_name[i], b->ksym_len[i]);
	}
}

/* Starts an empty bundle after an emit that returned `err`. */
static void reset_pending(struct bundle_enc *b, int err)
{
	b->prev_end_ts = b->last_ts;
	b->n_sw = b->n_wk = b->n_reg = b->n_comm = b->n_ksym = 0;
	b->ksym_bytes = 0;
	b->sw_prev_ts = b->wk_prev_ts = 0;
	b->est_bytes = 0;
	b->intern_bytes = 0;
	memset(b->cs_bytes, 0, sizeof(b->cs_bytes));
	memset(b->comm_slot, 0, sizeof(b->comm_slot));
	b->lost_pending = err != 0;
	if (err)
		b->lost_since_switch = true; /* its switches reach no reader */
	if (!err) {
		b->cleared_sent = true;
		b->stats.bundles++;
	}
}

/* Writes the pending bundle as one TracePacket, straight into the sink. */
static int emit(struct bundle_enc *b)
{
	struct span_writer w;
	uint64_t pid = (uint64_t)(int64_t)packet_writer_pid();
	/* A bundle with kernel symbols holds every name it uses: it starts a
	 * new incremental state, so a reader that lost earlier packets of
	 * the sequence (and marked its state invalid) still takes them. */
	uint32_t flags = b->cleared_sent && !b->n_ksym
				 ? 0
				 : SEQ_FLAG_INCREMENTAL_STATE_CLEARED;
	size_t cs = b->n_sw || b->n_wk ? size_compact(b) : 0;
	size_t bundle = span_varint_field_size(BUNDLE_CPU, b->cpu) +
			size_regular(b) + (b->lost_pending ? 2 : 0) +
			(cs ? span_len_field_size(BUNDLE_COMPACT_SCHED, cs) : 0) +
			span_varint_field_size(BUNDLE_PREV_END_TS, b->prev_end_ts);
	size_t len = span_len_field_size(PKT_FTRACE_EVENTS, bundle) +
		     span_varint_field_size(PKT_TRUSTED_SEQ_ID, b->seq_id) +
		     (b->n_ksym ? span_len_field_size(PKT_INTERNED_DATA,
						      b->ksym_bytes) : 0) +
		     (flags ? span_varint_field_size(PKT_SEQUENCE_FLAGS, flags) : 0) +
		     span_varint_field_size(PKT_TRUSTED_PID, pid);
	size_t i;
	int err = span_begin(&w, b->sink, b->seq_id, len);

	if (!err) {
		span_tag(&w, PKT_FTRACE_EVENTS, WIRE_LEN);
		span_varint(&w, bundle);
		span_tag(&w, BUNDLE_CPU, WIRE_VARINT);
		span_varint(&w, b->cpu);
		for (i = 0; i < b->n_reg; i++) {
			span_tag(&w, BUNDLE_EVENT, WIRE_LEN);
			span_varint(&w, b->reg_size[i]);
			span_message(&w, &b->reg[i].ev.base, b->reg_size[i]);
		}
		if (b->lost_pending) {
			span_tag(&w, BUNDLE_LOST_EVENTS, WIRE_VARINT);
			span_varint(&w, 1);
		}
		if (cs)
			put_compact(&w, b, cs);
		span_tag(&w, BUNDLE_PREV_END_TS, WIRE_VARINT);
		span_varint(&w, b->prev_end_ts);
		span_tag(&w, PKT_TRUSTED_SEQ_ID, WIRE_VARINT);
		span_varint(&w, b->seq_id);
		if (b->n_ksym)
			put_interned(&w, b);
		if (flags) {
			span_tag(&w, PKT_SEQUENCE_FLAGS, WIRE_VARINT);
			span_varint(&w, flags);
		}
		span_tag(&w, PKT_TRUSTED_PID, WIRE_VARINT);
		span_varint(&w, pid);
		err = span_end(&w);
	}
	reset_pending(b, err);
	return err;
}

int bundle_enc_flush(struct bundle_enc *b)
{
	return pending_events(b) ? emit(b) : 0;
}

int bundle_enc_note_lost(struct bundle_enc *b, uint32_t lost)
{
	int err;

	if (!lost)
		return 0;
	b->stats.lost += lost;
	b->lost_since_switch = true;
	err = bundle_enc_flush(b);
	b->lost_pending = true;
	return err;
}

/* Bits 7, 15, ... set at (at least) the lowest zero byte of x. */
static inline uint64_t zero_bytes(uint64_t x)
{
	return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* x with the bytes from its lowest zero byte on cleared; 0 if none. */
static inline uint64_t below_zero(uint64_t x, uint64_t z)
{
	return x & (((z & -z) >> 7) - 1);
}

static void comm_key_make(union comm_key *k, const char *comm)
{
	uint64_t w0, w1, z;

	memcpy(&w0, comm, 8);
	memcpy(&w1, comm + 8, 8);
	z = zero_bytes(w0);
	if (z) {
		w0 = below_zero(w0, z);
		w1 = 0;
	} else if ((z = zero_bytes(w1))) {
		w1 = below_zero(w1, z);
	}
	k->w[0] = w0;
	k->w[1] = w1;
}

static unsigned comm_hash(const union comm_key *k)
{
	uint64_t h = (k->w[0] ^ (k->w[1] * 0x9E3779B97F4A7C15ull)) *
		     0xC2B2AE3D27D4EB4Full;

	return (unsigned)(h >> 32) & (COMM_HASH - 1);
}

/* Index of `comm` in the intern table, adding it (after emitting the
 * pending bundle if the table is full). */
static int comm_index(struct bundle_enc *b, const char *comm, uint32_t *idx)
{
	union comm_key k;
	unsigned h;
	size_t i, n;
	int err;

	comm_key_make(&k, comm);
	for (h = comm_hash(&k); b->comm_slot[h]; h = (h + 1) & (COMM_HASH - 1)) {
		i = b->comm_slot[h] - 1u;
		if (b->comm_key[i].w[0] == k.w[0] &&
		    b->comm_key[i].w[1] == k.w[1]) {
			*idx = (uint32_t)i;
			return 0;
		}
	}
	if (b->n_comm == BUNDLE_MAX_COMMS) {
		err = emit(b); /* clears the table and its index */
		if (err)
			return err;
		for (h = comm_hash(&k); b->comm_slot[h];)
			h = (h + 1) & (COMM_HASH - 1);
	}
	i = b->n_comm++;
	b->comm_key[i] = k;
	b->comm_slot[h] = (uint8_t)(i + 1);
	n = strnlen(k.c, BTR_COMM_LEN);
	b->comm_len[i] = (uint8_t)n;
	b->intern_bytes += span_len_field_size(CS_INTERN_TABLE, n);
	b->est_bytes += n + EST_COMM_EXTRA;
	*idx = (uint32_t)i;
	return 0;
}

static int add_regular(struct bundle_enc *b, const struct btr_hdr *rec,
		       size_t size);

/* A switch was stored: `pid` runs on the CPU now. */
static int ran(struct bundle_enc *b, int32_t pid)
{
	b->have_running = true;
	b->lost_since_switch = false;
	b->running = pid;
	return 0;
}

static int add_switch(struct bundle_enc *b, const struct btr_switch *r)
{
	uint32_t comm;
	size_t i;
	bool unmatched = b->have_running && !b->lost_since_switch &&
			 r->prev_pid != b->running;
	int err;

	if (unmatched || !b->have_running) {
		err = add_regular(b, &r->h, sizeof(*r));
		if (err)
			return err;
		b->stats.switch_unmatched += unmatched;
		return ran(b, r->next_pid);
	}
	err = comm_index(b, r->next_comm, &comm);
	if (err)
		return err;
	i = b->n_sw++;
	b->sw_ts[i] = r->h.ts - b->sw_prev_ts;
	b->sw_prev_ts = r->h.ts;
	b->sw_state[i] = r->prev_state;
	b->sw_pid[i] = r->next_pid;
	b->sw_prio[i] = r->next_prio;
	b->sw_comm[i] = comm;
	b->cs_bytes[CS_SWITCH_TS] += wire_varint_size(b->sw_ts[i]);
	b->cs_bytes[CS_SWITCH_PREV_STATE] += wire_varint_size((uint64_t)b->sw_state[i]);
	b->cs_bytes[CS_SWITCH_NEXT_PID] += wire_varint_size((uint64_t)(int64_t)b->sw_pid[i]);
	b->cs_bytes[CS_SWITCH_NEXT_PRIO] += wire_varint_size((uint64_t)(int64_t)b->sw_prio[i]);
	b->cs_bytes[CS_SWITCH_NEXT_COMM] += wire_varint_size(comm);
	b->est_bytes += EST_COMPACT_EVENT;
	return ran(b, r->next_pid);
}

static int add_waking(struct bundle_enc *b, const struct btr_wakeup *r)
{
	uint32_t comm;
	size_t i;
	int err = comm_index(b, r->comm, &comm);

	if (err)
		return err;
	i = b->n_wk++;
	b->wk_ts[i] = r->h.ts - b->wk_prev_ts;
	b->wk_prev_ts = r->h.ts;
	b->wk_pid[i] = r->pid;
	b->wk_cpu[i] = r->target_cpu;
	b->wk_prio[i] = r->prio;
	b->wk_comm[i] = comm;
	b->wk_flags[i] = r->h.common_flags;
	b->cs_bytes[CS_WAKING_TS] += wire_varint_size(b->wk_ts[i]);
	b->cs_bytes[CS_WAKING_PID] += wire_varint_size((uint64_t)(int64_t)b->wk_pid[i]);
	b->cs_bytes[CS_WAKING_TARGET_CPU] += wire_varint_size((uint64_t)(int64_t)b->wk_cpu[i]);
	b->cs_bytes[CS_WAKING_PRIO] += wire_varint_size((uint64_t)(int64_t)b->wk_prio[i]);
	b->cs_bytes[CS_WAKING_COMM] += wire_varint_size(comm);
	b->cs_bytes[CS_WAKING_FLAGS] += wire_varint_size(b->wk_flags[i]);
	b->est_bytes += EST_COMPACT_EVENT;
	return 0;
}

static int grow_regular(struct bundle_enc *b)
{
	size_t cap = b->reg_cap ? b->reg_cap * 2 : 16;
	struct reg_slot *reg;
	size_t *size;

	reg = realloc(b->reg, cap * sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	b->reg = reg;
	size = realloc(b->reg_size, cap * sizeof(*size));
	if (!size)
		return -ENOMEM;
	b->reg_size = size;
	b->reg_cap = cap;
	return 0;
}

static int add_regular(struct bundle_enc *b, const struct btr_hdr *rec,
		       size_t size)
{
	int err;

	if (b->n_reg == b->reg_cap) {
		err = grow_regular(b);
		if (err)
			return err;
	}
	memcpy(&b->reg[b->n_reg++].rec, rec, size);
	b->est_bytes += size + EST_REGULAR_EXTRA;
	return 0;
}

/* The iid of the function a blocked reason names, interned in the pending
 * bundle (emitted first when its table is full); 0 when it has none. */
static int blocked_caller(struct bundle_enc *b, uint64_t addr, uint64_t *iid)
{
	const char *name = NULL;
	uint64_t id = 0;
	size_t i;
	int err;

	*iid = 0;
	if (addr && b->symbolize)
		name = b->symbolize(b->symbolize_ctx, addr, &id);
	if (!name || !id) {
		b->stats.blocked_unnamed++;
		return 0;
	}
	for (i = 0; i < b->n_ksym; i++)
		if (b->ksym_iid[i] == id) {
			*iid = id;
			return 0;
		}
	if (b->n_ksym == BUNDLE_MAX_KSYMS) {
		err = emit(b);
		if (err)
			return err;
	}
	i = b->n_ksym++;
	b->ksym_iid[i] = id;
	b->ksym_name[i] = name;
	b->ksym_len[i] = strlen(name);
	b->ksym_bytes += span_len_field_size(INTERNED_KERNEL_SYMBOLS,
					     ksym_size(b, i));
	b->est_bytes += b->ksym_len[i] + EST_COMM_EXTRA * 2;
	*iid = id;
	return 0;
}

static int add_blocked(struct bundle_enc *b, const struct btr_blocked *r)
{
	uint64_t iid;
	int err = blocked_caller(b, r->caller, &iid);

	if (!err)
		err = add_regular(b, &r->h, sizeof(*r));
	if (!err)
		b->reg[b->n_reg - 1].caller_iid = iid;
	return err;
}

/* A switch and its blocked reason in one record: the switch, then the
 * reason of prev_pid 1 ns after it (after it in any reader's order). */
static int add_switch_blocked(struct bundle_enc *b,
			      const struct btr_switch_blocked *r)
{
	struct btr_switch sw = r->sw;
	struct btr_blocked bl = {
		.h = r->sw.h,
		.caller = r->caller,
		.pid = r->sw.prev_pid,
		.io_wait = r->io_wait,
	};
	int err;

	sw.h.type = BTR_REC_SWITCH; /* as a regular event too */
	err = add_switch(b, &sw);
	if (err)
		return err;
	bl.h.type = BTR_REC_BLOCKED;
	bl.h.lost = 0;
	bl.h.ts = r->sw.h.ts + 1;
	return add_blocked(b, &bl);
}

static bool rec_valid(const struct btr_hdr *rec, size_t len)
{
	return rec && len >= sizeof(*rec) && rec->type < BTR_REC_TYPE_MAX &&
	       kinds[rec->type].size && len >= kinds[rec->type].size;
}

static int add_event(struct bundle_enc *b, const struct btr_hdr *rec)
{
	switch (rec->type) {
	case BTR_REC_SWITCH:
		return add_switch(b, (const struct btr_switch *)rec);
	case BTR_REC_WAKING:
		return add_waking(b, (const struct btr_wakeup *)rec);
	case BTR_REC_BLOCKED:
		return add_blocked(b, (const struct btr_blocked *)rec);
	case BTR_REC_SWITCH_BLOCKED:
		return add_switch_blocked(b,
					  (const struct btr_switch_blocked *)rec);
	default:
		return add_regular(b, rec, kinds[rec->type].size);
	}
}

/* An event of type `type` at ts was added: counted, and the bundle
 * emitted once full. */
static inline __attribute__((always_inline)) int
added(struct bundle_enc *b, uint16_t type, uint64_t ts)
{
	b->stats.events[type]++;
	b->last_ts = b->stats.last_ts = ts;
	if (pending_events(b) >= BUNDLE_MAX_EVENTS ||
	    b->est_bytes >= BUNDLE_MAX_BYTES)
		return emit(b);
	return 0;
}

int bundle_enc_add(struct bundle_enc *b, const struct btr_hdr *rec,
		   size_t len)
{
	int err;

	if (!rec_valid(rec, len)) {
		b->stats.rejected++;
		return -EINVAL;
	}
	err = bundle_enc_note_lost(b, rec->lost);
	if (err)
		return err;
	err = add_event(b, rec);
	if (err)
		return err;
	if (rec->type == BTR_REC_SWITCH_BLOCKED) { /* two events: the
						      * last is the reason's */
		b->stats.events[BTR_REC_SWITCH]++;
		return added(b, BTR_REC_BLOCKED, rec->ts + 1);
	}
	return added(b, rec->type, rec->ts);
}

int bundle_enc_add_switch(struct bundle_enc *b, const struct btr_switch *r)
{
	int err = bundle_enc_note_lost(b, r->h.lost);

	if (!err)
		err = add_switch(b, r);
	return err ? err : added(b, BTR_REC_SWITCH, r->h.ts);
}

int bundle_enc_add_waking(struct bundle_enc *b, const struct btr_wakeup *r)
{
	int err = bundle_enc_note_lost(b, r->h.lost);

	if (!err)
		err = add_waking(b, r);
	return err ? err : added(b, BTR_REC_WAKING, r->h.ts);
}
