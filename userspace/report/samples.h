/* The off-CPU stacks of a trace recorded with --callstacks, as the report
 * reads them: each PerfSample (taken right after a sleeping switch-out;
 * its kernel and user callstack interned per sequence as Perfetto does,
 * decoded by dump/stacks.h) becomes a sample (machine, tid, time, CPU,
 * stack). A stack is a folded string, root first, the user frames, then
 * "-", then the kernel frames:
 *
 *	start_thread;reader_main;inner_fn;-;entry_SYSCALL_64;...;__schedule
 *
 * (";" in a name becomes ":"), made once per (sequence, callstack iid);
 * stack 0 is "[no stack]", for a sample without one. offcpu.h weighs the
 * samples with the model's sleeps. */
#ifndef BTR_REPORT_SAMPLES_H
#define BTR_REPORT_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "dump/stacks.h"
#include "util/hashmap.h"

#define SAMPLES_NO_STACK "[no stack]"

struct sample {
	int64_t ts;
	int32_t tid;
	uint32_t machine, cpu;
	uint32_t stack;       /* index in stack[] */
};

struct samples {
	struct dump_stacks *st;
	struct hmap cache;    /* (seq, generation, callstack iid) -> stack */
	struct hmap gen;      /* seq -> generation: states cleared so far */
	char **stack;         /* folded stacks */
	size_t nstack, capstack;
	struct sample *v;
	size_t n, cap;
};

int samples_init(struct samples *s);  /* 0 or -ENOMEM */
void samples_free(struct samples *s);
/* Takes a TracePacket (times on the trace clock) when it holds a
 * PerfSample. Returns 0, -1 when malformed (*why), or -ENOMEM. */
int samples_packet(struct samples *s, const uint8_t *pkt, size_t len,
		   const char **why);

#endif
