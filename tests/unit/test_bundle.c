/* Unit tests of the per-CPU FtraceEventBundle encoder (encode/bundle.c):
 * records go in, packets are collected by a test sink, decoded with
 * protobuf-c and compared with what went in. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "buffer/central.h"
#include "encode/bundle.h"
#include "encode/packet.h"
#include "perfetto/trace.pb-c.h"
#include "coll_sink.h"
#include "unit.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__FtraceEventBundle Bundle;
typedef Perfetto__Protos__FtraceEventBundle__CompactSched CompactSched;
typedef Perfetto__Protos__FtraceEvent FtraceEvent;

#define CPU 3
#define SEQ 7


/* ---- records ---- */

static void put_comm(char *dst, const char *src)
{
	size_t n = strnlen(src, BTR_COMM_LEN);

	memset(dst, 0, BTR_COMM_LEN);
	memcpy(dst, src, n);
}

static void hdr(struct btr_hdr *h, enum btr_rec_type type, uint64_t ts,
		int32_t pid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->ts = ts;
	h->pid = pid;
}

/* next_pid of the last switch made, the prev_pid of the next one: the
 * switches a test makes form one consistent stream. */
static int32_t chain_pid;

static struct btr_switch mk_switch(uint64_t ts, int32_t next_pid,
				   const char *comm, int64_t state)
{
	struct btr_switch r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, BTR_REC_SWITCH, ts, 1);
	r.prev_state = state;
	r.prev_pid = chain_pid;
	r.prev_prio = 120;
	chain_pid = next_pid;
	r.next_pid = next_pid;
	r.next_prio = 100 + next_pid % 40;
	put_comm(r.prev_comm, "prev");
	put_comm(r.next_comm, comm);
	return r;
}

static struct btr_wakeup mk_waking(uint64_t ts, int32_t pid, const char *comm,
				   uint16_t flags)
{
	struct btr_wakeup r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, BTR_REC_WAKING, ts, 2);
	r.h.common_flags = flags;
	r.pid = pid;
	r.prio = 120 - pid % 20;
	r.target_cpu = pid % 8;
	put_comm(r.comm, comm);
	return r;
}

#define ADD(b, rec) bundle_enc_add((b), &(rec).h, sizeof(rec))

/* An encoder into c whose first switch is compact (as after a loss): the
 * tests of the compact encoding; test_first_switch_regular tests the
 * first switch of a new one. */
static struct bundle_enc *enc_new(struct coll *c)
{
	struct bundle_enc *b = bundle_enc_new(CPU, SEQ, &c->sink);

	if (b)
		bundle_enc_compact_start(b);
	return b;
}

/* ---- decoding: compact events back to absolute values ---- */

struct dec_ev {
	uint64_t ts;
	int64_t state;
	int32_t pid, prio, target_cpu;
	uint32_t flags;
	char comm[BTR_COMM_LEN + 1];
	size_t bundle;
};

struct decoded {
	struct dec_ev *sw, *wk;
	size_t n_sw, n_wk, n_bundles;
	uint64_t *prev_end; /* per bundle */
	bool *lost;         /* per bundle */
	size_t max_table;
};

/* TP's way: a signed 64-bit accumulator (wrapping, as two's complement). */
static uint64_t undelta(int64_t *acc, uint64_t delta)
{
	*acc = (int64_t)((uint64_t)*acc + delta);
	return (uint64_t)*acc;
}

static void dec_comm(struct dec_ev *e, const CompactSched *cs, uint32_t idx)
{
	CHECK(idx < cs->n_intern_table);
	if (idx < cs->n_intern_table)
		snprintf(e->comm, sizeof(e->comm), "%s", cs->intern_table[idx]);
}

static void dec_switches(struct decoded *d, const CompactSched *cs)
{
	int64_t acc = 0;
	size_t i, n = cs->n_switch_timestamp;

	CHECK(cs->n_switch_prev_state == n && cs->n_switch_next_pid == n &&
	      cs->n_switch_next_prio == n && cs->n_switch_next_comm_index == n);
	for (i = 0; i < n; i++) {
		struct dec_ev *e = &d->sw[d->n_sw++];

		e->ts = undelta(&acc, cs->switch_timestamp[i]);
		e->state = cs->switch_prev_state[i];
		e->pid = cs->switch_next_pid[i];
		e->prio = cs->switch_next_prio[i];
		e->bundle = d->n_bundles;
		dec_comm(e, cs, cs->switch_next_comm_index[i]);
	}
}

static void dec_wakings(struct decoded *d, const CompactSched *cs)
{
	int64_t acc = 0;
	size_t i, n = cs->n_waking_timestamp;

	CHECK(cs->n_waking_pid == n && cs->n_waking_target_cpu == n &&
	      cs->n_waking_prio == n && cs->n_waking_comm_index == n &&
	      cs->n_waking_common_flags == n);
	for (i = 0; i < n; i++) {
		struct dec_ev *e = &d->wk[d->n_wk++];

		e->ts = undelta(&acc, cs->waking_timestamp[i]);
		e->pid = cs->waking_pid[i];
		e->target_cpu = cs->waking_target_cpu[i];
		e->prio = cs->waking_prio[i];
		e->flags = cs->waking_common_flags[i];
		e->bundle = d->n_bundles;
		dec_comm(e, cs, cs->waking_comm_index[i]);
	}
}

/* Decodes every collected packet; `max` bounds the compact events. */
static void decode(struct decoded *d, const struct coll *c, size_t max)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->sw = calloc(max, sizeof(*d->sw));
	d->wk = calloc(max, sizeof(*d->wk));
	d->prev_end = calloc(c->n + 1, sizeof(*d->prev_end));
	d->lost = calloc(c->n + 1, sizeof(*d->lost));
	for (i = 0; i < c->n; i++) {
		Packet *p = coll_unpack(c, i);
		const Bundle *b = p ? p->ftrace_events : NULL;

		CHECK(b != NULL);
		if (!b) {
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
			continue;
		}
		CHECK(c->p[i].seq == SEQ && b->has_cpu && b->cpu == CPU);
		CHECK(b->has_previous_bundle_end_timestamp);
		d->prev_end[d->n_bundles] = b->previous_bundle_end_timestamp;
		d->lost[d->n_bundles] = b->has_lost_events && b->lost_events;
		if (b->compact_sched) {
			CHECK(b->compact_sched->n_intern_table <=
			      BUNDLE_MAX_COMMS);
			if (b->compact_sched->n_intern_table > d->max_table)
				d->max_table = b->compact_sched->n_intern_table;
			dec_switches(d, b->compact_sched);
			dec_wakings(d, b->compact_sched);
		}
		d->n_bundles++;
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
}

