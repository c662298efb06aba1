/* Unit tests of the PerfSample encoder (encode/perf_samples.c): samples go
 * in, packets are collected by a test sink and decoded with protobuf-c, and
 * a model of the sequence's interning tables checks what trace_processor
 * relies on: the first packet clears the incremental state, iids count from
 * 1 per table, every iid is defined before or in the packet that uses it,
 * each entry is defined once, callstacks are root first. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "encode/packet.h"
#include "encode/perf_samples.h"
#include "sync/perf/perf_text.h"
#include "perfetto/trace.pb-c.h"
#include "coll_sink.h"
#include "unit.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__InternedData InternedData;
typedef Perfetto__Protos__PerfSample PerfSample;

#define SEQ 9
#define MAXI 4096
#define FLAG_CLEARED 1u
#define FLAG_NEEDS 2u


/* ---- model of the sequence's interning tables ---- */

struct model {
	char *func[MAXI], *path[MAXI];
	uint64_t map_path[MAXI], frame_fn[MAXI], frame_map[MAXI];
	uint64_t *stack[MAXI];
	size_t stack_n[MAXI];
	size_t nfunc, npath, nmap, nframe, nstack;
	size_t packets, samples, trees;
	bool ok; /* every rule held so far */
};

static void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->ok = true;
}

static void model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nfunc; i++)
		free(m->func[i]);
	for (i = 0; i < m->npath; i++)
		free(m->path[i]);
	for (i = 0; i < m->nstack; i++)
		free(m->stack[i]);
}

/* A new entry must take the next iid of its table. */
static bool next_iid(struct model *m, size_t *n, bool has, uint64_t iid)
{
	bool good = has && iid == *n + 1 && *n < MAXI;

	m->ok &= good;
	if (good)
		(*n)++;
	return good;
}

static void model_strings(struct model *m, char **tab, size_t *n,
			  Perfetto__Protos__InternedString **s, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (next_iid(m, n, s[i]->has_iid, s[i]->iid))
			tab[*n - 1] = strndup((const char *)s[i]->str.data,
					      s[i]->str.len);
}

/* Defined so far: 1 <= iid <= n. */
static bool known(struct model *m, uint64_t iid, size_t n)
{
	bool good = iid >= 1 && iid <= n;

	m->ok &= good;
	return good;
}

static void model_interned(struct model *m, const InternedData *d)
{
	size_t i, j;

	m->ok &= d->n_build_ids == 0;
	model_strings(m, m->func, &m->nfunc, d->function_names,
		      d->n_function_names);
	model_strings(m, m->path, &m->npath, d->mapping_paths,
		      d->n_mapping_paths);
	for (i = 0; i < d->n_mappings; i++) {
		const Perfetto__Protos__Mapping *mp = d->mappings[i];

		m->ok &= mp->n_path_string_ids == 1 && !mp->has_start &&
			 !mp->has_end && !mp->has_build_id;
		if (next_iid(m, &m->nmap, mp->has_iid, mp->iid) &&
		    mp->n_path_string_ids == 1 &&
		    known(m, mp->path_string_ids[0], m->npath))
			m->map_path[m->nmap - 1] = mp->path_string_ids[0];
	}
	for (i = 0; i < d->n_frames; i++) {
		const Perfetto__Protos__Frame *f = d->frames[i];

		m->ok &= f->has_rel_pc;
		if (next_iid(m, &m->nframe, f->has_iid, f->iid) &&
		    known(m, f->function_name_id, m->nfunc) &&
		    known(m, f->mapping_id, m->nmap)) {
			m->frame_fn[m->nframe - 1] = f->function_name_id;
			m->frame_map[m->nframe - 1] = f->mapping_id;
		}
	}
	for (i = 0; i < d->n_callstacks; i++) {
		const Perfetto__Protos__Callstack *cs = d->callstacks[i];

		if (!next_iid(m, &m->nstack, cs->has_iid, cs->iid))
			continue;
		m->ok &= cs->n_frame_ids > 0;
		for (j = 0; j < cs->n_frame_ids; j++)
			known(m, cs->frame_ids[j], m->nframe);
		m->stack[m->nstack - 1] =
			malloc((cs->n_frame_ids + 1) * sizeof(uint64_t));
		memcpy(m->stack[m->nstack - 1], cs->frame_ids,
		       cs->n_frame_ids * sizeof(uint64_t));
		m->stack_n[m->nstack - 1] = cs->n_frame_ids;
	}
}

