/* Encoder of perf samples into PerfSample packets (see perf_samples.h): one
 * generic interning hash table (used for function names, dsos, frames,
 * callstacks and named threads), the entries that are new in the packet
 * being built, and the protobuf-c messages assembled from them. */
#include "encode/perf_samples.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "encode/packet.h"
#include "perfetto/trace.pb-c.h"
#include "util/grow.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__InternedData InternedData;
typedef Perfetto__Protos__InternedString IString;
typedef Perfetto__Protos__Mapping Mapping;
typedef Perfetto__Protos__Frame Frame;
typedef Perfetto__Protos__Callstack Callstack;
typedef Perfetto__Protos__PerfSample PerfSample;
typedef Perfetto__Protos__ProcessTree ProcessTree;
typedef Perfetto__Protos__Profiling__CpuMode CpuMode;

/* A growable array. */
struct vec {
	void *p;
	size_t n, cap;
};

/* Interning table: key bytes -> iid (1, 2, ... in insertion order). Keys are
 * stored 8-byte aligned so that a callstack key reads as uint64_t[]. */
struct itab {
	uint32_t *slots; /* entry index + 1; 0 = empty */
	size_t nslots;   /* power of two, at least twice the entries */
	struct vec ents; /* struct ient */
	struct vec keys; /* bytes */
};

struct ient {
	uint64_t hash;
	size_t off, len;
};

/* The tables whose new entries go into InternedData. */
enum kind { K_FUNC, K_PATH, K_BUILD, K_MAP, K_FRAME, K_STACK, K_COUNT };

/* Keys of the mapping and frame tables. */
enum { MK_PATH, MK_BUILD, MK_START, MK_END, MK_START_OFF, MK_EXACT_OFF,
       MK_LOAD_BIAS, MK_COUNT };
enum { FK_MAP, FK_FUNC, FK_REL_PC, FK_COUNT };

struct perf_samples {
	struct packet_sink *sink;
	struct perf_samples_opts o;
	struct itab tab[K_COUNT];
	struct vec pend[K_COUNT]; /* uint64_t iids new in this packet */
	struct itab threads, procs; /* (id, comm) already named */
	struct vec stack;           /* uint64_t frame iids, root first */
	struct vec namekey;         /* bytes */
	struct vec strs, pstrs, maps, pmaps, frames, pframes, stacks, pstacks;
	bool started;
	int err;
	struct perf_samples_stats st;
};

/* ---- growable arrays ---- */

static int vec_reserve(struct vec *v, size_t need, size_t size)
{
	return grow_array(&v->p, &v->cap, need, size, 16);
}

/* Room for n messages of `size` bytes and n pointers to them. */
static int msg_reserve(struct vec *objs, struct vec *ptrs, size_t n,
		       size_t size)
{
	int err = vec_reserve(objs, n, size);

	return err ? err : vec_reserve(ptrs, n, sizeof(void *));
}

