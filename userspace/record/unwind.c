/* User stacks by CFI (see unwind.h): a step evaluates the frame's CFA and
 * register rules (DWARF expressions, as libdw gives them) over the
 * registers known so far and the slice's bytes. */
#include "record/unwind.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* DWARF register numbers of x86-64 (the System V psABI's). */
enum {
	DW_RBX = 3,
	DW_RBP = 6,
	DW_RSP = 7,
	DW_R12 = 12,
	DW_R15 = 15,
	DW_RA = 16,
	DW_NREGS = 17,
};

/* The frame-pointer walk's bounds, as bpf/sched.bpf.c's. */
#define FP_SPAN (64ull << 20)
#define EXPR_STACK 16

struct regs {
	uint64_t v[DW_NREGS];
	bool have[DW_NREGS];
};

struct walk {
	const struct btr_ustack *u;
	const __u64 *fp; /* the frame-pointer walk: pc, return addresses */
	uint32_t nfp;
	uint64_t chain[BTR_USTACK_MAX]; /* its frames' addresses, found in
					 * the slice */
	uint32_t nchain;
};

/* The 8 bytes at addr, when the slice holds them. */
static bool mem_read(const struct btr_ustack *u, uint64_t addr, uint64_t *v)
{
	uint64_t sp = u->regs[BTR_UREG_SP], size = u->size;

	if (size > BTR_SLICE_MAX || addr < sp || addr - sp > size ||
	    size - (addr - sp) < 8)
		return false;
	memcpy(v, u->data + (addr - sp), 8);
	return true;
}

/* The addresses of the frames the BPF walk followed, as far as the slice
 * holds them: the first from the thread's frame pointer, each next one
 * read at the one before, with the walk's own checks. */
static void find_chain(struct walk *w)
{
	uint64_t sp = w->u->regs[BTR_UREG_SP], fp = w->u->regs[BTR_UREG_BP];
	uint64_t prev = sp;

	/* fp[1 + k] is the return address at chain[k] + 8 */
	while (w->nchain + 1 < w->nfp && w->nchain < BTR_USTACK_MAX) {
		if ((fp & 7) || fp < prev || fp - sp >= FP_SPAN ||
		    (w->nchain && fp == prev))
			return;
		w->chain[w->nchain++] = fp;
		prev = fp;
		if (!mem_read(w->u, fp, &fp))
			return;
	}
}

/* Evaluates a DWARF expression over r (and cfa, when known). Returns
 * false when it uses what the walk does not know or cannot do; *value:
 * the result is the value itself (DW_OP_stack_value), not a location. */
static bool eval(const Dwarf_Op *ops, size_t n, const struct regs *r,
		 const uint64_t *cfa, const struct btr_ustack *u,
		 uint64_t *out, bool *value)
{
	uint64_t st[EXPR_STACK], a, b;
	size_t i, top = 0;
	unsigned reg;

	*value = false;
	for (i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t at = op->atom;

		if (top >= EXPR_STACK)
			return false;
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			st[top++] = at - DW_OP_lit0;
			continue;
		}
		if ((at >= DW_OP_breg0 && at <= DW_OP_breg31) ||
		    at == DW_OP_bregx) {
			reg = at == DW_OP_bregx ? (unsigned)op->number
						: (unsigned)(at - DW_OP_breg0);
			if (reg >= DW_NREGS || !r->have[reg])
				return false;
			st[top++] = r->v[reg] +
				    (at == DW_OP_bregx ? op->number2
						       : op->number);
			continue;
		}
		switch (at) {
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			st[top++] = op->number;
			continue;
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return false;
			st[top++] = *cfa;
			continue;
		case DW_OP_nop:
			continue;
		case DW_OP_stack_value:
			if (i + 1 != n)
				return false;
			*value = true;
			continue;
		case DW_OP_dup:
			if (!top)
				return false;
			st[top] = st[top - 1];
			top++;
			continue;
		default:
			break;
		}
		/* one operand */
		if (!top)
			return false;
		switch (at) {
		case DW_OP_plus_uconst:
			st[top - 1] += op->number;
			continue;
		case DW_OP_deref:
			if (!mem_read(u, st[top - 1], &st[top - 1]))
				return false;
			continue;
		case DW_OP_drop:
			top--;
			continue;
		default:
			break;
		}
		/* two operands */
		if (top < 2)
			return false;
		b = st[--top];
		a = st[top - 1];
		switch (at) {
		case DW_OP_plus: a += b; break;
		case DW_OP_minus: a -= b; break;
		case DW_OP_mul: a *= b; break;
		case DW_OP_and: a &= b; break;
		case DW_OP_or: a |= b; break;
		case DW_OP_xor: a ^= b; break;
		case DW_OP_shl: a = b < 64 ? a << b : 0; break;
		case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
		case DW_OP_shra:
			a = b < 64 ? (uint64_t)((int64_t)a >> b)
				   : (uint64_t)((int64_t)a >> 63);
			break;
		case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
		case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
		case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
		case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
		case DW_OP_eq: a = a == b; break;
		case DW_OP_ne: a = a != b; break;
		case DW_OP_swap:
			st[top - 1] = b;
			st[top++] = a;
			continue;
		case DW_OP_over:
			st[top++] = b;
			st[top++] = a;
			continue;
		default:
			return false;
		}
		st[top - 1] = a;
	}
	if (!top)
		return false;
	*out = st[top - 1];
	return true;
}

/* What a rule gives a register of the caller. */
enum rule_result { RULE_UNDEFINED, RULE_SAME, RULE_SET, RULE_UNKNOWN };

