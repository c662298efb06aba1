/* Unit tests of the report's compact_sched decoding (report/decode.c):
 * random bundles against a plain reading of the same arrays written
 * here: times of one to five bytes, pids of any size, comm indexes below
 * and past the intern table (a table of 1 to 300 names, so indexes of
 * one and two bytes), prev_states of one to three bytes, and columns cut
 * short. Every event must come out with its time, pid, name and state,
 * and the stream must end where its shortest column (or first index past
 * the table) does, counted as a parse error; a malformed time array is
 * an error. */
#include <stdio.h>
#include <string.h>

#include "report/decode.h"
#include "util/wire.h"
#include "unit.h"

#define MAXN 700

/* A value of 1 to `bytes` varint bytes, mostly the smaller. */
static uint64_t any_size(unsigned bytes)
{
	unsigned b = 1 + (unsigned)(unit_rand() % bytes);

	if (unit_rand() % 4)
		b = 1 + (unsigned)(unit_rand() % (bytes < 2 ? 1 : 2));
	return unit_rand() % (1ull << (7 * b));
}

struct stream {
	uint64_t ts[MAXN], pid[MAXN], comm[MAXN], state[MAXN];
	size_t nts, npid, ncomm, nstate;
	size_t want; /* events the decoder must give */
};

/* A random stream of up to MAXN events over a table of nintern names;
 * sometimes a column is cut short or an index is past the table. */
static void make_stream(struct stream *s, size_t nintern, bool state)
{
	size_t n = (size_t)(unit_rand() % MAXN), i, cut;
	uint64_t t = 1000;

	s->nts = s->npid = s->ncomm = s->nstate = n;
	for (i = 0; i < n; i++) {
		t += any_size(3) + (unit_rand() % 50 ? 0 : any_size(5));
		s->ts[i] = t;
		s->pid[i] = any_size(4);
		s->comm[i] = unit_rand() % nintern;
		s->state[i] = unit_rand() % 3 ? unit_rand() % 3 :
			      (unit_rand() % 2 ? 0x100 : any_size(3) & 0xffff);
	}
	s->want = n;
	cut = n ? (size_t)(unit_rand() % n) : 0;
	switch (unit_rand() % 8) {
	case 0:
		s->npid = cut;
		break;
	case 1:
		s->ncomm = cut;
		break;
	case 2:
		if (state)
			s->nstate = cut;
		break;
	case 3: /* an index past the table: the stream stops there */
		if (n)
			s->comm[cut] = nintern + unit_rand() % 200;
		break;
	default:
		break;
	}
	for (i = 0; i < n; i++)
		if (s->comm[i] >= nintern)
			break;
	if (i < s->want)
		s->want = i;
	if (s->npid < s->want)
		s->want = s->npid;
	if (s->ncomm < s->want)
		s->want = s->ncomm;
	if (state && s->nstate < s->want)
		s->want = s->nstate;
}

static void put_times(struct wbuf *b, uint32_t field, const uint64_t *t,
		      size_t n)
{
	uint64_t d[MAXN];
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = t[i] - (i ? t[i - 1] : 0);
	wbuf_field_packed(b, field, d, n);
}

/* One packet: a bundle of cpu 0 with the two streams. */
static void make_packet(struct wbuf *p, const struct stream *sw,
			const struct stream *wk, size_t nintern)
{
	size_t m, c, i;
	char name[16];

	p->len = 0;
	m = wbuf_begin_len(p, 1);
	wbuf_field_varint(p, 1, 0);
	c = wbuf_begin_len(p, 4);
	for (i = 0; i < nintern; i++) {
		int k = snprintf(name, sizeof(name), "n%zu", i);

		wbuf_field_bytes(p, 5, name, (size_t)k);
	}
	put_times(p, 1, sw->ts, sw->nts);
	wbuf_field_packed(p, 2, sw->state, sw->nstate);
	wbuf_field_packed(p, 3, sw->pid, sw->npid);
	wbuf_field_packed(p, 6, sw->comm, sw->ncomm);
	put_times(p, 7, wk->ts, wk->nts);
	wbuf_field_packed(p, 8, wk->pid, wk->npid);
	wbuf_field_packed(p, 11, wk->comm, wk->ncomm);
	wbuf_end_len(p, c);
	wbuf_end_len(p, m);
	wbuf_field_varint(p, 10, 7);
}

/* A decoder with its names, merge and model. */
struct fixture {
	struct names names;
	struct merge mg;
	struct model model;
	struct decoder d;
};