/* ---- interning table ---- */

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *k = key;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (len--) {
		h ^= *k++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static const void *itab_key(const struct itab *t, size_t idx, size_t *len)
{
	const struct ient *en = (const struct ient *)t->ents.p + idx;

	*len = en->len;
	return (const char *)t->keys.p + en->off;
}

static size_t itab_slot(const uint32_t *slots, size_t nslots, uint64_t hash)
{
	size_t i = (size_t)hash & (nslots - 1);

	while (slots[i])
		i = (i + 1) & (nslots - 1);
	return i;
}

static int itab_grow(struct itab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 256, i;
	const struct ient *en = t->ents.p;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->ents.n; i++)
		slots[itab_slot(slots, n, en[i].hash)] = (uint32_t)(i + 1);
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static int itab_add(struct itab *t, const void *key, size_t len,
		    uint64_t hash, size_t slot)
{
	size_t off = (t->keys.n + 7) & ~(size_t)7;
	struct ient *en;
	int err;

	if (t->ents.n >= UINT32_MAX - 1)
		return -ENOMEM;
	err = vec_reserve(&t->keys, off + len + 1, 1); /* never NULL */
	if (!err)
		err = vec_reserve(&t->ents, t->ents.n + 1, sizeof(*en));
	if (err)
		return err;
	if (len)
		memcpy((char *)t->keys.p + off, key, len);
	t->keys.n = off + len;
	en = (struct ient *)t->ents.p + t->ents.n++;
	en->hash = hash;
	en->off = off;
	en->len = len;
	t->slots[slot] = (uint32_t)t->ents.n;
	return 0;
}

/* *iid = the key's iid; *is_new when it was added now. */
static int itab_intern(struct itab *t, const void *key, size_t len,
		       uint64_t *iid, bool *is_new)
{
	uint64_t hash = hash_bytes(key, len);
	size_t i, klen;
	int err;

	if ((t->ents.n + 1) * 2 > t->nslots && (err = itab_grow(t)))
		return err;
	for (i = (size_t)hash & (t->nslots - 1); t->slots[i];
	     i = (i + 1) & (t->nslots - 1)) {
		size_t idx = t->slots[i] - 1;
		const void *k = itab_key(t, idx, &klen);

		if (((const struct ient *)t->ents.p)[idx].hash == hash &&
		    klen == len && (!len || !memcmp(k, key, len))) {
			*iid = idx + 1;
			*is_new = false;
			return 0;
		}
	}
	err = itab_add(t, key, len, hash, i);
	if (err)
		return err;
	*iid = t->ents.n;
	*is_new = true;
	return 0;
}

static void itab_free(struct itab *t)
{
	free(t->slots);
	free(t->ents.p);
	free(t->keys.p);
}

/* ---- interning of a sample's callstack ---- */

static uint64_t *stat_of(struct perf_samples *e, enum kind k)
{
	uint64_t *const counters[K_COUNT] = {
		[K_FUNC] = &e->st.function_names,
		[K_PATH] = &e->st.mapping_paths,
		[K_BUILD] = &e->st.build_ids,
		[K_MAP] = &e->st.mappings,
		[K_FRAME] = &e->st.frames,
		[K_STACK] = &e->st.callstacks,
	};

	return counters[k];
}

/* Interns in table k; a new entry is queued for this packet's InternedData. */
static int intern(struct perf_samples *e, enum kind k, const void *key,
		  size_t len, uint64_t *iid)
{
	struct vec *pend = &e->pend[k];
	bool is_new;
	int err = itab_intern(&e->tab[k], key, len, iid, &is_new);

	if (err || !is_new)
		return err;
	err = vec_reserve(pend, pend->n + 1, sizeof(uint64_t));
	if (err)
		return err;
	((uint64_t *)pend->p)[pend->n++] = *iid;
	(*stat_of(e, k))++;
	return 0;
}

/* Mappings are interned per (path, build id, range, offsets): a dso
 * alone is a mapping with a name and nothing else. */
static int intern_mapping(struct perf_samples *e, const struct perf_frame *f,
			  uint64_t *iid)
{
	const struct perf_mapping *m = f->map;
	const char *path = m ? m->path : f->dso;
	uint64_t key[MK_COUNT] = { 0 };
	int err = intern(e, K_PATH, path, strlen(path), &key[MK_PATH]);

	if (!err && m && m->build_id_len)
		err = intern(e, K_BUILD, m->build_id, m->build_id_len,
			     &key[MK_BUILD]);
	if (err)
		return err;
	if (m) {
		key[MK_START] = m->start;
		key[MK_END] = m->end;
		key[MK_START_OFF] = m->start_offset;
		key[MK_EXACT_OFF] = m->exact_offset;
		key[MK_LOAD_BIAS] = m->load_bias;
	}
	return intern(e, K_MAP, key, sizeof(key), iid);
}

/* Frames are interned per (mapping, function, rel_pc). */
static int intern_frame(struct perf_samples *e, const struct perf_frame *f,
			uint64_t *iid)
{
	uint64_t key[FK_COUNT] = { 0 };
	int err = intern_mapping(e, f, &key[FK_MAP]);

	if (!err)
		err = intern(e, K_FUNC, f->symbol, strlen(f->symbol),
			     &key[FK_FUNC]);
	if (!err && f->map)
		key[FK_REL_PC] = f->rel_pc;
	if (!err)
		err = intern(e, K_FRAME, key, sizeof(key), iid);
	return err;
}

/* *iid = the callstack of s, root first; 0 when s has no frames. */
static int intern_stack(struct perf_samples *e,
			const struct perf_sample *s, uint64_t *iid)
{
	uint64_t *ids;
	size_t i, n = s->nframes;
	int err;

	*iid = 0;
	if (!n)
		return 0;
	err = vec_reserve(&e->stack, n, sizeof(*ids));
	if (err)
		return err;
	ids = e->stack.p;
	for (i = 0; i < n && !err; i++)
		err = intern_frame(e, &s->frames[n - 1 - i], &ids[i]);
	return err ? err : intern(e, K_STACK, ids, n * sizeof(*ids), iid);
}

/* ---- InternedData from the queued entries ---- */

static size_t pending(const struct perf_samples *e, enum kind k)
{
	return e->pend[k].n;
}

static const uint64_t *pending_iids(const struct perf_samples *e, enum kind k)
{
	return e->pend[k].p;
}

/* Key of an entry of table k by iid. */
static const void *key_of(const struct perf_samples *e, enum kind k,
			  uint64_t iid, size_t *len)
{
	return itab_key(&e->tab[k], (size_t)(iid - 1), len);
}

/* The queued strings of table k into o[0..n), *count = n. */
static IString **fill_strings(const struct perf_samples *e, enum kind k,
			      IString *o, IString **pp, size_t *count)
{
	size_t i, n = pending(e, k);

	for (i = 0; i < n; i++) {
		uint64_t iid = pending_iids(e, k)[i];

		perfetto__protos__interned_string__init(&o[i]);
		o[i].has_iid = 1;
		o[i].iid = iid;
		o[i].has_str = 1;
		o[i].str.data = (uint8_t *)key_of(e, k, iid, &o[i].str.len);
		pp[i] = &o[i];
	}
	*count = n;
	return pp;
}

/* Sets a Mapping field when not 0 (a dso alone has its name only). */
#define MAP_FIELD(m, f, v)                                                     \
	do {                                                                   \
		(m)->has_##f = (v) != 0;                                       \
		(m)->f = (v);                                                  \
	} while (0)

/* The queued mappings, each named by one mapping_paths entry. */
static int fill_mappings(struct perf_samples *e, InternedData *d)
{
	size_t i, len, n = pending(e, K_MAP);
	int err = msg_reserve(&e->maps, &e->pmaps, n, sizeof(Mapping));
	Mapping *o = e->maps.p, **pp = e->pmaps.p;

	for (i = 0; !err && i < n; i++) {
		uint64_t iid = pending_iids(e, K_MAP)[i];
		/* stored 8-byte aligned */
		uint64_t *key = (uint64_t *)key_of(e, K_MAP, iid, &len);

		perfetto__protos__mapping__init(&o[i]);
		o[i].has_iid = 1;
		o[i].iid = iid;
		o[i].n_path_string_ids = 1;
		o[i].path_string_ids = &key[MK_PATH];
		MAP_FIELD(&o[i], build_id, key[MK_BUILD]);
		MAP_FIELD(&o[i], start, key[MK_START]);
		MAP_FIELD(&o[i], end, key[MK_END]);
		MAP_FIELD(&o[i], start_offset, key[MK_START_OFF]);
		MAP_FIELD(&o[i], exact_offset, key[MK_EXACT_OFF]);
		MAP_FIELD(&o[i], load_bias, key[MK_LOAD_BIAS]);
		pp[i] = &o[i];
	}
	d->n_mappings = n;
	d->mappings = pp;
	return err;
}

static int fill_frames(struct perf_samples *e, InternedData *d)
{
	size_t i, len, n = pending(e, K_FRAME);
	int err = msg_reserve(&e->frames, &e->pframes, n, sizeof(Frame));
	Frame *o = e->frames.p, **pp = e->pframes.p;
	uint64_t key[FK_COUNT];

	for (i = 0; !err && i < n; i++) {
		uint64_t iid = pending_iids(e, K_FRAME)[i];

		memcpy(key, key_of(e, K_FRAME, iid, &len), sizeof(key));
		perfetto__protos__frame__init(&o[i]);
		o[i].has_iid = 1;
		o[i].iid = iid;
		o[i].has_mapping_id = 1;
		o[i].mapping_id = key[FK_MAP];
		o[i].has_function_name_id = 1;
		o[i].function_name_id = key[FK_FUNC];
		/* required with a mapping; 0 for a dso alone: per function */
		o[i].has_rel_pc = 1;
		o[i].rel_pc = key[FK_REL_PC];
		pp[i] = &o[i];
	}
	d->n_frames = n;
	d->frames = pp;
	return err;
}

static int fill_callstacks(struct perf_samples *e, InternedData *d)
{
	size_t i, len, n = pending(e, K_STACK);
	int err = msg_reserve(&e->stacks, &e->pstacks, n, sizeof(Callstack));
	Callstack *o = e->stacks.p, **pp = e->pstacks.p;

	for (i = 0; !err && i < n; i++) {
		uint64_t iid = pending_iids(e, K_STACK)[i];
		const void *key = key_of(e, K_STACK, iid, &len);

		perfetto__protos__callstack__init(&o[i]);
		o[i].has_iid = 1;
		o[i].iid = iid;
		o[i].n_frame_ids = len / sizeof(uint64_t);
		o[i].frame_ids = (uint64_t *)key; /* stored 8-byte aligned */
		pp[i] = &o[i];
	}
	d->n_callstacks = n;
	d->callstacks = pp;
	return err;
}

/* Every entry queued for this packet; false if there is none. */
static int build_interned(struct perf_samples *e, InternedData *d, bool *any)
{
	size_t nf = pending(e, K_FUNC), nd = pending(e, K_PATH),
	       nb = pending(e, K_BUILD);
	IString *strs;
	IString **pstrs;
	int err;

	*any = nf || nd || nb || pending(e, K_MAP) || pending(e, K_FRAME) ||
	       pending(e, K_STACK);
	if (!*any)
		return 0;
	err = msg_reserve(&e->strs, &e->pstrs, nf + nd + nb, sizeof(IString));
	if (err)
		return err;
	strs = e->strs.p;
	pstrs = e->pstrs.p;
	d->function_names =
		fill_strings(e, K_FUNC, strs, pstrs, &d->n_function_names);
	d->mapping_paths = fill_strings(e, K_PATH, strs + nf, pstrs + nf,
					&d->n_mapping_paths);
	d->build_ids = fill_strings(e, K_BUILD, strs + nf + nd,
				    pstrs + nf + nd, &d->n_build_ids);
	err = fill_mappings(e, d);
	if (!err)
		err = fill_frames(e, d);
	return err ? err : fill_callstacks(e, d);
}

/* ---- packets ---- */

/* The first packet of the sequence clears its incremental state. */
static int emit(struct perf_samples *e, Packet *p, uint64_t ts)
{
	int err;

	p->has_timestamp = 1;
	p->timestamp = ts;
	if (e->o.timestamp_clock_id) {
		p->has_timestamp_clock_id = 1;
		p->timestamp_clock_id = e->o.timestamp_clock_id;
	}
	if (e->o.machine_id) {
		p->has_machine_id = 1;
		p->machine_id = e->o.machine_id;
	}
	Perfetto__Protos__TracePacketDefaults defs =
		PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Perfetto__Protos__PerfSampleDefaults psd =
		PERFETTO__PROTOS__PERF_SAMPLE_DEFAULTS__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb =
		PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	Perfetto__Protos__PerfEvents__Tracepoint tp =
		PERFETTO__PROTOS__PERF_EVENTS__TRACEPOINT__INIT;

	if (!e->started) {
		p->has_sequence_flags = 1;
		p->sequence_flags = SEQ_FLAG_INCREMENTAL_STATE_CLEARED;
		if (e->o.timebase_tracepoint) {
			tp.name = (char *)e->o.timebase_tracepoint;
			tb.event_case =
				PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_TRACEPOINT;
			tb.tracepoint = &tp;
			psd.timebase = &tb;
			defs.perf_sample_defaults = &psd;
			p->trace_packet_defaults = &defs;
		}
	}
	err = packet_emit(e->sink, e->o.seq_id, p);
	if (err)
		return err;
	e->started = true;
	e->st.packets++;
	return 0;
}

static CpuMode cpu_mode(const struct perf_sample *s)
{
	const char *dso = s->nframes ? s->frames[0].dso : "";

	if (!s->nframes)
		return PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_UNKNOWN;
	if (!strncmp(dso, "[kernel.", 8) || !strcmp(dso, "/kernel"))
		return PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_KERNEL;
	if (!strncmp(dso, "[guest.kernel.", 14))
		return PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_GUEST_KERNEL;
	return PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_USER;
}

static int emit_sample(struct perf_samples *e, const struct perf_sample *s,
		       int32_t pid, uint64_t ts, uint64_t callstack)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;
	InternedData d = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	bool any;
	int err = build_interned(e, &d, &any);

	if (err)
		return err;
	ps.has_pid = ps.has_tid = 1;
	ps.pid = (uint32_t)pid;
	ps.tid = (uint32_t)s->tid;
	ps.has_cpu = s->cpu >= 0;
	ps.cpu = s->cpu >= 0 ? (uint32_t)s->cpu : 0;
	ps.has_callstack_iid = callstack != 0;
	ps.callstack_iid = callstack;
	ps.cpu_mode = cpu_mode(s);
	ps.has_cpu_mode =
		ps.cpu_mode != PERFETTO__PROTOS__PROFILING__CPU_MODE__MODE_UNKNOWN;
	ps.has_unwind_error = s->has_unwind_error;
	ps.unwind_error = s->unwind_error;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE;
	pkt.perf_sample = &ps;
	pkt.interned_data = any ? &d : NULL;
	pkt.has_sequence_flags = 1;
	pkt.sequence_flags =
		PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	err = emit(e, &pkt, ts);
	if (!err)
		e->st.samples++;
	return err;
}