/* (the payloads are a union: look at data_case) */
static bool is_sample(const Packet *p)
{
	return p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE;
}

static bool is_tree(const Packet *p)
{
	return p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
}

static void model_packet(struct model *m, const Packet *p)
{
	m->ok &= p->trusted_packet_sequence_id == SEQ && p->has_timestamp;
	/* flags: CLEARED on the first packet only, NEEDS on later samples */
	if (m->packets == 0)
		m->ok &= p->has_sequence_flags &&
			 p->sequence_flags == FLAG_CLEARED;
	else if (is_sample(p))
		m->ok &= p->has_sequence_flags &&
			 p->sequence_flags == FLAG_NEEDS;
	else
		m->ok &= !p->has_sequence_flags;
	if (p->interned_data)
		model_interned(m, p->interned_data);
	if (is_sample(p) && p->perf_sample->has_callstack_iid)
		known(m, p->perf_sample->callstack_iid, m->nstack);
	m->samples += is_sample(p);
	m->trees += is_tree(p);
	m->packets++;
}

static void model_run(struct model *m, const struct coll *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		Packet *p = coll_unpack(c, i);

		m->ok &= p != NULL && c->p[i].seq == SEQ;
		if (p)
			model_packet(m, p);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
}

/* "sym@dso;..." of callstack iid, root first. */
static void stack_str(const struct model *m, uint64_t iid, char *out,
		      size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	if (iid < 1 || iid > m->nstack)
		return;
	for (i = 0; i < m->stack_n[iid - 1] && len < size; i++) {
		uint64_t f = m->stack[iid - 1][i] - 1;
		uint64_t path = m->map_path[m->frame_map[f] - 1];

		len += (size_t)snprintf(out + len, size - len, "%s%s@%s",
					i ? ";" : "", m->func[m->frame_fn[f] - 1],
					m->path[path - 1]);
	}
}

/* The same from a parsed sample (frames leaf first). */
static void sample_str(const struct perf_sample *s, char *out,
		       size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = s->nframes; i-- > 0 && len < size;)
		len += (size_t)snprintf(out + len, size - len, "%s%s@%s",
					i + 1 < s->nframes ? ";" : "",
					s->frames[i].symbol, s->frames[i].dso);
}

/* ---- samples ---- */

#define F(sym, lib) { .address = 0x1000, .symbol = sym, .dso = lib }

static const struct perf_frame stack1[] = {
	F("A", "/bin/app"), F("B", "/bin/app"), F("main", "/bin/app"),
	F("__libc_start_main", "/lib/libc.so.6"),
};
static const struct perf_frame stack3[] = {
	F("C", "/bin/app"), F("B", "/bin/app"), F("main", "/bin/app"),
	F("__libc_start_main", "/lib/libc.so.6"),
};
static const struct perf_frame stack4[] = {
	F("read_zero", "[kernel.kallsyms]"), F("ksys_read", "[kernel.kallsyms]"),
	F("A", "/bin/app"),
};

static struct perf_sample mk(const char *comm, int32_t pid, int32_t tid,
				  int32_t cpu,
				  const struct perf_frame *frames,
				  size_t n)
{
	struct perf_sample s;

	memset(&s, 0, sizeof(s));
	s.comm = comm;
	s.pid = pid;
	s.tid = tid;
	s.cpu = cpu;
	s.event = "";
	s.frames = frames;
	s.nframes = n;
	return s;
}

#define N(a) (sizeof(a) / sizeof(a[0]))

