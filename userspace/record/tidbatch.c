/* Batches of tid notes for the process tree (tidbatch.h). */
#include "record/tidbatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#define RECENT(b, tid) \
	(&(b)->recent[(uint32_t)(tid) % (sizeof((b)->recent) / sizeof((b)->recent[0]))])

static void push(struct tid_batch *b, int32_t tid, enum tid_op op)
{
	if (grow_array((void **)&b->ops, &b->cap, b->n + 1, sizeof(*b->ops),
		       64)) {
		b->err = -ENOMEM;
		return;
	}
	b->ops[b->n].tid = tid;
	b->ops[b->n].op = (uint8_t)op;
	b->n++;
}

void tidbatch_note(struct tid_batch *b, int32_t tid)
{
	int32_t *r = RECENT(b, tid);

	if (tid <= 0 || *r == tid)
		return;
	*r = tid;
	push(b, tid, TID_NOTE);
}

void tidbatch_forget(struct tid_batch *b, int32_t tid)
{
	int32_t *r = RECENT(b, tid);

	if (*r == tid)
		*r = 0;
	push(b, tid, TID_FORGET);
}

void tidbatch_forget_process(struct tid_batch *b, int32_t tgid)
{
	int32_t *r = RECENT(b, tgid);

	if (*r == tgid)
		*r = 0;
	push(b, tgid, TID_FORGET_PROCESS);
}

static void reset(struct tid_batch *b)
{
	b->n = 0;
	memset(b->recent, 0, sizeof(b->recent));
}

int tidbatch_move(struct tid_batch *dst, struct tid_batch *src)
{
	if (grow_array((void **)&dst->ops, &dst->cap, dst->n + src->n,
		       sizeof(*dst->ops), 64))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->ops + dst->n, src->ops, src->n * sizeof(*src->ops));
	dst->n += src->n;
	reset(src);
	return 0;
}

void tidbatch_apply(struct tid_batch *b, struct procfs *p)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		int32_t tid = b->ops[i].tid;

		if (b->ops[i].op == TID_NOTE)
			procfs_note_tid(p, tid);
		else if (b->ops[i].op == TID_FORGET)
			procfs_forget_tid(p, tid);
		else
			procfs_forget_process(p, tid);
	}
	reset(b);
}

void tidbatch_free(struct tid_batch *b)
{
	free(b->ops);
	memset(b, 0, sizeof(*b));
}
