/* Decoding of TracePackets for the report, on the wire format without
 * unpacking: FtraceEventBundles (compact_sched's packed arrays read column
 * by column into fixed-size events, with no allocation per event; regular
 * sched_switch, sched_waking, task_newtask, task_rename), ProcessTrees
 * (threads' processes and names) and SystemInfo's machine name. A
 * bundle's three time-ordered runs (compact switches, compact wakings,
 * regular events) are merged into its CPU's queue (merge.h); ProcessTree
 * facts go straight to the model. As in trace_processor, the last
 * occurrence of a packed array counts, a bundle without cpu is left out,
 * and a compact stream stops at a comm index past the intern table or at
 * the end of its shortest array (both counted as parse errors). Time
 * arrays on the trace clock come unread from the converter: one that is
 * malformed is an error as the converter's would be, a time past
 * INT64_MAX is left out and counted (times_dropped). */
#ifndef BTR_REPORT_DECODE_H
#define BTR_REPORT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/event.h"
#include "report/merge.h"
#include "util/hashmap.h"
#include "report/model.h"
#include "report/names.h"
#include "report/triggers.h"
#include "stats/table.h"

/* CPUs at or above this are left out (trace_processor rejects >= 1024). */
#define DECODE_MAX_CPU 4096u
#define DECODE_NAMED_MACHINES 16u

struct run {
	struct rev *v;
	size_t n, cap;
	bool unsorted;  /* may be out of time order */
};

struct ksym_key {
	uint32_t machine, seq;
	uint64_t iid;
};

struct decoder {
	struct names *names;
	struct merge *merge;
	struct model *model;
	struct run sw, wk, reg;       /* scratch: the bundle's three runs */
	uint32_t *intern;             /* the bundle's comm ids */
	size_t nintern, capintern;
	/* SystemInfo names of machines 0..DECODE_NAMED_MACHINES-1 (0: the
	 * host), the first one each */
	char machine_name[DECODE_NAMED_MACHINES][64];
	uint64_t parse_errors;        /* compact streams cut short */
	uint64_t times_dropped;       /* compact events past INT64_MAX */
	uint64_t bundles_without_cpu;
	/* kernel function names interned on each sequence (InternedData
	 * kernel_symbols): (machine, sequence, iid) -> name id */
	struct hmap ksyms;
	uint32_t cur_machine, cur_seq;  /* of the packet being decoded */
	struct trig_seen triggers;      /* Trigger packets and their marks */
};

/* What a packet was, for the loss statistics (stats/table.h). */
struct decoded {
	bool bundle;          /* it holds an FtraceEventBundle */
	bool full_switch;     /* ... with a regular sched_switch */
	struct stat_bundle sb;
};

void decoder_init(struct decoder *d, struct names *names, struct merge *mg,
		  struct model *model);
void decoder_free(struct decoder *d);
/* Returns 0, -1 when malformed (*why), or -ENOMEM. */
int decode_packet(struct decoder *d, const uint8_t *pkt, size_t len,
		  struct decoded *out, const char **why);

#endif