/* tid 11 belongs to process 10; nothing else is known. */
static int32_t resolve(void *ctx, int32_t tid)
{
	(*(int *)ctx)++;
	return tid == 11 ? 10 : -1;
}

static struct perf_samples *new_enc(struct coll *c, bool names, int *calls)
{
	struct perf_samples_opts o;

	memset(&o, 0, sizeof(o));
	o.seq_id = SEQ;
	o.thread_names = o.process_names = names;
	o.resolve_pid = resolve;
	o.resolve_ctx = calls;
	return perf_samples_new(&c->sink, &o);
}

static void check_sample(const Packet *p, uint64_t ts, uint32_t pid,
			 uint32_t tid, int32_t cpu, int mode)
{
	const PerfSample *ps = is_sample(p) ? p->perf_sample : NULL;

	CHECK(ps != NULL);
	if (!ps)
		return;
	CHECK_EQ_I64(p->timestamp, ts);
	CHECK(ps->has_pid && ps->has_tid);
	CHECK_EQ_I64(ps->pid, pid);
	CHECK_EQ_I64(ps->tid, tid);
	CHECK_EQ_I64(ps->has_cpu, cpu >= 0);
	if (cpu >= 0)
		CHECK_EQ_I64(ps->cpu, cpu);
	CHECK_EQ_I64(ps->has_cpu_mode, mode != 0);
	CHECK_EQ_I64(ps->cpu_mode, mode);
	CHECK(!ps->has_timebase_count);
}

/* Interned entries in packet i, per table: functions, paths, mappings,
 * frames, callstacks. */
static void check_new(const struct coll *c, size_t i, size_t fn, size_t paths,
		      size_t maps, size_t frames, size_t stacks)
{
	Packet *p = coll_unpack(c, i);
	const InternedData *d = p ? p->interned_data : NULL;

	CHECK(p != NULL);
	if (!fn && !paths && !maps && !frames && !stacks) {
		CHECK(p && !d);
	} else if (d) {
		CHECK_EQ_I64(d->n_function_names, fn);
		CHECK_EQ_I64(d->n_mapping_paths, paths);
		CHECK_EQ_I64(d->n_mappings, maps);
		CHECK_EQ_I64(d->n_frames, frames);
		CHECK_EQ_I64(d->n_callstacks, stacks);
	} else {
		CHECK(d != NULL);
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
}

static void test_interning(void)
{
	struct coll c;
	struct model m;
	int calls = 0;
	struct perf_samples *e;
	struct perf_sample s[6] = {
		mk("app", 10, 10, 1, stack1, N(stack1)),
		mk("app", 10, 10, 2, stack1, N(stack1)),  /* same stack */
		mk("app", 10, 10, -1, stack3, N(stack3)), /* one new leaf */
		mk("worker", -1, 11, 0, stack4, N(stack4)), /* pid resolved */
		mk("app", 10, 10, 1, stack1, N(stack1)),
		mk("app", 10, 10, 1, NULL, 0),            /* no frames */
	};
	const struct perf_samples_stats *st;
	char got[512];
	size_t i;
	Packet *p;

	coll_init(&c);
	e = new_enc(&c, false, &calls);
	CHECK(e != NULL);
	for (i = 0; i < N(s); i++)
		CHECK_EQ_I64(perf_samples_add(e, &s[i], 1000 + i), 0);
	CHECK_EQ_I64(c.n, N(s));
	CHECK_EQ_I64(calls, 1);

	model_init(&m);
	model_run(&m, &c);
	CHECK(m.ok);
	CHECK_EQ_I64(m.samples, 6);
	check_new(&c, 0, 4, 2, 2, 4, 1);
	check_new(&c, 1, 0, 0, 0, 0, 0); /* repeated callstack: nothing new */
	check_new(&c, 2, 1, 0, 0, 1, 1);
	check_new(&c, 3, 2, 1, 1, 2, 1);
	check_new(&c, 4, 0, 0, 0, 0, 0);
	check_new(&c, 5, 0, 0, 0, 0, 0);

	st = perf_samples_stats(e);
	CHECK_EQ_I64(st->samples, 6);
	CHECK_EQ_I64(st->packets, 6);
	CHECK_EQ_I64(st->function_names, 7);
	CHECK_EQ_I64(st->mappings, 3);
	CHECK_EQ_I64(st->frames, 7);
	CHECK_EQ_I64(st->callstacks, 3);
	CHECK_EQ_I64(st->pid_from_tid, 0);
	CHECK_EQ_I64(st->pid_resolved, 1);
	CHECK_EQ_I64(st->thread_names + st->process_names, 0);

	/* root first, and the repeated samples point at the same callstack */
	for (i = 0; i < N(s); i++) {
		char want[512];

		p = coll_unpack(&c, i);
		stack_str(&m, p->perf_sample->callstack_iid, got, sizeof(got));
		sample_str(&s[i], want, sizeof(want));
		CHECK_STR(got, want);
		CHECK_EQ_I64(p->perf_sample->has_callstack_iid, i != 5);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	stack_str(&m, 1, got, sizeof(got));
	CHECK_STR(got, "__libc_start_main@/lib/libc.so.6;main@/bin/app;"
		       "B@/bin/app;A@/bin/app");

	enum { USER = PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_USER,
	       KERNEL = PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_KERNEL };
	p = coll_unpack(&c, 0);
	check_sample(p, 1000, 10, 10, 1, USER);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 2);
	check_sample(p, 1002, 10, 10, -1, USER);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 3);
	check_sample(p, 1003, 10, 11, 0, KERNEL);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	p = coll_unpack(&c, 5);
	check_sample(p, 1005, 10, 10, 1, 0);
	perfetto__protos__trace_packet__free_unpacked(p, NULL);

	model_free(&m);
	perf_samples_free(e);
	coll_free(&c);
}

