/* Internals of `bpftrace-rec dump`: the state of one run, and the packet
 * decoders that turn TracePackets into output lines. */
#ifndef BTR_DUMP_H
#define BTR_DUMP_H

#include "dump/line.h"
#include "dump/sched_state.h"
#include "dump/stacks.h"
#include "perfetto/trace.pb-c.h"

struct dump_ctx {
	const char *name;    /* the file, for messages */
	uint64_t offset;     /* offset of the packet being decoded */
	uint32_t trace_clock; /* clock of the timestamps (a snapshot's TS) */
	uint32_t machine;    /* machine_id of the packet being decoded, 0 for
			      * the host: its lines get machine=N */
	void (*print)(const struct line *l);
	struct line line;    /* the line being built */
	struct sched_state sched;
	/* interned data of the packet being decoded (kernel symbols of
	 * sched_blocked_reason), NULL when it has none */
	const Perfetto__Protos__InternedData *interned;
	struct dump_stacks *stacks; /* interned callstacks, per sequence */
	uint64_t lines;
};

/* Starts the next output line; dump_end() prints it. */
struct line *dump_begin(struct dump_ctx *c, const char *kind, bool has_ts,
			uint64_t ts, bool has_cpu, uint64_t cpu);
void dump_end(struct dump_ctx *c);

/* A warning about the current packet: "FILE: offset N: ...". */
void dump_warn(struct dump_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* dump/packets.c: every packet kind. */
void dump_packet(struct dump_ctx *c, const Perfetto__Protos__TracePacket *p);

/* dump/triggers.c: trigger packets and their thread marks; false for
 * another kind. */
bool dump_trigger_packet(struct dump_ctx *c,
			 const Perfetto__Protos__TracePacket *p);

/* dump/ftrace.c: one FtraceEventBundle, events in timestamp order. */
void dump_ftrace_bundle(struct dump_ctx *c,
			const Perfetto__Protos__FtraceEventBundle *b);

#endif
