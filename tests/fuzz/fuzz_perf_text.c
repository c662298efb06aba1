/* Fuzz target: `perf script` text as the offline importer reads it
 * (sync/perf/perf_text.c, through perf_text_open_file() on an fmemopen
 * stream), each sample then encoded into PerfSample packets
 * (encode/perf_samples.c) that the checking sink decodes again. Also
 * runs perf_text_detect() on the head and perf_text_parse_time() on the
 * first line. Checks the parser's promises: every sample has frames and
 * strings, and every sample the input holds lands in exactly one of the
 * sample counters. */
#include "fuzz.h"
#include "encode/perf_samples.h"
#include "sync/perf/perf_text.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static void check_sample(const struct perf_sample *s)
{
	size_t i;

	FUZZ_CHECK(s->comm && s->event && s->frames && s->nframes >= 1);
	FUZZ_CHECK(s->nframes <= PERF_TEXT_MAX_FRAMES);
	FUZZ_CHECK(s->ts_ns >= 0 && s->line >= 1);
	for (i = 0; i < s->nframes; i++)
		FUZZ_CHECK(s->frames[i].symbol && s->frames[i].dso);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_samples_opts opts = {
		.seq_id = 7,
		.timestamp_clock_id = 6,
		.thread_names = true,
		.process_names = true,
	};
	struct perf_sample s;
	struct perf_samples *enc;
	struct perf_text *p;
	struct fuzz_sink sink;
	uint64_t samples = 0, ended = 0;
	const uint8_t *nl;
	int64_t ns;
	FILE *f;
	int rc, enc_err = 0;

	(void)perf_text_detect(data, size);
	nl = memchr(data, '\n', size);
	(void)perf_text_parse_time((const char *)data,
				   nl ? (size_t)(nl - data) : size, &ns);

	f = fmemopen((void *)data, size, "r");
	FUZZ_CHECK(f != NULL);
	p = perf_text_open_file(f);
	FUZZ_CHECK(p != NULL);
	/* Some inputs see their sink fail, to reach the error paths. */
	fuzz_sink_init(&sink, size % 5 == 0 ? (long)(size % 7) : -1);
	enc = perf_samples_new(&sink.sink, &opts);
	FUZZ_CHECK(enc != NULL);
	while ((rc = perf_text_next(p, &s)) == 1) {
		check_sample(&s);
		samples++;
		if (!enc_err)
			enc_err = perf_samples_add(enc, &s, (uint64_t)s.ts_ns);
		else
			FUZZ_CHECK(perf_samples_add(enc, &s,
						    (uint64_t)s.ts_ns) ==
				   enc_err);
	}
	FUZZ_CHECK(rc == 0); /* a memory stream has no read error */
	FUZZ_CHECK(perf_text_stat(p, PERF_TEXT_STAT_SAMPLES) == samples);
	for (enum perf_text_stat st = PERF_TEXT_STAT_SAMPLES;
	     st <= PERF_TEXT_STAT_TOO_LARGE; st++)
		ended += perf_text_stat(p, st);
	FUZZ_CHECK(ended <= perf_text_lines(p));
	FUZZ_CHECK(perf_samples_stats(enc)->samples <= samples);
	perf_samples_free(enc);
	perf_text_close(p);
	fclose(f);
	return 0;
}
