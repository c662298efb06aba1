// SPDX-License-Identifier: GPL-2.0
/* Test-only BPF program: writes synthetic sched_switch records into a
 * chosen ring of an array of rings, as if that CPU had switched, so the
 * reader and the memory budget can be exercised with as many rings as a
 * big host has (tests/tools/synth_rings.c runs it with BPF_PROG_TEST_RUN).
 * Each record carries its sequence number in its timestamp (or, when
 * asked, times from a given start by a given step) and, like the
 * recorder's programs, the number of records of its ring lost before it;
 * per ring the program counts records written and dropped. With
 * discard_every set (before load), every such record reserved is
 * discarded instead of submitted, as a program that gives a record up
 * does: the reader must step over it; the next record written carries
 * the count of those since the last one in next_prio (120 + n). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "record.h"
#include "rings.h"

char LICENSE[] SEC("license") = "GPL";

#define SYNTH_RINGS_MAX 8192

struct synth_count {
	__u64 seq;     /* next sequence number */
	__u64 written;
	__u64 dropped;
	__u64 pending; /* dropped since the last record written */
	__u64 discarded;
	__u64 pending_discarded; /* discarded since the last one written */
};

const volatile __u32 discard_every = 0; /* 0: none */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SYNTH_RINGS_MAX);
	__type(key, __u32);
	__type(value, struct synth_count);
} counts SEC(".maps");

struct loop_ctx {
	void *ring;
	struct synth_count *c;
	__u64 ts, step; /* ts 0: from the sequence number */
};

static long write_one(__u64 i, struct loop_ctx *l)
{
	struct synth_count *c = l->c;
	struct btr_switch *s;
	__u64 seq = c->seq++;

	s = bpf_ringbuf_reserve(l->ring, sizeof(*s), 0);
	if (!s) {
		c->dropped++;
		c->pending++;
		return 0;
	}
	if (discard_every && seq % discard_every == discard_every - 1) {
		bpf_ringbuf_discard(s, BPF_RB_NO_WAKEUP);
		c->discarded++;
		c->pending_discarded++;
		return 0;
	}
	__builtin_memset(s, 0, sizeof(*s));
	s->h.ts = l->ts ? l->ts + i * l->step : 1000000000ull + seq * 1000;
	s->h.lost = (__u32)c->pending;
	s->h.type = BTR_REC_SWITCH;
	s->h.pid = 1000 + (int)((seq + 1) & 1);
	s->prev_pid = 1000 + (int)((seq + 1) & 1);
	s->next_pid = 1000 + (int)(seq & 1);
	s->prev_prio = 120;
	s->next_prio = 120 + (int)c->pending_discarded;
	s->prev_state = 1;
	__builtin_memcpy(s->prev_comm, "synth", 6);
	__builtin_memcpy(s->next_comm, "synth", 6);
	c->pending = 0;
	c->pending_discarded = 0;
	c->written++;
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Writes `count` records into ring `ring`, stamped ts, ts + step, ...
 * (ts 0: from their sequence numbers). Returns 0, or 1 for a ring that
 * does not exist. */
SEC("raw_tp")
int BPF_PROG(synth_write, __u64 ring, __u64 count, __u64 ts, __u64 step)
{
	__u32 idx = (__u32)ring;
	struct loop_ctx l;

	l.ts = ts;
	l.step = step;
	l.ring = bpf_map_lookup_elem(&rings, &idx);
	l.c = bpf_map_lookup_elem(&counts, &idx);
	if (!l.ring || !l.c)
		return 1;
	bpf_loop((__u32)count, write_one, &l, 0);
	return 0;
}