/* The ProcessTree packets that name threads and main threads. */
static void check_tree(const struct coll *c, size_t i, int32_t tid,
		       int32_t tgid, const char *comm, bool process)
{
	Packet *p = coll_unpack(c, i);
	const Perfetto__Protos__ProcessTree *t =
		p && is_tree(p) ? p->process_tree : NULL;

	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_I64(t->n_threads, 1);
	if (t->n_threads == 1) {
		CHECK_EQ_I64(t->threads[0]->tid, tid);
		CHECK_EQ_I64(t->threads[0]->tgid, tgid);
		CHECK_STR(t->threads[0]->name, comm);
	}
	CHECK_EQ_I64(t->n_processes, process);
	if (process && t->n_processes == 1) {
		CHECK_EQ_I64(t->processes[0]->pid, tid);
		CHECK_EQ_I64(t->processes[0]->n_cmdline, 1);
		CHECK_STR(t->processes[0]->cmdline[0], comm);
		CHECK(t->processes[0]->cmdline_is_comm);
	}
out:
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
}

static void test_names(void)
{
	struct coll c;
	struct model m;
	int calls = 0;
	struct perf_samples *e;
	struct perf_sample s[] = {
		mk("app", 10, 10, 0, stack1, 1),       /* 0: sample, 1: tree */
		mk("app", 10, 10, 0, stack1, 1),       /* 2 */
		mk("worker", -1, 11, 0, stack1, 1),    /* 3, 4: thread only */
		mk("lonely", -1, 12, 0, stack1, 1),    /* 5, 6: pid = tid */
		mk("app2", 10, 10, 0, stack1, 1),      /* 7, 8: renamed */
		mk("", 13, 13, 0, stack1, 1),          /* 9: no name */
		mk("swapper", 0, 0, 0, stack1, 1),     /* 10: idle, no name */
	};
	size_t i;

	coll_init(&c);
	e = new_enc(&c, true, &calls);
	for (i = 0; i < N(s); i++)
		CHECK_EQ_I64(perf_samples_add(e, &s[i], 50 + i), 0);
	CHECK_EQ_I64(c.n, 11);
	model_init(&m);
	model_run(&m, &c);
	CHECK(m.ok);
	CHECK_EQ_I64(m.samples, 7);
	CHECK_EQ_I64(m.trees, 4);
	check_tree(&c, 1, 10, 10, "app", true);
	check_tree(&c, 4, 11, 10, "worker", false);
	check_tree(&c, 6, 12, 12, "lonely", true);
	check_tree(&c, 8, 10, 10, "app2", true);
	CHECK_EQ_I64(perf_samples_stats(e)->pid_from_tid, 1);
	CHECK_EQ_I64(perf_samples_stats(e)->pid_resolved, 1);
	CHECK_EQ_I64(calls, 2); /* only the samples without a pid ask */
	CHECK_EQ_I64(perf_samples_stats(e)->thread_names, 4);
	CHECK_EQ_I64(perf_samples_stats(e)->process_names, 3);
	CHECK_EQ_I64(perf_samples_stats(e)->packets, 11);
	model_free(&m);
	perf_samples_free(e);
	coll_free(&c);
}

