/* Test tool: the times of each packet of a trace, decoded with protobuf-c
 * (independently of the wire rewriting `sync` does), one line a packet:
 *
 *   tracetimes FILE        INDEX FIRST LAST CLOCK
 *   tracetimes --hex FILE  the packet's bytes in hex
 *
 * FIRST and LAST are the earliest and latest of the packet's timestamp and
 * its ftrace events' (compact ones decoded from their deltas), "-" when it
 * has none. CLOCK is "clock" when the packet names a clock (timestamp_clock_id,
 * TracePacketDefaults.timestamp_clock_id or an ftrace_clock), else "-". */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "perfetto/trace.pb-c.h"
#include "trace/reader.h"

struct span {
	bool any;
	uint64_t first, last;
};

static void note(struct span *s, uint64_t t)
{
	if (!s->any || t < s->first)
		s->first = t;
	if (!s->any || t > s->last)
		s->last = t;
	s->any = true;
}

static void deltas(struct span *s, const uint64_t *v, size_t n)
{
	uint64_t acc = 0;
	size_t i;

	for (i = 0; i < n; i++)
		note(s, acc += v[i]);
}

static void print_times(uint64_t index, const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__FtraceEventBundle *b =
		p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS ?
			p->ftrace_events : NULL;
	struct span s = { 0 };
	bool clock = p->has_timestamp_clock_id ||
		     (p->trace_packet_defaults &&
		      p->trace_packet_defaults->has_timestamp_clock_id);
	size_t i;

	if (p->has_timestamp)
		note(&s, p->timestamp);
	if (b) {
		for (i = 0; i < b->n_event; i++)
			if (b->event[i]->has_timestamp)
				note(&s, b->event[i]->timestamp);
		if (b->compact_sched) {
			deltas(&s, b->compact_sched->switch_timestamp,
			       b->compact_sched->n_switch_timestamp);
			deltas(&s, b->compact_sched->waking_timestamp,
			       b->compact_sched->n_waking_timestamp);
		}
		clock |= b->has_ftrace_clock && b->ftrace_clock;
	}
	if (s.any)
		printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", index,
		       s.first, s.last, clock ? "clock" : "-");
	else
		printf("%" PRIu64 " - - %s\n", index, clock ? "clock" : "-");
}

int main(int argc, char **argv)
{
	bool hex = argc == 3 && !strcmp(argv[1], "--hex");
	struct trace_reader *r;
	const uint8_t *pkt;
	uint64_t index = 0, off;
	char err[512];
	size_t len, i;
	int rc;

	if (argc != 2 + hex) {
		fprintf(stderr, "usage: tracetimes [--hex] FILE\n");
		return 64;
	}
	r = trace_reader_open(argv[argc - 1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	while ((rc = trace_reader_next(r, &pkt, &len, &off)) ==
	       TRACE_READ_PACKET) {
		Perfetto__Protos__TracePacket *p;

		if (hex) {
			for (i = 0; i < len; i++)
				printf("%02x", pkt[i]);
			putchar('\n');
			continue;
		}
		p = perfetto__protos__trace_packet__unpack(NULL, len, pkt);
		if (!p) {
			fprintf(stderr, "packet %" PRIu64 " does not decode\n",
				index);
			return 1;
		}
		print_times(index++, p);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	if (rc != TRACE_READ_END) {
		fprintf(stderr, "%s\n", trace_reader_error(r));
		return 1;
	}
	trace_reader_close(r);
	return 0;
}