static void decoded_free(struct decoded *d)
{
	free(d->sw);
	free(d->wk);
	free(d->prev_end);
	free(d->lost);
}

static void check_switch(const struct dec_ev *e, const struct btr_switch *r)
{
	CHECK_EQ_I64(e->ts, r->h.ts);
	CHECK_EQ_I64(e->state, r->prev_state);
	CHECK_EQ_I64(e->pid, r->next_pid);
	CHECK_EQ_I64(e->prio, r->next_prio);
	CHECK(strncmp(e->comm, r->next_comm, BTR_COMM_LEN) == 0);
}

static void check_waking(const struct dec_ev *e, const struct btr_wakeup *r)
{
	CHECK_EQ_I64(e->ts, r->h.ts);
	CHECK_EQ_I64(e->pid, r->pid);
	CHECK_EQ_I64(e->prio, r->prio);
	CHECK_EQ_I64(e->target_cpu, r->target_cpu);
	CHECK_EQ_I64(e->flags, r->h.common_flags);
	CHECK(strncmp(e->comm, r->comm, BTR_COMM_LEN) == 0);
}

/* ---- raw wire walking, to check packed fields appear exactly once ---- */

static bool wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t byte = *(*p)++;

		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/* Counts field `id` in a message; `*sub` = payload of its last LEN
 * occurrence. Returns -1 on a malformed message or a non-LEN occurrence. */
static int wire_count(const uint8_t *buf, size_t len, uint32_t id,
		      const uint8_t **sub, size_t *sublen)
{
	const uint8_t *p = buf, *end = buf + len;
	int count = 0;
	uint64_t key, v;

	while (p < end) {
		if (!wire_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case 0:
			if (!wire_varint(&p, end, &v))
				return -1;
			break;
		case 1:
		case 5:
			v = (key & 7) == 1 ? 8 : 4;
			if (v > (uint64_t)(end - p))
				return -1;
			p += v;
			break;
		case 2:
			if (!wire_varint(&p, end, &v) ||
			    v > (uint64_t)(end - p))
				return -1;
			if ((key >> 3) == id) {
				*sub = p;
				*sublen = v;
			}
			p += v;
			break;
		default:
			return -1;
		}
		if ((key >> 3) == id && (key & 7) != 2)
			return -1;
		count += (key >> 3) == id;
	}
	return p == end ? count : -1;
}

/* ---- tests ---- */

static void test_roundtrip_compact(void)
{
	struct btr_switch sw[4] = {
		mk_switch(1000000000100ULL, 100, "foo", 0),
		mk_switch(1000000001100ULL, 0, "swapper/3", 1),
		mk_switch(1000000001200ULL, 101, "bar", 0x100),
		mk_switch(1000000005000ULL, 100, "foo", -1),
	};
	struct btr_wakeup wk[3] = {
		mk_waking(1000000000900ULL, 101, "bar", 0),
		mk_waking(1000000001150ULL, 100, "foo", 0x08),
		mk_waking(1000000004000ULL, 102, "baz", 0x10),
	};
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	size_t i;

	coll_init(&c);
	b = enc_new(&c);
	CHECK(b != NULL);
	CHECK_EQ_I64(ADD(b, sw[0]), 0);
	CHECK_EQ_I64(ADD(b, wk[0]), 0);
	CHECK_EQ_I64(ADD(b, sw[1]), 0);
	CHECK_EQ_I64(ADD(b, wk[1]), 0);
	CHECK_EQ_I64(ADD(b, sw[2]), 0);
	CHECK_EQ_I64(ADD(b, wk[2]), 0);
	CHECK_EQ_I64(ADD(b, sw[3]), 0);
	CHECK_EQ_I64(c.n, 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0); /* nothing pending: no packet */
	CHECK_EQ_I64(c.n, 1);

	decode(&d, &c, 16);
	CHECK_EQ_I64(d.n_bundles, 1);
	CHECK_EQ_I64(d.n_sw, 4);
	CHECK_EQ_I64(d.n_wk, 3);
	CHECK_EQ_I64(d.max_table, 4); /* foo swapper/3 bar baz */
	for (i = 0; i < 4 && i < d.n_sw; i++)
		check_switch(&d.sw[i], &sw[i]);
	for (i = 0; i < 3 && i < d.n_wk; i++)
		check_waking(&d.wk[i], &wk[i]);
	CHECK_EQ_I64(d.prev_end[0], 0);
	CHECK(!d.lost[0]);

	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH], 4);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_WAKING], 3);
	CHECK_EQ_I64(bundle_enc_stats(b)->bundles, 1);
	CHECK_EQ_I64(bundle_enc_stats(b)->last_ts, 1000000005000ULL);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

static void test_wire_packed_once(void)
{
	static const uint32_t packed[] = { 1, 2, 3, 4, 6, 7, 8, 9, 10, 11,
					   12 };
	const uint8_t *bundle = NULL, *cs = NULL, *unused;
	size_t bundle_len = 0, cs_len = 0, unused_len, i;
	struct bundle_enc *b;
	struct coll c;
	uint64_t ts = 5000;

	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < 300; i++) {
		struct btr_switch sw = mk_switch(ts += 7, (int32_t)i, "a", 1);
		struct btr_wakeup wk = mk_waking(ts += 3, (int32_t)i, "b", 0);

		CHECK(ADD(b, sw) == 0 && ADD(b, wk) == 0);
	}
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 1);
	CHECK_EQ_I64(c.p[0].buf[0], 0x0a); /* ftrace_events first */
	CHECK_EQ_I64(wire_count(c.p[0].buf, c.p[0].len, 1, &bundle,
				&bundle_len), 1);
	CHECK_EQ_I64(wire_count(bundle, bundle_len, 4, &cs, &cs_len), 1);
	for (i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
		CHECK_EQ_I64(wire_count(cs, cs_len, packed[i], &unused,
					&unused_len), 1);
	CHECK_EQ_I64(wire_count(cs, cs_len, 5, &unused, &unused_len), 2);
	bundle_enc_free(b);
	coll_free(&c);
}

/* 3000 switches and wakings over 200 distinct comms: new bundles start as
 * the intern table fills; timestamps and comms survive every boundary. */