static void test_clock_id(void)
{
	struct coll c;
	struct perf_samples_opts o;
	struct perf_samples *e;
	struct perf_sample s = mk("app", 10, 10, 0, stack1, N(stack1));
	Packet *p;

	coll_init(&c);
	memset(&o, 0, sizeof(o));
	o.seq_id = SEQ;
	o.timestamp_clock_id = 3;
	o.thread_names = true;
	e = perf_samples_new(&c.sink, &o);
	CHECK_EQ_I64(perf_samples_add(e, &s, 77), 0);
	CHECK_EQ_I64(c.n, 2);
	for (size_t i = 0; i < c.n; i++) {
		p = coll_unpack(&c, i);
		CHECK(p->has_timestamp_clock_id && p->timestamp_clock_id == 3);
		CHECK_EQ_I64(p->timestamp, 77);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	perf_samples_free(e);
	coll_free(&c);
}

static void test_errors(void)
{
	struct coll c;
	struct perf_samples_opts o;
	struct perf_samples *e;
	struct perf_sample s = mk("app", 10, 10, 0, stack1, N(stack1));
	struct perf_sample bad = mk("app", 10, -1, 0, stack1, N(stack1));
	int calls = 0;

	coll_init(&c);
	memset(&o, 0, sizeof(o));
	errno = 0;
	CHECK(perf_samples_new(&c.sink, &o) == NULL); /* seq_id 0 */
	CHECK_EQ_I64(errno, EINVAL);
	o.seq_id = SEQ;
	CHECK(perf_samples_new(NULL, &o) == NULL);
	perf_samples_free(NULL);

	e = new_enc(&c, true, &calls);
	CHECK_EQ_I64(perf_samples_add(e, &bad, 1), -EINVAL); /* not sticky */
	CHECK_EQ_I64(perf_samples_add(e, &s, 2), 0);
	c.fail = -ENOSPC;
	s.frames = stack3;
	CHECK_EQ_I64(perf_samples_add(e, &s, 3), -ENOSPC);
	c.fail = 0;
	CHECK_EQ_I64(perf_samples_add(e, &s, 4), -ENOSPC); /* sticky */
	CHECK_EQ_I64(c.n, 2);
	perf_samples_free(e);

	/* failing on the very first packet: nothing written, still sticky */
	coll_free(&c);
	coll_init(&c);
	c.fail = -EIO;
	e = new_enc(&c, false, &calls);
	CHECK_EQ_I64(perf_samples_add(e, &s, 1), -EIO);
	c.fail = 0;
	CHECK_EQ_I64(perf_samples_add(e, &s, 2), -EIO);
	CHECK_EQ_I64(c.n, 0);
	perf_samples_free(e);
	coll_free(&c);
}

/* ---- a real perf recording, end to end ---- */

static size_t count_distinct(char **v, size_t n)
{
	size_t i, j, d = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(v[i], v[j]); j++)
			;
		d += j == i;
	}
	return d;
}

