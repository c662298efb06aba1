/* What a reader learns about tids from its records (seen, renamed,
 * exec'd), kept in order per drain pass and handed to the process tree
 * (record/procfs.h) in one go: the process tree belongs to one thread, and
 * several readers hand their batches over under a lock taken per pass, not
 * per record. A tid seen twice in a pass is kept once. */
#ifndef BTR_TIDBATCH_H
#define BTR_TIDBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "record/procfs.h"

enum tid_op { TID_NOTE, TID_FORGET, TID_FORGET_PROCESS };

struct tid_batch {
	struct tid_op_rec {
		int32_t tid;
		uint8_t op; /* enum tid_op */
	} *ops;
	size_t n, cap;
	int32_t recent[256]; /* noted in this batch, direct-mapped */
	int err;             /* out of memory: an op was dropped */
};

void tidbatch_note(struct tid_batch *b, int32_t tid);
void tidbatch_forget(struct tid_batch *b, int32_t tid);
void tidbatch_forget_process(struct tid_batch *b, int32_t tgid);
/* Appends src's ops to dst and empties src. 0 or -ENOMEM. */
int tidbatch_move(struct tid_batch *dst, struct tid_batch *src);
/* Applies the ops to p in order and empties b. */
void tidbatch_apply(struct tid_batch *b, struct procfs *p);
void tidbatch_free(struct tid_batch *b);

#endif