static void test_many_comms(void)
{
	enum { N = 3000, COMMS = 200 };
	struct btr_switch *sw = calloc(N, sizeof(*sw));
	struct btr_wakeup *wk = calloc(N, sizeof(*wk));
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	uint64_t ts = 123456789;
	size_t i;
	char comm[32];

	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < N; i++) {
		snprintf(comm, sizeof(comm), "task-%zu", (i * 7) % COMMS);
		sw[i] = mk_switch(ts += 1 + i % 1000, (int32_t)i, comm, i % 3);
		snprintf(comm, sizeof(comm), "w-%zu", (i * 13) % COMMS);
		wk[i] = mk_waking(ts += 5, (int32_t)i, comm, 0);
		CHECK(ADD(b, sw[i]) == 0 && ADD(b, wk[i]) == 0);
	}
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	decode(&d, &c, N);
	CHECK(d.n_bundles * BUNDLE_MAX_COMMS >= 2 * COMMS);
	CHECK_EQ_I64(d.max_table, BUNDLE_MAX_COMMS);
	CHECK_EQ_I64(d.n_sw, N);
	CHECK_EQ_I64(d.n_wk, N);
	for (i = 0; i < N && i < d.n_sw && i < d.n_wk; i++) {
		check_switch(&d.sw[i], &sw[i]);
		check_waking(&d.wk[i], &wk[i]);
	}
	CHECK_EQ_I64(bundle_enc_stats(b)->bundles, d.n_bundles);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
	free(sw);
	free(wk);
}

static void test_out_of_order(void)
{
	struct btr_switch sw[3] = {
		mk_switch(1000, 1, "a", 0),
		mk_switch(500, 2, "b", 0),
		mk_switch(2000, 3, "c", 0),
	};
	struct btr_wakeup wk[2] = {
		mk_waking(UINT64_C(1) << 62, 1, "a", 0),
		mk_waking(7, 2, "a", 0),
	};
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	size_t i;

	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < 3; i++)
		CHECK_EQ_I64(ADD(b, sw[i]), 0);
	for (i = 0; i < 2; i++)
		CHECK_EQ_I64(ADD(b, wk[i]), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	decode(&d, &c, 4);
	CHECK_EQ_I64(d.n_sw, 3);
	CHECK_EQ_I64(d.n_wk, 2);
	for (i = 0; i < 3 && i < d.n_sw; i++)
		check_switch(&d.sw[i], &sw[i]);
	for (i = 0; i < 2 && i < d.n_wk; i++)
		check_waking(&d.wk[i], &wk[i]);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

static struct btr_exit mk_free(uint64_t ts, int32_t pid, const char *comm)
{
	struct btr_exit r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, BTR_REC_FREE, ts, 9);
	r.pid = pid;
	r.tgid = pid;
	r.prio = 120;
	put_comm(r.comm, comm);
	return r;
}

/* previous_bundle_end_timestamp: 0, then the last event (compact or
 * regular) of the previous bundle; lost_events on exactly the bundle after
 * a loss; the sequence flag only on the first packet. */
