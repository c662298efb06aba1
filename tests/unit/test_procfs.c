/* Unit tests of the process-tree describer (record/procfs.c) on this
 * process's own /proc entry: a tid is described once until it is forgotten
 * or the incremental state is cleared, whatever its caches hold. */
#include <stdlib.h>
#include <unistd.h>

#include "coll_sink.h"
#include "record/procfs.h"
#include "unit.h"

#define SEQ 7

/* Notes tid, flushes; returns how many packets that wrote. */
static size_t note_and_flush(struct procfs *p, struct coll *c, int32_t tid)
{
	size_t before = c->n;

	procfs_note_tid(p, tid);
	CHECK_EQ_I64(procfs_flush(p), 0);
	return c->n - before;
}

static void test_described_once_until_cleared(void)
{
	int32_t me = (int32_t)getpid();
	struct coll c;
	struct procfs *p;

	coll_init(&c);
	p = procfs_new(&c.sink, SEQ);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ_I64(note_and_flush(p, &c, me), 1);
	CHECK_EQ_I64(c.p[0].seq, SEQ);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 0); /* seen: nothing new */
	CHECK_EQ_I64(note_and_flush(p, &c, me), 0);
	procfs_forget_tid(p, me);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 1);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 0);
	/* A clear forgets every tid, the recently seen ones too. */
	procfs_clear(p);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 1);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 0);
	procfs_forget_process(p, me);
	CHECK_EQ_I64(note_and_flush(p, &c, me), 1);
	procfs_free(p);
	coll_free(&c);
}

int main(void)
{
	RUN(test_described_once_until_cleared);
	return unit_finish();
}
