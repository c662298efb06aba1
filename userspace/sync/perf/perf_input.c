/* Perf text input into PerfSample packets on the trace clock (see
 * perf_input.h). */
#include "sync/perf/perf_input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "convert/convert.h"
#include "encode/perf_samples.h"
#include "sync/perf/perf_text.h"
#include "sync/perf/trace_tids.h"
#include "util/wire.h"

/* The sink perf_samples writes to: packets go to emit with their key. */
struct keyed_sink {
	struct packet_sink sink;
	perf_emit_fn emit;
	void *ctx;
	int64_t key;   /* of the sample being written */
	int err;       /* emit's error */
	struct wbuf out;
};

/* TracePacket.trusted_pid: the encoder stamps the writer's pid, but sync
 * is no producer of these samples (and the output must not depend on
 * its pid). */
#define PKT_TRUSTED_PID 79

static int sink_emit(struct packet_sink *s, uint32_t seq, const uint8_t *p,
		     size_t n)
{
	struct keyed_sink *k = s->ctx;
	int err;

	(void)seq;
	if (k->err)
		return k->err;
	k->out.len = 0;
	wbuf_copy_except(&k->out, p, n, PKT_TRUSTED_PID);
	if (k->out.oom)
		return -ENOMEM;
	err = k->emit(k->ctx, k->key, k->out.p, k->out.len);
	if (err) {
		k->err = err;
		return -EIO; /* the encoder stops; k->err is the cause */
	}
	return 0;
}

/* Processes of the tids of samples without a pid, from the trace inputs
 * on the perf input's machine: read at the first such sample. */
struct pid_lookup {
	struct input **inputs;
	size_t n;
	uint32_t machine;
	bool loaded;
	int err;       /* -ENOMEM while reading them */
	struct tid_table tids;
};

static int32_t lookup_pid(void *ctx, int32_t tid)
{
	struct pid_lookup *l = ctx;

	if (!l->loaded) {
		l->loaded = true;
		l->err = trace_tids_collect(&l->tids, l->inputs, l->n,
					    l->machine);
	}
	return l->err ? -1 : tid_table_tgid(&l->tids, tid);
}

/* The parser's skipped samples, on the input's machine. */
static void add_parser_stats(const struct perf_text *p, struct timeline *tl,
			     struct sync_stats *stats, uint32_t machine)
{
	int k;

	_Static_assert(SYNC_STAT_PERF_LINE_NOT_TEXT - SYNC_STAT_PERF_NO_FRAMES ==
			       PERF_TEXT_STAT_LINE_NOT_TEXT -
				       PERF_TEXT_STAT_NO_FRAMES,
		       "perf text stats and their sync stats in one order");
	for (k = SYNC_STAT_PERF_NO_FRAMES; k <= SYNC_STAT_PERF_LINE_NOT_TEXT;
	     k++) {
		enum perf_text_stat ps = (enum perf_text_stat)(
			PERF_TEXT_STAT_NO_FRAMES + k - SYNC_STAT_PERF_NO_FRAMES);

		timeline_count(tl, stats, machine, (enum sync_stat)k,
			       perf_text_stat(p, ps));
	}
}

/* Converts and encodes every sample of parser p. */
static int convert_samples(struct input *in, struct perf_text *p,
			   struct timeline *tl, struct sync_stats *stats,
			   struct perf_samples *enc, struct keyed_sink *k)
{
	const struct file_machine *m = &in->scan.fm.v[0];
	struct clock_scope scope = { in->file.scope.file, m->machine };
	struct perf_sample s;
	struct btr_clock_key key;
	int64_t ns;
	int rc, err;

	clock_scope_key_tag(&scope, m->tag, in->file.perf_clock, 0, &key);
	tl->stats = stats;
	while ((rc = perf_text_next(p, &s)) > 0) {
		stats->samples_in++;
		if (!timeline_convert(tl, key, (uint64_t)s.ts_ns, &ns))
			continue;
		if (ns > k->key)
			k->key = ns;
		err = perf_samples_add(enc, &s, (uint64_t)ns);
		if (err)
			return k->err ? k->err : CONVERT_NO_MEMORY;
		stats->samples_out++;
	}
	if (rc < 0) {
		snprintf(in->err, sizeof(in->err), "%s: line %llu: %s%s",
			 in->file.name, (unsigned long long)perf_text_lines(p) + 1,
			 rc == -ENOMEM ? "" : "read error: ", strerror(-rc));
		return CONVERT_INPUT_ERROR;
	}
	return 0;
}

int perf_input_convert(struct input *in, struct timeline *tl,
		       struct sync_stats *stats,
		       const struct perf_input_opts *o, perf_emit_fn emit,
		       void *ctx)
{
	struct keyed_sink k = { .emit = emit, .ctx = ctx, .key = INT64_MIN };
	struct pid_lookup l = { .inputs = o->inputs, .n = o->ninputs,
				.machine = in->scan.fm.v[0].machine };
	struct perf_samples_opts po = {
		.seq_id = o->seq_id,
		.thread_names = o->names,
		.process_names = o->names,
		.resolve_pid = lookup_pid,
		.resolve_ctx = &l,
		.machine_id = o->machine_id,
	};
	const struct perf_samples_stats *ps;
	struct perf_samples *enc;
	struct perf_text *p;
	FILE *f;
	int rc;

	k.sink.write = sink_emit;
	k.sink.ctx = &k;
	tid_table_init(&l.tids, 0);
	f = input_fopen(in);
	if (!f)
		return CONVERT_INPUT_ERROR;
	p = perf_text_open_file(f);
	enc = p ? perf_samples_new(&k.sink, &po) : NULL;
	if (!p || !enc) {
		perf_text_close(p);
		fclose(f);
		return CONVERT_NO_MEMORY;
	}
	rc = convert_samples(in, p, tl, stats, enc, &k);
	if (!rc && l.err)
		rc = CONVERT_NO_MEMORY;
	add_parser_stats(p, tl, stats, l.machine);
	ps = perf_samples_stats(enc);
	stats->pid_traced += ps->pid_resolved;
	stats->pid_from_tid += ps->pid_from_tid;
	tid_table_free(&l.tids);
	perf_samples_free(enc);
	wbuf_free(&k.out);
	perf_text_close(p);
	fclose(f);
	return rc;
}