static void fx_init(struct fixture *x)
{
	struct model_opts mo = { 0 };

	CHECK_EQ_I64(names_init(&x->names), 0);
	merge_init(&x->mg);
	model_init(&x->model, &mo);
	decoder_init(&x->d, &x->names, &x->mg, &x->model);
}

static void fx_free(struct fixture *x)
{
	decoder_free(&x->d);
	model_free(&x->model);
	merge_free(&x->mg);
	names_free(&x->names);
}

/* The events of the queue, in order, against the two streams merged by
 * time (switches first on equal times). */
static uint64_t check_events(struct merge *mg, struct names *names,
			     const struct stream *sw, const struct stream *wk)
{
	struct merge_walk w;
	struct merge_ev ev[64];
	size_t n, k, a = 0, b = 0;
	uint64_t bad = 0;
	char name[16];

	merge_begin(mg, true, &w);
	while ((n = merge_take(mg, &w, ev, 64)))
		for (k = 0; k < n; k++) {
			const struct rev *e = ev[k].e;
			bool s = a < sw->want &&
				 (b >= wk->want || sw->ts[a] <= wk->ts[b]);
			const struct stream *x = s ? sw : wk;
			size_t i = s ? a++ : b++;

			if (i >= x->want) {
				bad++;
				continue;
			}
			snprintf(name, sizeof(name), "n%u", (unsigned)x->comm[i]);
			bad += e->ts != (int64_t)x->ts[i] ||
			       e->pid != (int32_t)x->pid[i] ||
			       strcmp(names_str(names, e->name), name) ||
			       e->kind != (s ? REV_SWITCH : REV_WAKING) ||
			       (s && e->state != (uint16_t)x->state[i]);
		}
	return bad + (a != sw->want) + (b != wk->want);
}

static void test_random_bundles(void)
{
	static struct stream sw, wk;
	uint64_t bad = 0, errors = 0, want_errors = 0, events = 0;
	struct wbuf p = { 0 };
	unsigned round;

	for (round = 0; round < 400; round++) {
		size_t nintern = 1 + (size_t)(unit_rand() % 300);
		struct fixture x;
		struct decoded out;
		const char *why = NULL;

		fx_init(&x);
		make_stream(&sw, nintern, true);
		make_stream(&wk, nintern, false);
		want_errors += (sw.want < sw.nts) + (wk.want < wk.nts);
		make_packet(&p, &sw, &wk, nintern);
		CHECK_EQ_I64(decode_packet(&x.d, p.p, p.len, &out, &why), 0);
		bad += check_events(&x.mg, &x.names, &sw, &wk);
		errors += x.d.parse_errors;
		events += sw.want + wk.want;
		fx_free(&x);
	}
	wbuf_free(&p);
	CHECK_EQ_I64(bad, 0);
	CHECK_EQ_I64(errors, want_errors);
	CHECK(want_errors > 50 && events > 100000); /* both paths ran */
}

/* Time arrays the converter would refuse are refused: one that ends in a
 * varint, a first occurrence that is malformed (the second is read), and
 * one of a fixed-size type; well-formed ones decode. */
static void test_malformed_times(void)
{
	static const struct {
		const char *compact; /* CompactSched bytes */
		size_t len;
		int rc;
	} cases[] = {
		{ "\x0a\x02\x05\x06\x1a\x02\x07\x08", 8, 0 },
		{ "\x0a\x03\x05\xff\xff\x1a\x01\x07", 8, -1 },
		{ "\x0a\x01\xff\x0a\x01\x05\x1a\x01\x07", 9, -1 },
		{ "\x0a\x01\x05\x0a\x01\x05\x1a\x01\x07", 9, 0 },
		{ "\x39\x01\x02\x03\x04\x05\x06\x07\x08", 9, -1 },
	};
	struct wbuf p = { 0 };
	size_t i, m;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture x;
		struct decoded out;
		const char *why = NULL;

		fx_init(&x);
		p.len = 0;
		m = wbuf_begin_len(&p, 1);
		wbuf_field_varint(&p, 1, 0);
		wbuf_field_bytes(&p, 4, cases[i].compact, cases[i].len);
		wbuf_end_len(&p, m);
		CHECK_EQ_I64(decode_packet(&x.d, p.p, p.len, &out, &why),
			     cases[i].rc);
		if (cases[i].rc)
			CHECK(why && !strcmp(why, "malformed compact_sched array"));
		fx_free(&x);
	}
	wbuf_free(&p);
}

int main(void)
{
	RUN(test_random_bundles);
	RUN(test_malformed_times);
	return unit_finish();
}