static void test_fixture(void)
{
	struct perf_text *pt = perf_text_open("tests/fixtures/perf/callchain.txt");
	struct coll c;
	struct model m;
	struct perf_samples *e;
	struct perf_sample s;
	char *syms[MAXI], *dsos[MAXI], *pairs[MAXI], *names[MAXI];
	size_t nsyms = 0, ndsos = 0, npairs = 0, i, bytes = 0, nsamples = 0;
	bool same = true;
	char want[4096], got[4096];
	int calls = 0, k = 0;

	CHECK(pt != NULL);
	if (!pt)
		return;
	coll_init(&c);
	model_init(&m);
	e = new_enc(&c, true, &calls);
	while (perf_text_next(pt, &s) > 0) {
		size_t first = c.n;

		CHECK_EQ_I64(perf_samples_add(e, &s, (uint64_t)s.ts_ns), 0);
		names[k] = malloc(strlen(s.comm) + 16);
		sprintf(names[k], "%d %s", s.tid, s.comm);
		for (i = 0; i < s.nframes && npairs < MAXI; i++) {
			syms[nsyms++] = strdup(s.frames[i].symbol);
			dsos[ndsos++] = strdup(s.frames[i].dso);
			pairs[npairs] = malloc(strlen(s.frames[i].symbol) +
					       strlen(s.frames[i].dso) + 2);
			sprintf(pairs[npairs++], "%s@%s", s.frames[i].symbol,
				s.frames[i].dso);
		}
		/* decode this sample's packets now, while s is valid */
		for (i = first; i < c.n; i++) {
			Packet *p = coll_unpack(&c, i);

			model_packet(&m, p);
			if (is_sample(p)) {
				stack_str(&m, p->perf_sample->callstack_iid, got,
					  sizeof(got));
				sample_str(&s, want, sizeof(want));
				same &= !strcmp(got, want) &&
					p->timestamp == (uint64_t)s.ts_ns &&
					p->perf_sample->tid == (uint32_t)s.tid;
				nsamples++;
			}
			bytes += c.p[i].len;
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
		}
		k++;
	}
	CHECK(same);
	CHECK(m.ok);
	CHECK_EQ_I64(k, 403);
	CHECK_EQ_I64(nsamples, 403);
	/* one entry per distinct value, whatever the number of samples */
	CHECK_EQ_I64(m.nfunc, count_distinct(syms, nsyms));
	CHECK_EQ_I64(m.nmap, count_distinct(dsos, ndsos));
	CHECK_EQ_I64(m.nframe, count_distinct(pairs, npairs));
	/* the counts of tests/fixtures/perf/README.md */
	CHECK_EQ_I64(m.nfunc, 21);
	CHECK_EQ_I64(m.nmap, 4);
	CHECK_EQ_I64(m.nframe, 21);
	CHECK_EQ_I64(m.nstack, 14);
	/* no pid in this file: each thread is named once as its own process */
	CHECK_EQ_I64(m.trees, count_distinct(names, 403));
	CHECK_EQ_I64(perf_samples_stats(e)->pid_from_tid, 403);
	CHECK_EQ_I64(perf_samples_stats(e)->pid_resolved, 0);
	CHECK_EQ_I64(calls, 403);
	CHECK(bytes < 403 * 40); /* most samples are tiny packets */
	fprintf(stderr, "  callchain.txt: %zu packets, %zu bytes, %zu "
			"functions, %zu mappings, %zu frames, %zu callstacks\n",
		c.n, bytes, m.nfunc, m.nmap, m.nframe, m.nstack);
	for (i = 0; i < (size_t)k; i++)
		free(names[i]);
	for (i = 0; i < npairs; i++) {
		free(syms[i]);
		free(dsos[i]);
		free(pairs[i]);
	}
	model_free(&m);
	perf_samples_free(e);
	coll_free(&c);
	perf_text_close(pt);
}

int main(void)
{
	RUN(test_interning);
	RUN(test_names);
	RUN(test_clock_id);
	RUN(test_errors);
	RUN(test_fixture);
	return unit_finish();
}