/* Register reg of the caller of the frame f (cfa its CFA) into *v;
 * *addr: where it was saved (also when that lies past the slice:
 * RULE_UNKNOWN then), 0 when it is not on the stack. */
static enum rule_result rule(Dwarf_Frame *f, unsigned reg,
			     const struct regs *r, uint64_t cfa,
			     const struct btr_ustack *u, uint64_t *v,
			     uint64_t *addr)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool value;

	*addr = 0;
	if (dwarf_frame_register(f, (int)reg, mem, &ops, &n) != 0)
		return RULE_UNKNOWN;
	if (n == 0)
		return ops ? RULE_UNDEFINED : RULE_SAME;
	if (!eval(ops, n, r, &cfa, u, v, &value))
		return RULE_UNKNOWN;
	if (value)
		return RULE_SET;
	*addr = *v;
	return mem_read(u, *addr, v) ? RULE_SET : RULE_UNKNOWN;
}

/* step(): went on to the caller (not an end). */
#define STEPPED ((enum unwind_end)-1)

/* One step from the frame in r (CFI f) to its caller, into r; STEPPED or
 * how the walk ends. */
static enum unwind_end step(struct walk *w, Dwarf_Frame *f, struct regs *r,
			    int *join)
{
	static const unsigned saved[] = { DW_RBX, DW_RBP, 12, 13, 14, DW_R15 };
	struct regs c = *r;
	Dwarf_Op *ops;
	size_t n, i;
	uint64_t cfa, ra, addr;
	bool value;
	int ra_reg = dwarf_frame_info(f, NULL, NULL, NULL);
	enum rule_result rr;

	*join = -1;
	if (ra_reg < 0 || ra_reg >= DW_NREGS ||
	    dwarf_frame_cfa(f, &ops, &n) != 0 ||
	    !eval(ops, n, r, NULL, w->u, &cfa, &value))
		return UNWIND_BAD;
	rr = rule(f, (unsigned)ra_reg, r, cfa, w->u, &ra, &addr);
	if (rr == RULE_UNDEFINED)
		return UNWIND_COMPLETE;
	if (rr != RULE_SET) {
		/* the return address lies past the slice: in a slot of
		 * the chain, the chain goes on from there (within the slice
		 * the CFI is followed: the chain's frames are right only
		 * while every function keeps a frame pointer) */
		for (i = 0; addr && i < w->nchain; i++)
			if (w->chain[i] + 8 == addr) {
				*join = (int)i;
				return UNWIND_JOINED;
			}
		return UNWIND_CUT;
	}
	for (i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
		uint64_t v, a;

		switch (rule(f, saved[i], r, cfa, w->u, &v, &a)) {
		case RULE_SET:
			c.v[saved[i]] = v;
			c.have[saved[i]] = true;
			break;
		case RULE_SAME:
			break;
		default:
			c.have[saved[i]] = false;
		}
	}
	/* callers' frames are above; a step that does not climb loops */
	if (cfa <= r->v[DW_RSP])
		return UNWIND_BAD;
	c.v[DW_RSP] = cfa;
	c.v[DW_RA] = ra;
	*r = c;
	return STEPPED;
}

uint32_t unwind_user(const struct btr_ustack *u, int32_t tgid,
		     const __u64 *fp, uint32_t nfp, __u64 *out,
		     uint32_t max, unwind_frame_fn fn, void *ctx,
		     enum unwind_end *end)
{
	struct walk w = { .u = u, .fp = fp, .nfp = nfp };
	struct regs r = { 0 };
	uint32_t n = 0, k;
	int join = -1;

	*end = UNWIND_BAD;
	if (!max)
		return 0;
	find_chain(&w);
	r.v[DW_RA] = u->regs[BTR_UREG_IP];
	r.v[DW_RSP] = u->regs[BTR_UREG_SP];
	r.v[DW_RBP] = u->regs[BTR_UREG_BP];
	r.v[DW_RBX] = u->regs[BTR_UREG_BX];
	r.v[12] = u->regs[BTR_UREG_R12];
	r.v[13] = u->regs[BTR_UREG_R13];
	r.v[14] = u->regs[BTR_UREG_R14];
	r.v[DW_R15] = u->regs[BTR_UREG_R15];
	r.have[DW_RA] = r.have[DW_RSP] = r.have[DW_RBP] = r.have[DW_RBX] =
		true;
	for (k = 12; k <= DW_R15; k++)
		r.have[k] = true;
	for (;;) {
		Dwarf_Frame *f;
		enum unwind_end e;

		if (!r.v[DW_RA]) {
			*end = UNWIND_COMPLETE;
			return n;
		}
		if (n == max) {
			*end = UNWIND_FULL;
			return n;
		}
		out[n++] = r.v[DW_RA];
		f = fn(ctx, tgid, r.v[DW_RA], n == 1);
		if (!f) {
			/* no CFI: a function with a frame pointer goes on
			 * along the chain */
			for (k = 0; r.have[DW_RBP] && k < w.nchain; k++)
				if (w.chain[k] == r.v[DW_RBP])
					break;
			if (!r.have[DW_RBP] || k == w.nchain) {
				*end = UNWIND_NO_CFI;
				return n;
			}
			join = (int)k;
			e = UNWIND_JOINED;
		} else {
			e = step(&w, f, &r, &join);
			free(f);
		}
		if (e == UNWIND_JOINED) {
			/* the chain's return addresses from frame join on */
			for (k = 1 + (uint32_t)join; k < nfp && n < max; k++)
				out[n++] = fp[k];
			*end = k < nfp ? UNWIND_FULL : UNWIND_JOINED;
			return n;
		}
		if (e != STEPPED) {
			*end = e;
			return n;
		}
	}
}