static void test_bundle_header_fields(void)
{
	struct btr_switch s1 = mk_switch(100, 1, "a", 0);
	struct btr_exit f1 = mk_free(150, 5, "gone");
	struct btr_switch s2 = mk_switch(200, 2, "b", 0);
	struct btr_switch s3 = mk_switch(300, 3, "c", 0);
	struct btr_wakeup w4 = mk_waking(400, 4, "d", 0);
	struct btr_switch s5 = mk_switch(500, 5, "e", 0);
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	size_t i;

	coll_init(&c);
	b = enc_new(&c);
	CHECK(ADD(b, s1) == 0 && ADD(b, f1) == 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0); /* bundle 0: ends at 150 */
	CHECK_EQ_I64(ADD(b, s2), 0);
	s3.h.lost = 4; /* flushes s2 alone: bundle 1 */
	CHECK_EQ_I64(ADD(b, s3), 0);
	CHECK_EQ_I64(c.n, 2);
	CHECK_EQ_I64(ADD(b, w4), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0); /* bundle 2: s3 w4, lost */
	CHECK_EQ_I64(bundle_enc_note_lost(b, 3), 0); /* nothing pending */
	CHECK_EQ_I64(c.n, 3);
	CHECK_EQ_I64(ADD(b, s5), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0); /* bundle 3: s5, lost */

	decode(&d, &c, 8);
	CHECK_EQ_I64(d.n_bundles, 4);
	CHECK_EQ_I64(d.prev_end[0], 0);
	CHECK_EQ_I64(d.prev_end[1], 150);
	CHECK_EQ_I64(d.prev_end[2], 200);
	CHECK_EQ_I64(d.prev_end[3], 400);
	CHECK(!d.lost[0] && !d.lost[1] && d.lost[2] && d.lost[3]);
	CHECK_EQ_I64(d.sw[2].bundle, 2);
	CHECK_EQ_I64(d.wk[0].bundle, 2);
	CHECK_EQ_I64(bundle_enc_stats(b)->lost, 7);
	for (i = 0; i < c.n; i++) {
		Packet *p = coll_unpack(&c, i);

		CHECK(p && p->has_sequence_flags == (i == 0));
		if (p && i == 0)
			CHECK_EQ_I64(p->sequence_flags,
				     SEQ_FLAG_INCREMENTAL_STATE_CLEARED);
		CHECK(p && p->optional_trusted_packet_sequence_id_case &&
		      p->trusted_packet_sequence_id == SEQ);
		CHECK(p && !p->has_timestamp);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

/* One of each regular record type, then the decoded FtraceEvents. */
union any_rec {
	struct btr_hdr h;
	struct btr_wakeup wakeup;
	struct btr_newtask newtask;
	struct btr_rename rename;
	struct btr_fork fork;
	struct btr_exec exec;
	struct btr_exit exit;
};

static size_t mk_regulars(union any_rec *r)
{
	static const enum btr_rec_type types[] = {
		BTR_REC_WAKEUP_NEW, BTR_REC_NEWTASK, BTR_REC_RENAME,
		BTR_REC_FORK,       BTR_REC_EXEC,    BTR_REC_EXIT,
		BTR_REC_FREE,
	};
	size_t i, n = sizeof(types) / sizeof(types[0]);

	memset(r, 0, n * sizeof(*r));
	for (i = 0; i < n; i++)
		hdr(&r[i].h, types[i], 1000 + i, 40 + (int32_t)i);
	r[0].wakeup.pid = 50;
	r[0].wakeup.prio = 110;
	r[0].wakeup.target_cpu = 2;
	put_comm(r[0].wakeup.comm, "child");
	r[1].newtask.pid = 51;
	r[1].newtask.clone_flags = 0x10000 | 0x100;
	r[1].newtask.oom_score_adj = -17;
	put_comm(r[1].newtask.comm, "sh");
	r[2].rename.pid = 52;
	r[2].rename.oom_score_adj = 300;
	put_comm(r[2].rename.oldcomm, "sh");
	put_comm(r[2].rename.newcomm, "ls");
	r[3].fork.parent_pid = 53;
	r[3].fork.child_pid = 54;
	put_comm(r[3].fork.parent_comm, "bash");
	put_comm(r[3].fork.child_comm, "bash");
	r[4].exec.pid = 55;
	r[4].exec.old_pid = 56;
	strcpy(r[4].exec.filename, "/usr/bin/ls");
	r[5].exit.pid = 57;
	r[5].exit.tgid = 58;
	r[5].exit.prio = 120;
	put_comm(r[5].exit.comm, "ls");
	r[6].exit.pid = 59;
	r[6].exit.prio = 139;
	put_comm(r[6].exit.comm, "zombie");
	return n;
}

static void check_regulars(const FtraceEvent *const *ev)
{
	const Perfetto__Protos__SchedWakeupNewFtraceEvent *wn;
	const Perfetto__Protos__TaskNewtaskFtraceEvent *nt;
	const Perfetto__Protos__TaskRenameFtraceEvent *rn;
	const Perfetto__Protos__SchedProcessForkFtraceEvent *fk;
	const Perfetto__Protos__SchedProcessExecFtraceEvent *ex;
	const Perfetto__Protos__SchedProcessExitFtraceEvent *xt;
	const Perfetto__Protos__SchedProcessFreeFtraceEvent *fr;

	CHECK(ev[0]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW);
	wn = ev[0]->sched_wakeup_new;
	CHECK_STR(wn->comm, "child");
	CHECK(wn->pid == 50 && wn->prio == 110 && wn->target_cpu == 2);
	CHECK(wn->has_success && wn->success == 1);
	CHECK(ev[1]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK);
	nt = ev[1]->task_newtask;
	CHECK_STR(nt->comm, "sh");
	CHECK(nt->pid == 51 && nt->clone_flags == 0x10100 &&
	      nt->has_oom_score_adj && nt->oom_score_adj == -17);
	CHECK(ev[2]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME);
	rn = ev[2]->task_rename;
	CHECK_STR(rn->oldcomm, "sh");
	CHECK_STR(rn->newcomm, "ls");
	CHECK(rn->pid == 52 && rn->oom_score_adj == 300);
	CHECK(ev[3]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK);
	fk = ev[3]->sched_process_fork;
	CHECK_STR(fk->parent_comm, "bash");
	CHECK_STR(fk->child_comm, "bash");
	CHECK(fk->parent_pid == 53 && fk->child_pid == 54);
	CHECK(ev[4]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC);
	ex = ev[4]->sched_process_exec;
	CHECK_STR(ex->filename, "/usr/bin/ls");
	CHECK(ex->pid == 55 && ex->old_pid == 56);
	CHECK(ev[5]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT);
	xt = ev[5]->sched_process_exit;
	CHECK_STR(xt->comm, "ls");
	CHECK(xt->pid == 57 && xt->tgid == 58 && xt->prio == 120);
	CHECK(ev[6]->event_case ==
	      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE);
	fr = ev[6]->sched_process_free;
	CHECK_STR(fr->comm, "zombie");
	CHECK(fr->pid == 59 && fr->prio == 139);
}

static void test_regular_types(void)
{
	union any_rec r[8];
	size_t i, n = mk_regulars(r);
	struct bundle_enc *b;
	struct coll c;
	Packet *p;

	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < n; i++)
		CHECK_EQ_I64(bundle_enc_add(b, &r[i].h, sizeof(r[i])), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 1);
	p = coll_unpack(&c, 0);
	CHECK(p && p->ftrace_events && !p->ftrace_events->compact_sched);
	if (p && p->ftrace_events && p->ftrace_events->n_event == n) {
		for (i = 0; i < n; i++) {
			const FtraceEvent *e = p->ftrace_events->event[i];

			CHECK(e->has_timestamp && e->timestamp == 1000 + i);
			CHECK(e->has_pid && e->pid == 40 + i);
		}
		check_regulars((const FtraceEvent *const *)
				       p->ftrace_events->event);
	} else {
		CHECK(!"7 regular events");
	}
	for (i = BTR_REC_WAKEUP_NEW; i <= BTR_REC_FREE; i++)
		CHECK_EQ_I64(bundle_enc_stats(b)->events[i], 1);
	CHECK_EQ_I64(bundle_enc_stats(b)->last_ts, 1006);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	bundle_enc_free(b);
	coll_free(&c);
}

/* A switch whose prev_pid is not the task the last switch put on the CPU
 * (the kernel reported no switch in between) is written as a regular
 * sched_switch with its real prev fields; the stream goes on compact. */
static void test_unmatched_switch(void)
{
	struct btr_switch sw[4] = {
		mk_switch(2000, 10, "ten", 0),
		mk_switch(2100, 11, "eleven", 1),
		mk_switch(2200, 12, "twelve", 1),
		mk_switch(2300, 13, "thirteen", 0),
	};
	const Perfetto__Protos__SchedSwitchFtraceEvent *m;
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	Packet *p;
	size_t i;

	/* the kernel ran 99 between switches 1 and 2 without a report */
	sw[2].prev_pid = 99;
	memcpy(sw[2].prev_comm, "hidden", 7);
	sw[2].prev_prio = 110;
	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < 4; i++)
		CHECK_EQ_I64(ADD(b, sw[i]), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->switch_unmatched, 1);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH], 4);
	decode(&d, &c, 8);
	CHECK_EQ_I64(d.n_sw, 3);
	check_switch(&d.sw[0], &sw[0]);
	check_switch(&d.sw[1], &sw[1]);
	check_switch(&d.sw[2], &sw[3]);
	p = coll_unpack(&c, 0);
	CHECK(p && p->ftrace_events && p->ftrace_events->n_event == 1);
	if (p && p->ftrace_events && p->ftrace_events->n_event == 1) {
		const FtraceEvent *e = p->ftrace_events->event[0];

		CHECK(e->event_case ==
		      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH);
		CHECK(e->has_timestamp && e->timestamp == 2200);
		m = e->sched_switch;
		CHECK(m && m->has_prev_pid && m->prev_pid == 99);
		CHECK(m && strcmp(m->prev_comm, "hidden") == 0);
		CHECK(m && m->prev_prio == 110 && m->prev_state == 1);
		CHECK(m && m->next_pid == 12 && strcmp(m->next_comm, "twelve") == 0);
		CHECK(m && m->next_prio == sw[2].next_prio);
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

/* A new encoder's first switch is regular, with its prev fields (no
 * earlier switch to infer them from: trace_processor would drop it as a
 * first compact switch); the next ones are compact, none unmatched. */
static void test_first_switch_regular(void)
{
	struct btr_switch sw[3] = {
		mk_switch(4000, 30, "first", 0),
		mk_switch(4100, 31, "second", 1),
		mk_switch(4200, 32, "third", 0),
	};
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	Packet *p;
	size_t i;

	sw[0].prev_pid = 7;
	memcpy(sw[0].prev_comm, "before", 7);
	coll_init(&c);
	b = bundle_enc_new(CPU, SEQ, &c.sink);
	CHECK(b != NULL);
	for (i = 0; i < 3; i++)
		CHECK_EQ_I64(ADD(b, sw[i]), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->switch_unmatched, 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH], 3);
	decode(&d, &c, 8);
	CHECK_EQ_I64(d.n_sw, 2);
	if (d.n_sw == 2) {
		check_switch(&d.sw[0], &sw[1]);
		check_switch(&d.sw[1], &sw[2]);
	}
	p = coll_unpack(&c, 0);
	CHECK(p && p->ftrace_events && p->ftrace_events->n_event == 1);
	if (p && p->ftrace_events && p->ftrace_events->n_event == 1) {
		const FtraceEvent *e = p->ftrace_events->event[0];
		const Perfetto__Protos__SchedSwitchFtraceEvent *m = e->sched_switch;

		CHECK(e->has_timestamp && e->timestamp == 4000);
		CHECK(m && m->prev_pid == 7 && strcmp(m->prev_comm, "before") == 0);
		CHECK(m && m->next_pid == 30 && strcmp(m->next_comm, "first") == 0);
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

/* A switch that does not follow on from the last one is no news after a
 * loss (records lost, or a bundle that never reached the sink): it stays
 * compact and is not counted; the next bundle has lost_events. */
static void test_unmatched_after_loss(void)
{
	struct btr_switch sw[4] = {
		mk_switch(3000, 20, "a", 0),
		mk_switch(3100, 21, "b", 0),
		mk_switch(3200, 22, "c", 0),
		mk_switch(3300, 23, "d", 0),
	};
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;

	sw[1].prev_pid = 77; /* records lost before it */
	sw[1].h.lost = 2;
	sw[3].prev_pid = 88; /* the bundle holding sw[2] was lost */
	coll_init(&c);
	b = enc_new(&c);
	CHECK_EQ_I64(ADD(b, sw[0]), 0);
	CHECK_EQ_I64(ADD(b, sw[1]), 0);
	CHECK_EQ_I64(ADD(b, sw[2]), 0);
	c.fail = -EIO;
	CHECK_EQ_I64(bundle_enc_flush(b), -EIO);
	c.fail = 0;
	CHECK_EQ_I64(ADD(b, sw[3]), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->switch_unmatched, 0);
	decode(&d, &c, 8);
	CHECK_EQ_I64(d.n_sw, 2); /* sw[0], then sw[3]; sw[1..2] dropped */
	if (d.n_sw == 2) {
		check_switch(&d.sw[0], &sw[0]);
		check_switch(&d.sw[1], &sw[3]);
	}
	CHECK(d.n_bundles == 2 && d.lost[1]);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

/* Comms filling their whole field (no NUL) stay bounded; garbage after a
 * NUL does not make a distinct comm. Records are heap blocks of exactly
 * their size so that the sanitizers catch any over-read. */
static void test_unterminated_strings(void)
{
	struct btr_wakeup *w = malloc(sizeof(*w));
	struct btr_exec *x = malloc(sizeof(*x));
	struct btr_switch s1 = mk_switch(10, 1, "ab", 0);
	struct btr_switch s2 = mk_switch(20, 2, "ab", 0);
	struct bundle_enc *b;
	struct coll c;
	Packet *p;

	*w = mk_waking(5, 3, "", 0);
	memset(w->comm, 'w', BTR_COMM_LEN);
	memset(x, 0, sizeof(*x));
	hdr(&x->h, BTR_REC_EXEC, 30, 4);
	memset(x->filename, 'f', BTR_FILENAME_LEN);
	memcpy(s2.next_comm + 3, "junk", 4);

	coll_init(&c);
	b = enc_new(&c);
	CHECK_EQ_I64(bundle_enc_add(b, &w->h, sizeof(*w)), 0);
	CHECK_EQ_I64(ADD(b, s1), 0);
	CHECK_EQ_I64(ADD(b, s2), 0);
	CHECK_EQ_I64(bundle_enc_add(b, &x->h, sizeof(*x)), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	p = coll_unpack(&c, 0);
	CHECK(p && p->ftrace_events && p->ftrace_events->compact_sched);
	if (p && p->ftrace_events && p->ftrace_events->compact_sched) {
		const CompactSched *cs = p->ftrace_events->compact_sched;

		CHECK_EQ_I64(cs->n_intern_table, 2);
		CHECK_EQ_I64(strlen(cs->intern_table[0]), BTR_COMM_LEN);
		CHECK_STR(cs->intern_table[1], "ab");
		CHECK(cs->n_switch_next_comm_index == 2 &&
		      cs->switch_next_comm_index[0] == 1 &&
		      cs->switch_next_comm_index[1] == 1);
		CHECK_EQ_I64(p->ftrace_events->n_event, 1);
		CHECK_EQ_I64(strlen(p->ftrace_events->event[0]
					    ->sched_process_exec->filename),
			     BTR_FILENAME_LEN);
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	bundle_enc_free(b);
	coll_free(&c);
	free(w);
	free(x);
}

static void test_malformed(void)
{
	struct btr_switch sw = mk_switch(10, 1, "a", 0);
	struct btr_clock clk;
	struct bundle_enc *b;
	struct coll c;
	union any_rec r[8];
	size_t i, n = mk_regulars(r);
	uint16_t bad[] = { 0, BTR_REC_CLOCK, BTR_REC_TYPE_MAX, 0xffff };

	coll_init(&c);
	b = enc_new(&c);
	memset(&clk, 0, sizeof(clk));
	hdr(&clk.h, BTR_REC_CLOCK, 5, 0);
	CHECK_EQ_I64(ADD(b, clk), -EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sw.h.type = bad[i];
		CHECK_EQ_I64(ADD(b, sw), -EINVAL);
	}
	sw.h.type = BTR_REC_SWITCH;
	CHECK_EQ_I64(bundle_enc_add(b, &sw.h, sizeof(sw) - 1), -EINVAL);
	CHECK_EQ_I64(bundle_enc_add(b, &sw.h, sizeof(sw.h) - 1), -EINVAL);
	CHECK_EQ_I64(bundle_enc_add(b, NULL, sizeof(sw)), -EINVAL);
	for (i = 0; i < n; i++)
		CHECK_EQ_I64(bundle_enc_add(b, &r[i].h, sizeof(r[i].h)),
			     -EINVAL);
	CHECK_EQ_I64(bundle_enc_stats(b)->rejected, 8 + n);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 0);
	CHECK_EQ_I64(bundle_enc_add(b, &sw.h, sizeof(sw) + 8), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 1);
	bundle_enc_free(b);
	coll_free(&c);
}

/* Bundles stop at BUNDLE_MAX_EVENTS, with or without a flush. */
static void test_event_cap(void)
{
	enum { N = 2 * BUNDLE_MAX_EVENTS + 100 };
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	size_t i;

	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < N; i++) {
		struct btr_switch sw = mk_switch(1000 + i, (int32_t)i, "x", 0);

		CHECK(ADD(b, sw) == 0);
	}
	CHECK_EQ_I64(c.n, 2);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	decode(&d, &c, N);
	CHECK_EQ_I64(d.n_bundles, 3);
	CHECK_EQ_I64(d.n_sw, N);
	CHECK_EQ_I64(d.sw[BUNDLE_MAX_EVENTS].bundle, 1);
	CHECK_EQ_I64(d.sw[BUNDLE_MAX_EVENTS].ts, 1000 + BUNDLE_MAX_EVENTS);
	CHECK_EQ_I64(d.prev_end[1], 1000 + BUNDLE_MAX_EVENTS - 1);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH], N);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

/* Exec records are large: the byte estimate closes bundles before the
 * event cap does. */
static void test_byte_cap(void)
{
	struct bundle_enc *b;
	struct btr_exec x;
	struct coll c;
	size_t i;

	memset(&x, 0, sizeof(x));
	hdr(&x.h, BTR_REC_EXEC, 1, 1);
	coll_init(&c);
	b = enc_new(&c);
	for (i = 0; i < 1000; i++)
		CHECK(ADD(b, x) == 0);
	CHECK(c.n >= 2);
	for (i = 0; i < c.n; i++)
		CHECK(c.p[i].len < 2 * BUNDLE_MAX_BYTES);
	bundle_enc_free(b);
	coll_free(&c);
}

/* A failing sink: the error comes back, the next bundle is flagged lost,
 * and the sequence flag waits for the first packet actually written. */
static void test_sink_error(void)
{
	struct btr_switch s1 = mk_switch(10, 1, "a", 0);
	struct btr_switch s2 = mk_switch(20, 2, "b", 0);
	struct bundle_enc *b;
	struct coll c;
	Packet *p;

	coll_init(&c);
	b = enc_new(&c);
	CHECK_EQ_I64(ADD(b, s1), 0);
	c.fail = -EIO;
	CHECK_EQ_I64(bundle_enc_flush(b), -EIO);
	c.fail = 0;
	CHECK_EQ_I64(ADD(b, s2), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 1);
	CHECK_EQ_I64(bundle_enc_stats(b)->bundles, 1);
	p = coll_unpack(&c, 0);
	CHECK(p && p->ftrace_events && p->ftrace_events->lost_events);
	CHECK(p && p->has_sequence_flags &&
	      p->sequence_flags == SEQ_FLAG_INCREMENTAL_STATE_CLEARED);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	bundle_enc_free(b);
	coll_free(&c);
}

/* A pseudo-random stream of every record type (xorshift, fixed seed):
 * 300 comms so intern tables fill, negative and large values, regular
 * events between compact ones. */
static void random_stream(struct bundle_enc *b, uint64_t seed, int n)
{
	static const enum btr_rec_type other[] = {
		BTR_REC_WAKEUP_NEW, BTR_REC_NEWTASK, BTR_REC_RENAME,
		BTR_REC_FORK, BTR_REC_EXEC, BTR_REC_EXIT, BTR_REC_FREE,
	};
	uint64_t x = seed, ts = 1000;
	char comm[32];
	int i;

	chain_pid = 0;
	for (i = 0; i < n; i++) {
		union {
			struct btr_hdr h;
			struct btr_switch sw;
			struct btr_wakeup wk;
			struct btr_exec exec;
		} r;
		uint64_t k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % 100;
		ts += x % 3 ? x % 5000 : x % 50000000000ULL;
		snprintf(comm, sizeof(comm), "task-%llu",
			 (unsigned long long)(x >> 20) % 300);
		if (k < 50) {
			r.sw = mk_switch(ts, (int32_t)(x % 70000), comm,
					 k < 5 ? -1 : (int64_t)(x % 0x1000));
			if (k == 7)
				r.sw.prev_pid = chain_pid + 1; /* unreported */
			CHECK_EQ_I64(ADD(b, r.sw), 0);
		} else if (k < 95) {
			r.wk = mk_waking(ts, (int32_t)(x % 70000), comm,
					 (uint16_t)(x % 0x50));
			if (k == 90)
				r.wk.prio = -(int32_t)(x % 100);
			CHECK_EQ_I64(ADD(b, r.wk), 0);
		} else {
			memset(&r, 0, sizeof(r));
			hdr(&r.h, other[x % 7], ts, (int32_t)(x % 1000));
			snprintf(r.exec.filename, sizeof(r.exec.filename),
				 "/bin/%s", comm);
			CHECK_EQ_I64(bundle_enc_add(b, &r.h, sizeof(r)), 0);
		}
		if (x % 997 == 0)
			CHECK_EQ_I64(bundle_enc_flush(b), 0);
	}
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
}

/* The hand-written encoding is canonical (what protobuf-c writes for the
 * same message, byte for byte), and encoding in place into the central
 * buffer, with packets split across small chunks, gives the same bytes as
 * encoding into a plain sink. */
static void test_in_place_canonical(void)
{
	struct central *cen = central_new(64 << 20, 1000, FILL_DISCARD);
	struct bundle_enc *b1, *b2;
	struct coll c1, c2;
	size_t i, big = 0;

	coll_init(&c1);
	coll_init(&c2);
	CHECK(cen != NULL);
	b1 = bundle_enc_new(CPU, SEQ, &c1.sink);
	b2 = bundle_enc_new(CPU, SEQ, central_sink(cen));
	CHECK(b1 && b2);
	random_stream(b1, 88172645463325252ULL, 20000);
	random_stream(b2, 88172645463325252ULL, 20000);
	central_flush(cen);
	CHECK_EQ_I64(central_read(cen, &c2.sink, true), 0);
	CHECK_EQ_I64(central_stats(cen)->chunks_discarded, 0);
	CHECK(c1.n > 20);
	CHECK_EQ_I64(c2.n, c1.n);
	for (i = 0; i < c1.n && i < c2.n; i++) {
		Packet *p = coll_unpack(&c1, i);
		uint8_t *re;

		CHECK_EQ_I64(c2.p[i].seq, SEQ);
		CHECK_EQ_I64(c2.p[i].len, c1.p[i].len);
		CHECK(c2.p[i].len == c1.p[i].len &&
		      !memcmp(c2.p[i].buf, c1.p[i].buf, c1.p[i].len));
		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_EQ_I64(perfetto__protos__trace_packet__get_packed_size(p),
			     c1.p[i].len);
		re = malloc(c1.p[i].len + 1);
		CHECK(re != NULL);
		if (re) {
			perfetto__protos__trace_packet__pack(p, re);
			CHECK(!memcmp(re, c1.p[i].buf, c1.p[i].len));
		}
		big += c1.p[i].len > 1000;
		free(re);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	CHECK(big > 0); /* some packets spanned chunks */
	bundle_enc_free(b1);
	bundle_enc_free(b2);
	central_free(cen);
	coll_free(&c1);
	coll_free(&c2);
}

/* Blocked reasons: a name the symbolizer gives is interned in the packet
 * of the bundle that uses it (each bundle carries its own, once per
 * function), the event points at it by iid; no name, no caller, counted.
 * The table's cap closes the bundle first. */
static const char *fake_sym(void *ctx, uint64_t addr, uint64_t *id)
{
	static char names[BUNDLE_MAX_KSYMS + 8][16];
	uint64_t f = addr >> 8;

	(void)ctx;
	if (!f || f >= BUNDLE_MAX_KSYMS + 8)
		return NULL;
	snprintf(names[f], sizeof(names[f]), "func%llu", (unsigned long long)f);
	*id = f * 3;
	return names[f];
}

static struct btr_blocked mk_blocked(uint64_t ts, int32_t pid, uint64_t caller,
				     uint32_t io_wait)
{
	struct btr_blocked r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, BTR_REC_BLOCKED, ts, pid);
	r.pid = pid;
	r.caller = caller;
	r.io_wait = io_wait;
	return r;
}

static const char *interned_name(const Packet *p, uint64_t iid)
{
	static char buf[64];
	size_t i;

	for (i = 0; p->interned_data && i < p->interned_data->n_kernel_symbols;
	     i++) {
		const Perfetto__Protos__InternedString *s =
			p->interned_data->kernel_symbols[i];

		if (s->iid == iid) {
			snprintf(buf, sizeof(buf), "%.*s", (int)s->str.len,
				 (const char *)s->str.data);
			return buf;
		}
	}
	return NULL;
}

/* A switch and its blocked reason in one record (BTR_REC_SWITCH_BLOCKED):
 * the switch as any other (regular as a new encoder's first, compact
 * after), then the reason of prev_pid 1 ns later; counted as both. */
static void test_switch_blocked(void)
{
	struct btr_switch_blocked r[2];
	struct bundle_enc *b;
	struct decoded d;
	struct coll c;
	Packet *p;
	size_t i;

	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].sw = mk_switch(100 + 10 * i, 40 + (int32_t)i, "sleeper", 1);
		r[i].sw.h.type = BTR_REC_SWITCH_BLOCKED;
		r[i].caller = 0x1234;
		r[i].io_wait = (uint32_t)i;
	}
	coll_init(&c);
	b = bundle_enc_new(CPU, SEQ, &c.sink); /* the first is regular */
	CHECK(b != NULL);
	bundle_enc_set_symbolizer(b, fake_sym, NULL);
	for (i = 0; i < 2; i++)
		CHECK_EQ_I64(bundle_enc_add(b, &r[i].sw.h, sizeof(r[i])), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH], 2);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_BLOCKED], 2);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_SWITCH_BLOCKED], 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->last_ts, 111);
	decode(&d, &c, 8);
	CHECK_EQ_I64(d.n_sw, 1); /* the second, compact */
	if (d.n_sw == 1)
		check_switch(&d.sw[0], &r[1].sw);
	p = coll_unpack(&c, 0);
	/* the first switch, then the two reasons, each 1 ns after its switch */
	CHECK(p && p->ftrace_events && p->ftrace_events->n_event == 3);
	if (p && p->ftrace_events && p->ftrace_events->n_event == 3) {
		FtraceEvent **e = p->ftrace_events->event;

		CHECK(e[0]->event_case ==
		      PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH);
		CHECK(e[0]->timestamp == 100 && e[0]->sched_switch->next_pid == 40);
		for (i = 1; i < 3; i++) {
			CHECK_EQ_I64(e[i]->event_case,
				     PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON);
			CHECK_EQ_I64(e[i]->timestamp, 100 + 10 * (i - 1) + 1);
			CHECK_EQ_I64(e[i]->sched_blocked_reason->pid,
				     r[i - 1].sw.prev_pid);
			CHECK_EQ_I64(e[i]->sched_blocked_reason->io_wait, i - 1);
			CHECK_STR(interned_name(p, e[i]->sched_blocked_reason->caller),
				  "func18");
		}
	}
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	decoded_free(&d);
	bundle_enc_free(b);
	coll_free(&c);
}

