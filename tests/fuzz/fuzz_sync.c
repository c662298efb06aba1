/* Fuzz target: the packet rewriting of `sync` (and of `dump`'s trace-clock
 * view): convert/convert.c's two passes over one input (input.c with its
 * compressed_packets, packet_info.c, snapshots.c and the clock graph,
 * then rewrite.c, bundle_rewrite.c, seq_defaults.c, timeline.c, wire.c),
 * without the sort and the output file. The input is a trace file's bytes
 * (plain or gzip) given as a path (a memfd); the trace clock asked for is
 * the default, MONOTONIC or REALTIME by the input's size. Checked: the
 * passes end with 0 or an input error that has its message, packets out
 * never exceed packets in, and a packet protobuf-c decodes still decodes
 * after the rewrite (the rewrite drops events and fields, never breaks the
 * message). */
#include "fuzz.h"
#include "convert/convert.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static int check_packet(void *ctx, const struct input_packet *p,
			const struct rewritten *res)
{
	Perfetto__Protos__TracePacket *in, *out;

	(void)ctx;
	if (res->dropped)
		return 0;
	FUZZ_CHECK(res->data != NULL || res->len == 0);
	in = perfetto__protos__trace_packet__unpack(NULL, p->len, p->data);
	if (!in)
		return 0;
	perfetto__protos__trace_packet__free_unpacked(in, NULL);
	out = perfetto__protos__trace_packet__unpack(NULL, res->len, res->data);
	FUZZ_CHECK(out != NULL);
	perfetto__protos__trace_packet__free_unpacked(out, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t clocks[] = { 0, BTR_CLOCK_MONOTONIC,
					   BTR_CLOCK_REALTIME };
	struct input in, *inputs[1] = { &in }, *failed = NULL;
	struct sync_stats st = { 0 };
	struct timeline tl = { 0 };
	char path[64];
	int fd, err;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	FUZZ_CHECK(input_open(&in, path, 0) == 0);
	FUZZ_CHECK(timeline_init(&tl) == 0);
	err = convert_prepare(inputs, 1, clocks[size % 3], &tl, &st, &failed);
	FUZZ_CHECK(err == 0 || err == CONVERT_INPUT_ERROR);
	if (err)
		FUZZ_CHECK(failed == &in && in.err[0] != '\0');
	err = convert_input(&in, &tl, &st, false, check_packet, NULL);
	FUZZ_CHECK(err == 0 || err == CONVERT_INPUT_ERROR);
	if (err)
		FUZZ_CHECK(in.err[0] != '\0');
	FUZZ_CHECK(st.packets_out <= st.packets_in);
	timeline_free(&tl);
	input_close(&in);
	close(fd);
	return 0;
}
