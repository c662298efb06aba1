/* PerfSamples into the report's samples and folded stacks (samples.h). */
#include "report/samples.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto/trace.pb-c.h"
#include "util/grow.h"
#include "util/wire.h"

#define PKT_PERF_SAMPLE 66

struct cache_key {
	uint32_t seq, gen;
	uint64_t iid;
};

int samples_init(struct samples *s)
{
	memset(s, 0, sizeof(*s));
	hmap_init(&s->cache, sizeof(struct cache_key), sizeof(uint32_t),
		  hmap_random_seed());
	hmap_init(&s->gen, sizeof(uint32_t), sizeof(uint32_t),
		  hmap_random_seed());
	s->st = dump_stacks_new();
	s->stack = malloc(sizeof(*s->stack));
	if (!s->st || !s->stack || !(s->stack[0] = strdup(SAMPLES_NO_STACK))) {
		samples_free(s);
		return -ENOMEM;
	}
	s->nstack = s->capstack = 1;
	return 0;
}

void samples_free(struct samples *s)
{
	size_t i;

	for (i = 0; i < s->nstack; i++)
		free(s->stack[i]);
	free(s->stack);
	free(s->v);
	dump_stacks_free(s->st);
	hmap_free(&s->cache);
	hmap_free(&s->gen);
	memset(s, 0, sizeof(*s));
}

/* Whether the packet has a perf_sample field: a look at its tags only. */
static bool has_sample(const uint8_t *pkt, size_t len)
{
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, pkt, len);
	while (wire_next(&r, &f) > 0)
		if (f.num == PKT_PERF_SAMPLE)
			return true;
	return false;
}

/* Copies name to *p, ";" (the folded format's separator) as ":". */
static void put_frame(char **p, const char *name, bool sep)
{
	size_t n = strlen(name), i;

	if (sep)
		*(*p)++ = ';';
	for (i = 0; i < n; i++)
		(*p)[i] = name[i] == ';' ? ':' : name[i];
	*p += n;
}

/* The folded stack of names[0..n) (leaf first, its first nk frames in
 * the kernel), root first; NULL when out of memory. */
static char *fold(char *const *names, size_t n, size_t nk)
{
	size_t len = 2, i;
	char *str, *p;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	str = p = malloc(len);
	if (!str)
		return NULL;
	for (i = n; i > nk; i--)
		put_frame(&p, names[i - 1], i != n);
	put_frame(&p, "-", n > nk);
	for (i = nk; i > 0; i--)
		put_frame(&p, names[i - 1], true);
	*p = '\0';
	return str;
}

/* The stack index of callstack iid of sequence seq: 0 when unknown, -1
 * when out of memory. */
static long stack_of(struct samples *s, uint32_t seq, uint64_t iid)
{
	const uint32_t *gen = hmap_find(&s->gen, &seq);
	struct cache_key k = { seq, gen ? *gen : 0, iid };
	char *const *names;
	uint32_t *v;
	size_t nk;
	long n;
	bool added;

	v = hmap_find(&s->cache, &k);
	if (v)
		return *v;
	n = dump_stacks_split(s->st, seq, iid, &names, &nk);
	if (n <= 0)
		return 0;
	if (s->nstack >= UINT32_MAX ||
	    grow_array((void **)&s->stack, &s->capstack, s->nstack + 1,
		       sizeof(*s->stack), 64) ||
	    !(s->stack[s->nstack] = fold(names, (size_t)n, nk)))
		return -1;
	v = hmap_insert(&s->cache, &k, &added);
	if (!v) {
		free(s->stack[s->nstack]);
		return -1;
	}
	*v = (uint32_t)s->nstack;
	return (long)s->nstack++;
}

/* A sequence whose incremental state was cleared starts a generation:
 * its iids may name other entries from then on. */
static int new_generation(struct samples *s, uint32_t seq)
{
	bool added;
	uint32_t *g = hmap_insert(&s->gen, &seq, &added);

	if (!g)
		return -ENOMEM;
	*g = added ? 1 : *g + 1;
	return 0;
}

int samples_packet(struct samples *s, const uint8_t *pkt, size_t len,
		   const char **why)
{
	Perfetto__Protos__TracePacket *p;
	const Perfetto__Protos__PerfSample *ps;
	uint32_t seq;
	long stack = 0;
	int rc = 0;

	if (!has_sample(pkt, len))
		return 0;
	p = perfetto__protos__trace_packet__unpack(NULL, len, pkt);
	if (!p) {
		*why = "the PerfSample cannot be decoded";
		return -1;
	}
	ps = p->perf_sample;
	seq = p->optional_trusted_packet_sequence_id_case ==
			      PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID
		      ? p->trusted_packet_sequence_id
		      : 0;
	if (p->has_sequence_flags &&
	    (p->sequence_flags &
	     PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED))
		rc = new_generation(s, seq);
	if (!rc)
		rc = dump_stacks_intern(s->st, seq, p->interned_data);
	if (!rc && ps && ps->has_callstack_iid)
		stack = stack_of(s, seq, ps->callstack_iid);
	if (!rc && stack >= 0 && ps && ps->has_tid && p->has_timestamp &&
	    p->timestamp <= INT64_MAX) {
		if (grow_array((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v),
			       1024))
			rc = -ENOMEM;
		else
			s->v[s->n++] = (struct sample){
				.ts = (int64_t)p->timestamp,
				.tid = (int32_t)ps->tid,
				.machine = p->has_machine_id ? p->machine_id : 0,
				.cpu = ps->has_cpu ? ps->cpu : UINT32_MAX,
				.stack = (uint32_t)stack,
			};
	}
	if (stack < 0)
		rc = -ENOMEM;
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	return rc;
}
