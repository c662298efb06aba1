/* The second pass of a perf script text input (input.h, INPUT_PERF_TEXT):
 * its samples (perf_text.h), each timestamp converted from the input's
 * perf clock on its machine into the trace clock (placement.h relates
 * that clock), encoded as PerfSample packets with interned callstacks on
 * one sequence of their own (perf_samples.h). A sample whose time cannot
 * be converted is dropped and counted under the conversion stats; the
 * parser's skipped samples are counted under its stat names.
 *
 * A sample printed without a pid (`perf script -F comm,tid,...`) takes
 * the process the trace inputs give its tid on the input's machine
 * (trace_tids.h: read at the first such sample, in a pass of its own over
 * those inputs), else pid = tid; both counted (sync_stats pid_traced,
 * pid_from_tid).
 *
 * Packets come with a sort key: their time, but never lower than the key
 * of the packet before them, so that sorting keeps the sequence in the
 * order it was written (its interned data before its first use) even
 * where perf's times or the conversion go back. */
#ifndef BTR_PERF_INPUT_H
#define BTR_PERF_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert/input.h"
#include "clock/timeline.h"

struct perf_input_opts {
	uint32_t seq_id;     /* output sequence id, not 0 */
	uint32_t machine_id; /* output machine id, 0: the host */
	bool names;          /* ProcessTree names of the sampled threads */
	struct input **inputs; /* the run's inputs (trace inputs read for */
	size_t ninputs;        /* the processes of tids), or none */
};

typedef int (*perf_emit_fn)(void *ctx, int64_t key, const uint8_t *p,
			    size_t n);

/* Returns 0, CONVERT_INPUT_ERROR (in->err says why), CONVERT_NO_MEMORY,
 * or what emit returned to stop. */
int perf_input_convert(struct input *in, struct timeline *tl,
		       struct sync_stats *stats,
		       const struct perf_input_opts *o, perf_emit_fn emit,
		       void *ctx);

#endif