static void test_blocked(void)
{
	struct btr_switch sw = mk_switch(10, 5, "a", 2);
	struct btr_blocked b1 = mk_blocked(11, 4, 0x1234, 1);
	struct btr_blocked b2 = mk_blocked(12, 6, 0x1299, 0); /* same func */
	struct btr_blocked b3 = mk_blocked(13, 7, 0x0099, 0); /* no name */
	struct bundle_enc *b;
	struct coll c;
	static const int32_t pids[3] = { 4, 6, 7 };
	Packet *p;
	size_t i;

	coll_init(&c);
	b = enc_new(&c);
	bundle_enc_set_symbolizer(b, fake_sym, NULL);
	CHECK_EQ_I64(ADD(b, sw), 0);
	CHECK_EQ_I64(ADD(b, b1), 0);
	CHECK_EQ_I64(ADD(b, b2), 0);
	CHECK_EQ_I64(ADD(b, b3), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(bundle_enc_stats(b)->events[BTR_REC_BLOCKED], 3);
	CHECK_EQ_I64(bundle_enc_stats(b)->blocked_unnamed, 1);
	p = coll_unpack(&c, 0);
	CHECK(p && p->interned_data && p->interned_data->n_kernel_symbols == 1);
	if (p) { /* written by hand, byte for byte what protobuf-c writes */
		size_t n = perfetto__protos__trace_packet__get_packed_size(p);
		uint8_t *buf = malloc(n);

		CHECK(buf && n == c.p[0].len);
		if (buf && n == c.p[0].len) {
			perfetto__protos__trace_packet__pack(p, buf);
			CHECK(memcmp(buf, c.p[0].buf, n) == 0);
		}
		free(buf);
	}
	CHECK(p && p->ftrace_events->n_event == 3);
	for (i = 0; p && i < p->ftrace_events->n_event && i < 3; i++) {
		const FtraceEvent *e = p->ftrace_events->event[i];
		const Perfetto__Protos__SchedBlockedReasonFtraceEvent *r =
			e->sched_blocked_reason;

		CHECK_EQ_I64(e->event_case,
			     PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON);
		CHECK_EQ_I64(e->timestamp, 11 + i);
		CHECK_EQ_I64(r->pid, pids[i]);
		CHECK_EQ_I64(r->io_wait, i == 0);
		if (i < 2) {
			CHECK(r->has_caller && r->caller == 0x12 * 3);
			CHECK_STR(interned_name(p, r->caller), "func18");
		} else {
			CHECK(!r->has_caller);
		}
	}
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);

	/* the next bundle interns it again: it does not lean on this one,
	 * and says so (a new incremental state); one without blocked
	 * reasons carries no flag */
	CHECK_EQ_I64(ADD(b, b1), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	p = coll_unpack(&c, 1);
	CHECK(p && p->has_sequence_flags &&
	      p->sequence_flags == SEQ_FLAG_INCREMENTAL_STATE_CLEARED);
	CHECK(p && interned_name(p, 0x12 * 3) != NULL);
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	sw = mk_switch(20, 6, "b", 1);
	CHECK_EQ_I64(ADD(b, sw), 0);
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	p = coll_unpack(&c, 2);
	CHECK(p && !p->has_sequence_flags && !p->interned_data);
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);

	/* more distinct functions than a bundle interns: two bundles, each
	 * holding the names its own events use */
	for (i = 1; i <= BUNDLE_MAX_KSYMS + 1; i++) {
		struct btr_blocked r = mk_blocked(100 + i, 1, i << 8, 0);

		CHECK_EQ_I64(ADD(b, r), 0);
	}
	CHECK_EQ_I64(bundle_enc_flush(b), 0);
	CHECK_EQ_I64(c.n, 5);
	for (i = 3; i < 5 && i < c.n; i++) {
		size_t k;

		p = coll_unpack(&c, i);
		CHECK(p != NULL);
		for (k = 0; p && k < p->ftrace_events->n_event; k++)
			CHECK(interned_name(p, p->ftrace_events->event[k]
						       ->sched_blocked_reason->caller));
		if (p)
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	bundle_enc_free(b);
	coll_free(&c);
}

/* bundle_enc_add_switch and _waking (a caller that knows the type) write
 * the same packets and counts as bundle_enc_add: over bundles emitted
 * full, a record that carries losses, and one that does not match the
 * running task (a regular event). */
static void test_typed_entries(void)
{
	struct coll c[2];
	struct bundle_enc *b[2];
	size_t i, k;
	int e[2];

	for (k = 0; k < 2; k++) {
		coll_init(&c[k]);
		b[k] = enc_new(&c[k]);
		CHECK(b[k] != NULL);
	}
	for (i = 0; i < 3 * BUNDLE_MAX_EVENTS + 5; i++) {
		uint64_t ts = 1000000000000ULL + i * 1000;
		struct btr_switch sw;
		struct btr_wakeup wk;

		if (i % 3 == 1) {
			wk = mk_waking(ts, (int32_t)(i % 50) + 1, "wk", 0);
			wk.h.lost = i == 301 ? 4 : 0;
			e[0] = ADD(b[0], wk);
			e[1] = bundle_enc_add_waking(b[1], &wk);
		} else {
			/* chain_pid is shared: the same record for both */
			sw = mk_switch(ts, (int32_t)(i % 7) + 1, "sw",
				       (int64_t)(i % 4));
			if (i == 600) /* not the task that ran */
				sw.prev_pid = 4242;
			sw.h.lost = i == 900 ? 2 : 0;
			e[0] = ADD(b[0], sw);
			e[1] = bundle_enc_add_switch(b[1], &sw);
		}
		CHECK_EQ_I64(e[0], 0);
		CHECK_EQ_I64(e[1], 0);
	}
	for (k = 0; k < 2; k++)
		CHECK_EQ_I64(bundle_enc_flush(b[k]), 0);
	CHECK(c[0].n > 3);
	CHECK_EQ_I64(c[1].n, c[0].n);
	for (i = 0; i < c[0].n && i < c[1].n; i++)
		CHECK(c[0].p[i].len == c[1].p[i].len &&
		      !memcmp(c[0].p[i].buf, c[1].p[i].buf, c[0].p[i].len));
	CHECK(!memcmp(bundle_enc_stats(b[0]), bundle_enc_stats(b[1]),
		      sizeof(struct bundle_enc_stats)));
	CHECK_EQ_I64(bundle_enc_stats(b[1])->lost, 6);
	CHECK_EQ_I64(bundle_enc_stats(b[1])->switch_unmatched, 1);
	for (k = 0; k < 2; k++) {
		bundle_enc_free(b[k]);
		coll_free(&c[k]);
	}
}

int main(void)
{
	RUN(test_roundtrip_compact);
	RUN(test_wire_packed_once);
	RUN(test_many_comms);
	RUN(test_out_of_order);
	RUN(test_bundle_header_fields);
	RUN(test_regular_types);
	RUN(test_unmatched_switch);
	RUN(test_unmatched_after_loss);
	RUN(test_first_switch_regular);
	RUN(test_unterminated_strings);
	RUN(test_malformed);
	RUN(test_event_cap);
	RUN(test_byte_cap);
	RUN(test_sink_error);
	RUN(test_in_place_canonical);
	RUN(test_blocked);
	RUN(test_switch_blocked);
	RUN(test_typed_entries);
	return unit_finish();
}