/* Records (id, comm) in t; *is_new when it was not there. */
static int note_name(struct perf_samples *e, struct itab *t, int32_t id,
		     const char *comm, bool *is_new)
{
	size_t len = strlen(comm);
	uint64_t iid;
	int err = vec_reserve(&e->namekey, sizeof(id) + len, 1);

	if (err)
		return err;
	memcpy(e->namekey.p, &id, sizeof(id));
	memcpy((char *)e->namekey.p + sizeof(id), comm, len);
	return itab_intern(t, e->namekey.p, sizeof(id) + len, &iid, is_new);
}

/* A ProcessTree packet naming the thread (and process) when new. */
static int emit_names(struct perf_samples *e, const struct perf_sample *s,
		      int32_t pid, uint64_t ts)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	ProcessTree tree = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	Perfetto__Protos__ProcessTree__Thread th =
		PERFETTO__PROTOS__PROCESS_TREE__THREAD__INIT, *pth = &th;
	Perfetto__Protos__ProcessTree__Process pr =
		PERFETTO__PROTOS__PROCESS_TREE__PROCESS__INIT, *ppr = &pr;
	char *cmdline[1] = { (char *)s->comm };
	bool new_thread = false, new_proc = false;
	int err = 0;

	if (!s->comm[0])
		return 0;
	if (e->o.thread_names && s->tid > 0)
		err = note_name(e, &e->threads, s->tid, s->comm, &new_thread);
	if (!err && e->o.process_names && pid > 0 && pid == s->tid)
		err = note_name(e, &e->procs, pid, s->comm, &new_proc);
	if (err || (!new_thread && !new_proc))
		return err;
	th.has_tid = th.has_tgid = 1;
	th.tid = s->tid;
	th.tgid = pid;
	th.name = (char *)s->comm;
	pr.has_pid = pr.has_cmdline_is_comm = 1;
	pr.pid = pid;
	pr.n_cmdline = 1;
	pr.cmdline = cmdline;
	pr.cmdline_is_comm = 1;
	tree.n_threads = new_thread;
	tree.threads = &pth;
	tree.n_processes = new_proc;
	tree.processes = &ppr;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
	pkt.process_tree = &tree;
	err = emit(e, &pkt, ts);
	if (!err) {
		e->st.thread_names += new_thread;
		e->st.process_names += new_proc;
	}
	return err;
}

static int32_t sample_pid(struct perf_samples *e,
			  const struct perf_sample *s)
{
	int32_t pid = s->pid;

	if (pid >= 0)
		return pid;
	if (e->o.resolve_pid)
		pid = e->o.resolve_pid(e->o.resolve_ctx, s->tid);
	if (pid >= 0) {
		e->st.pid_resolved++;
		return pid;
	}
	e->st.pid_from_tid++;
	return s->tid;
}

int perf_samples_add(struct perf_samples *e, const struct perf_sample *s,
		     uint64_t ts)
{
	uint64_t callstack;
	int32_t pid;
	int k, err;

	if (e->err)
		return e->err;
	if (s->tid < 0)
		return -EINVAL;
	for (k = 0; k < K_COUNT; k++)
		e->pend[k].n = 0;
	pid = sample_pid(e, s);
	err = intern_stack(e, s, &callstack);
	if (!err)
		err = emit_sample(e, s, pid, ts, callstack);
	if (!err)
		err = emit_names(e, s, pid, ts);
	return e->err = err;
}

/* ---- life cycle ---- */

struct perf_samples *perf_samples_new(struct packet_sink *sink,
				      const struct perf_samples_opts *opts)
{
	struct perf_samples *e;

	if (!sink || !opts || !opts->seq_id) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->sink = sink;
	e->o = *opts;
	return e;
}

void perf_samples_free(struct perf_samples *e)
{
	size_t i;

	if (!e)
		return;
	struct vec *vecs[] = { &e->stack,  &e->namekey, &e->strs,
			       &e->pstrs,  &e->maps,    &e->pmaps,
			       &e->frames, &e->pframes, &e->stacks,
			       &e->pstacks };

	for (i = 0; i < K_COUNT; i++) {
		itab_free(&e->tab[i]);
		free(e->pend[i].p);
	}
	itab_free(&e->threads);
	itab_free(&e->procs);
	for (i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		free(vecs[i]->p);
	free(e);
}

void perf_samples_reset(struct perf_samples *e)
{
	int k;

	for (k = 0; k < K_COUNT; k++) {
		itab_free(&e->tab[k]);
		memset(&e->tab[k], 0, sizeof(e->tab[k]));
		e->pend[k].n = 0;
	}
	e->started = false;
}

const struct perf_samples_stats *
perf_samples_stats(const struct perf_samples *e)
{
	return &e->st;
}
