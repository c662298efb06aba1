/* Unit tests of merging several inputs (userspace/offline: machines.c,
 * seq_map.c, machine_assign.c, placement.c, relabel.c through
 * convert_prepare_opts): machines by name, isolation of a second input
 * on a machine, the placement order (snapshot path, manifest edge,
 * REALTIME rendezvous, same clock, unplaced), trace time, sequence ids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/convert.h"
#include "convert/machine_assign.h"
#include "sync/relabel.h"
#include "convert/remote_sync.h"
#include "convert/seq_map.h"
#include "util/wire.h"
#include "unit.h"

enum { BOOT = 6, MONO = 3, REAL = 1, RAW = 5 };

static char tmpdir[64];

/* ---- building traces ---- */

struct trace {
	struct wbuf f;
};

static void put_packet(struct trace *t, struct wbuf *p)
{
	wbuf_put(&t->f, "\x0a", 1);
	wbuf_varint(&t->f, p->len);
	wbuf_put(&t->f, p->p, p->len);
	wbuf_free(p);
}

static uint32_t primary; /* primary_trace_clock of the next snapshot */

/* A ClockSnapshot of up to three clocks (id 0: absent) on seq 1. */
static void snap(struct trace *t, uint32_t machine, uint32_t c1, uint64_t v1,
		 uint32_t c2, uint64_t v2, uint32_t c3, uint64_t v3)
{
	uint32_t ids[3] = { c1, c2, c3 };
	uint64_t vals[3] = { v1, v2, v3 };
	struct wbuf p = { 0 };
	size_t m = wbuf_begin_len(&p, 6), k, i;

	for (i = 0; i < 3; i++) {
		if (!ids[i])
			continue;
		k = wbuf_begin_len(&p, 1);
		wbuf_field_varint(&p, 1, ids[i]);
		wbuf_field_varint(&p, 2, vals[i]);
		wbuf_end_len(&p, k);
	}
	if (primary)
		wbuf_field_varint(&p, 2, primary);
	primary = 0;
	wbuf_end_len(&p, m);
	wbuf_field_varint(&p, 10, 1);
	if (machine)
		wbuf_field_varint(&p, 98, machine);
	put_packet(t, &p);
}

/* A packet tagged `id` (field 1000) at ts on clock (0: default), seq. */
static void pkt(struct trace *t, uint32_t id, uint64_t ts, uint32_t clock,
		uint32_t seq, uint32_t machine)
{
	struct wbuf p = { 0 };

	wbuf_field_varint(&p, 8, ts);
	if (clock)
		wbuf_field_varint(&p, 58, clock);
	if (seq)
		wbuf_field_varint(&p, 10, seq);
	if (machine)
		wbuf_field_varint(&p, 98, machine);
	wbuf_field_varint(&p, 1000, id);
	put_packet(t, &p);
}

static void sysinfo(struct trace *t, const char *name, uint32_t machine)
{
	struct wbuf p = { 0 };
	size_t m = wbuf_begin_len(&p, 45);

	wbuf_field_bytes(&p, 17, name, strlen(name));
	wbuf_end_len(&p, m);
	if (machine)
		wbuf_field_varint(&p, 98, machine);
	put_packet(t, &p);
}

static const char *save(struct trace *t, const char *name)
{
	static char path[8][128];
	static int next;
	char *p = path[next++ % 8];
	FILE *f;

	snprintf(p, 128, "%s/%s", tmpdir, name);
	f = fopen(p, "wb");
	if (!f || fwrite(t->f.p, 1, t->f.len, f) != t->f.len || fclose(f))
		abort();
	wbuf_free(&t->f);
	return p;
}

/* ---- running the passes ---- */

#define MAX_GOT 64

/* What came out: per tag, its time, machine slot's machine and packet. */
struct got {
	int64_t ts[MAX_GOT];   /* by tag; INT64_MIN: dropped or absent */
	uint32_t machine[MAX_GOT];
};

struct run {
	struct input in[4], *p[4];
	size_t n;
	struct timeline tl;
	struct convert_opts o;
	struct sync_stats st;
	struct got g;
	int rc;
};

static int collect(void *ctx, const struct input_packet *ip,
		   const struct rewritten *res)
{
	struct run *r = ctx;
	struct wire_reader rd;
	struct wire_field f;

	(void)ip;
	if (res->dropped)
		return 0;
	wire_reader_init(&rd, res->data, res->len);
	while (wire_next(&rd, &f) > 0)
		if (f.num == 1000 && f.val < MAX_GOT)
			r->g.ts[f.val] = res->key;
	return 0;
}

/* Both passes over paths (processing order), with manifest m. */
static void run(struct run *r, const char **paths, size_t n,
		struct manifest *m, uint32_t trace_clock)
{
	size_t i, k;

	memset(r, 0, sizeof(*r));
	for (k = 0; k < MAX_GOT; k++)
		r->g.ts[k] = INT64_MIN;
	r->n = n;
	if (timeline_init(&r->tl))
		abort();
	for (i = 0; i < n; i++) {
		r->p[i] = &r->in[i];
		if (input_open(&r->in[i], paths[i], (uint32_t)i + 1))
			abort();
		r->in[i].file.member = strdup(strrchr(paths[i], '/') + 1);
	}
	r->o.trace_clock = trace_clock;
	r->o.manifest = m;
	r->rc = convert_prepare_opts(r->p, n, &r->o, &r->tl, &r->st,
				     &(struct input *){ NULL });
	for (i = 0; i < n && !r->rc; i++)
		r->rc = convert_input(&r->in[i], &r->tl, &r->st, false, collect, r);
}

static void run_free(struct run *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		input_close(&r->in[i]);
	placement_free(&r->o.placement);
	timeline_free(&r->tl);
}

/* The machine table index of slot 0 of input i. */
static uint32_t machine_of(const struct run *r, size_t i)
{
	return r->in[i].scan.fm.v[0].machine;
}

/* ---- tests ---- */

static void test_seq_map(void)
{
	struct seq_map a = { 0 }, b = { 0 }, used = { 0 };
	uint32_t max = 0, fresh;

	CHECK(seq_map_add(&a, 1) == 0 && seq_map_add(&a, 3) == 0);
	CHECK(seq_map_add(&a, 1) == 0 && seq_map_add(&a, 0) == 0);
	CHECK_EQ_I64(a.map.n, 2);
	CHECK(seq_map_add(&b, 3) == 0 && seq_map_add(&b, 5) == 0);
	CHECK(seq_map_assign(&a, &used, &max) == 0);
	CHECK(seq_map_assign(&b, &used, &max) == 0);
	CHECK(!a.renumbered && b.renumbered);
	CHECK_EQ_I64(seq_map_get(&a, 1), 1);
	CHECK_EQ_I64(seq_map_get(&a, 3), 3);
	CHECK_EQ_I64(seq_map_get(&b, 3), 4); /* taken by a: above max */
	CHECK_EQ_I64(seq_map_get(&b, 5), 5);
	CHECK_EQ_I64(seq_map_get(&b, 0), 0);
	CHECK_EQ_I64(seq_map_get(&b, 9), 9); /* never seen */
	CHECK(seq_map_fresh(&used, &max, &fresh) == 0);
	CHECK_EQ_I64(fresh, 6);
	seq_map_free(&a);
	seq_map_free(&b);
	seq_map_free(&used);
}

static void test_machine_table(void)
{
	struct machine_table t;
	struct file_machines f1, f2;
	uint32_t a, b, a2, anon;
	char buf[32];

	machine_table_init(&t);
	CHECK(machine_table_named(&t, "a", &a) == 0);
	CHECK(machine_table_named(&t, "b", &b) == 0);
	CHECK(machine_table_named(&t, "a", &a2) == 0 && a2 == a);
	CHECK(machine_table_anon(&t, &anon) == 0 && anon == 2);
	CHECK(machine_table_find(&t, "b") == b);
	CHECK(machine_table_find(&t, "zz") == UINT32_MAX);
	CHECK(file_machines_init(&f1) == 0 && file_machines_init(&f2) == 0);
	CHECK_EQ_I64(file_machines_add(&f1, 0), 0);
	CHECK_EQ_I64(file_machines_add(&f1, 7), 1);
	CHECK_EQ_I64(file_machines_add(&f1, 7), 1);
	CHECK_EQ_I64(file_machines_find(&f1, 9), 0);
	f2.v[0].has_snapshots = true;
	machine_table_bind(&t, &f1, 0, 1, a);
	machine_table_bind(&t, &f1, 1, 1, anon);
	machine_table_bind(&t, &f2, 0, 2, a); /* second on a, with snapshots */
	CHECK(f1.v[0].tag == 0 && f2.v[0].tag == 3);
	machine_table_number(&t, b);
	CHECK_EQ_I64(t.v[b].out_id, 0);
	CHECK_EQ_I64(t.v[anon].out_id, 7); /* kept its id */
	CHECK_EQ_I64(t.v[a].out_id, 1);
	CHECK_STR(machine_table_label(&t, a, buf, sizeof(buf)), "a");
	file_machines_free(&f1);
	file_machines_free(&f2);
	machine_table_free(&t);
}

/* a: named a, BOOTTIME 1000000 = REALTIME 9000000000. */
static const char *trace_a(void)
{
	struct trace t = { 0 };

	sysinfo(&t, "a", 0);
	snap(&t, 0, BOOT, 1000000, MONO, 500000, REAL, 9000000000);
	pkt(&t, 1, 1100000, 0, 2, 0);
	pkt(&t, 2, 600000, MONO, 2, 0);
	return save(&t, "a.pb");
}

/* b: named b, BOOTTIME 5000000 = REALTIME 9000300000 (without REALTIME
 * when !realtime); a packet tagged 10 at BOOTTIME 5100000, one tagged 11
 * on MONOTONIC at the same time. */
static const char *trace_b(bool realtime)
{
	struct trace t = { 0 };

	sysinfo(&t, "b", 0);
	snap(&t, 0, BOOT, 5000000, MONO, 4000000, realtime ? REAL : 0,
	     9000300000);
	pkt(&t, 10, 5100000, 0, 2, 0);
	pkt(&t, 11, 4100000, MONO, 2, 0);
	return save(&t, "b.pb");
}

static void test_realtime_rendezvous(void)
{
	const char *p[2];
	struct run r;

	p[0] = trace_a();
	p[1] = trace_b(true);
	run(&r, p, 2, NULL, 0);
	CHECK_EQ_I64(r.rc, 0);
	CHECK_EQ_I64(r.tl.machines.n, 2);
	CHECK(machine_of(&r, 0) != machine_of(&r, 1));
	CHECK(r.tl.trace_clock.clock_id == BOOT &&
	      r.tl.trace_clock.machine == machine_of(&r, 0));
	CHECK_EQ_I64(r.g.ts[1], 1100000);
	CHECK_EQ_I64(r.g.ts[2], 1100000);
	/* b: REALTIME 9000400000 is a's BOOTTIME 1400000 */
	CHECK_EQ_I64(r.g.ts[10], 1400000);
	CHECK_EQ_I64(r.o.placement.n, 0);
	CHECK_EQ_I64(r.tl.machines.v[machine_of(&r, 1)].out_id, 1);
	run_free(&r);
}

static void test_same_clock_and_unplaced(void)
{
	struct trace t = { 0 };
	const char *p[3];
	struct run r;

	p[0] = trace_a();
	/* b has no REALTIME: the same BOOTTIME is taken, at zero offset */
	p[1] = trace_b(false);
	/* c has MONOTONIC only, and declares it: nothing relates it */
	sysinfo(&t, "c", 0);
	primary = MONO;
	snap(&t, 0, MONO, 7000, RAW, 6000, 0, 0);
	pkt(&t, 20, 7100, 0, 2, 0);
	p[2] = save(&t, "c.pb");
	run(&r, p, 3, NULL, 0);
	CHECK_EQ_I64(r.rc, 0);
	CHECK_EQ_I64(r.g.ts[10], 5100000);
	CHECK_EQ_I64(r.g.ts[11], 5100000);
	CHECK_EQ_I64(r.g.ts[20], INT64_MIN);
	CHECK_EQ_I64(r.st.stat[SYNC_STAT_UNRELATABLE], 1);
	CHECK_EQ_I64(r.o.placement.n, 1);
	CHECK(r.o.placement.n && r.o.placement.v[0].input == 2 &&
	      r.o.placement.v[0].clock == MONO);
	run_free(&r);
}

/* Two inputs of one machine (same name): the second is isolated, its
 * snapshots do not change the first one's conversions. */
static void test_isolation(void)
{
	struct trace t = { 0 };
	const char *p[2];
	struct run r;

	p[0] = trace_a();
	sysinfo(&t, "a", 0);
	/* another offset between BOOTTIME and MONOTONIC (a later boot) */
	snap(&t, 0, BOOT, 2000000, MONO, 100000, 0, 0);
	pkt(&t, 10, 200000, MONO, 2, 0);
	pkt(&t, 11, 2100000, 0, 2, 0);
	p[1] = save(&t, "a2.pb");
	run(&r, p, 2, NULL, 0);
	CHECK_EQ_I64(r.rc, 0);
	CHECK_EQ_I64(r.tl.machines.n, 1);
	CHECK(r.in[0].scan.fm.v[0].tag == 0 && r.in[1].scan.fm.v[0].tag != 0);
	CHECK_EQ_I64(r.g.ts[2], 1100000); /* a's own MONOTONIC offset */
	CHECK_EQ_I64(r.g.ts[10], 2100000); /* a2's, through its BOOTTIME */
	CHECK_EQ_I64(r.g.ts[11], 2100000);
	run_free(&r);
}

/* A trace recorded on a remote machine (every packet has machine_id 7)
 * is one machine; a clockless unnamed input joins the first machine. */
static void test_adoption_and_clockless(void)
{
	struct trace t = { 0 };
	const char *p[2];
	struct run r;

	sysinfo(&t, "far", 7);
	snap(&t, 7, BOOT, 1000, MONO, 400, 0, 0);
	pkt(&t, 1, 500, MONO, 2, 7);
	p[0] = save(&t, "far.pb");
	pkt(&t, 2, 77, 0, 3, 0);
	p[1] = save(&t, "clockless.pb");
	run(&r, p, 2, NULL, 0);
	CHECK_EQ_I64(r.rc, 0);
	CHECK_EQ_I64(r.tl.machines.n, 1);
	CHECK_EQ_I64(r.in[0].scan.fm.n, 1);
	CHECK_EQ_I64(r.g.ts[1], 1100);
	CHECK_EQ_I64(r.g.ts[2], 77); /* its own timeline, at zero offset */
	CHECK_EQ_I64(r.tl.machines.v[0].out_id, 0);
	run_free(&r);
}

static int parse_manifest(struct manifest *m, const char *text)
{
	char err[512];
	int rc = manifest_parse(m, "m.json", text, strlen(text), err,
				sizeof(err));

	if (rc)
		fprintf(stderr, "manifest: %s\n", err);
	return rc;
}

static void test_manifest_edges(void)
{
	struct trace t = { 0 };
	struct manifest m;
	const char *p[3];
	struct run r;

	p[0] = trace_a();
	p[1] = trace_b(true);
	pkt(&t, 20, 100, 0, 3, 0);
	p[2] = save(&t, "c.pb");
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"files\": [{\"path\": \"a.pb\"}, {\"path\": "
			     "\"b.pb\", \"clocks\": {\"clock\": \"BOOTTIME\", "
			     "\"sync_to\": {\"file\": \"a.pb\", \"clock\": "
			     "\"BOOTTIME\"}, \"offset_ns\": 5000}}, {\"path\": "
			     "\"c.pb\", \"machine\": {\"name\": \"c\"}, "
			     "\"clocks\": {\"sync_to\": {\"file\": \"a.pb\", "
			     "\"clock\": \"MONOTONIC\"}, \"offset_ns\": "
			     "-50}}]}}") == 0);
	run(&r, p, 3, &m, 0);
	CHECK_EQ_I64(r.rc, 0);
	/* the manifest edge wins over REALTIME: b's 5100000 + 5000 */
	CHECK_EQ_I64(r.g.ts[10], 5105000);
	/* c pinned to a's MONOTONIC 50 earlier: 100 - 50 = 50 on MONOTONIC,
	 * 500050 on a's BOOTTIME */
	CHECK_EQ_I64(r.g.ts[20], 500050);
	CHECK_EQ_I64(r.tl.machines.n, 3);
	CHECK_EQ_I64(r.in[2].file.manifest_entry, 2);
	run_free(&r);
	manifest_free(&m);
}

static void test_manifest_trace_time(void)
{
	struct manifest m;
	const char *p[2];
	struct run r;

	p[0] = trace_a();
	p[1] = trace_b(true);
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"trace_time\": {\"clock\": \"MONOTONIC\", "
			     "\"file\": \"b.pb\"}, \"files\": [{\"path\": "
			     "\"b.pb\"}]}}") == 0);
	run(&r, p, 2, &m, 0);
	CHECK_EQ_I64(r.rc, 0);
	CHECK(r.tl.trace_clock.clock_id == MONO &&
	      r.tl.trace_clock.machine == machine_of(&r, 1));
	CHECK_EQ_I64(r.g.ts[10], 4100000);
	/* a's 1100000 BOOTTIME is REALTIME 9000100000: b's MONOTONIC
	 * 4000000 - 200000 */
	CHECK_EQ_I64(r.g.ts[1], 3800000);
	CHECK_EQ_I64(r.tl.machines.v[machine_of(&r, 1)].out_id, 0);
	CHECK_EQ_I64(r.tl.machines.v[machine_of(&r, 0)].out_id, 1);
	run_free(&r);
	manifest_free(&m);
}

static void test_manifest_input_errors(void)
{
	struct trace t = { 0 };
	struct manifest m;
	const char *p[2];
	struct run r;

	p[0] = trace_a();
	sysinfo(&t, "x", 5);
	sysinfo(&t, "y", 6);
	snap(&t, 5, BOOT, 10, 0, 0, 0, 0);
	pkt(&t, 10, 20, 0, 2, 6);
	pkt(&t, 11, 20, 0, 2, 0);
	p[1] = save(&t, "multi.pb");
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"files\": [{\"path\": \"nope.pb\"}]}}") == 0);
	run(&r, p, 2, &m, 0);
	CHECK_EQ_I64(r.rc, CONVERT_MANIFEST_ERROR);
	CHECK(strstr(r.o.err, "files[0].path: no input is named 'nope.pb'"));
	run_free(&r);
	manifest_free(&m);
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"files\": [{\"path\": \"multi.pb\", \"machine\": "
			     "{\"name\": \"m\"}}]}}") == 0);
	run(&r, p, 2, &m, 0);
	CHECK_EQ_I64(r.rc, CONVERT_MANIFEST_ERROR);
	CHECK(strstr(r.o.err, "files[0].machine: 'multi.pb' holds data of 2 "
		     "machines; name them with machines"));
	run_free(&r);
	manifest_free(&m);
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"files\": [{\"path\": \"multi.pb\", \"machines\": "
			     "[{\"id\": 5, \"name\": \"five\"}]}]}}") == 0);
	run(&r, p, 2, &m, 0);
	CHECK_EQ_I64(r.rc, CONVERT_MANIFEST_ERROR);
	CHECK(strstr(r.o.err, "files[0].machines: undeclared machine id 6 in "
		     "'multi.pb'"));
	run_free(&r);
	manifest_free(&m);
	/* pinning a file that has clock snapshots */
	CHECK(parse_manifest(&m, "{\"perfetto_manifest\": {\"version\": 1, "
			     "\"files\": [{\"path\": \"a.pb\", \"clocks\": "
			     "{\"sync_to\": {\"file\": \"multi.pb\", \"machine\": "
			     "\"x\"}}}, {\"path\": \"multi.pb\", \"machines\": "
			     "[{\"id\": 5, \"name\": \"x\"}, {\"id\": 6, "
			     "\"name\": \"y\"}]}]}}") == 0);
	run(&r, p, 2, &m, 0);
	CHECK_EQ_I64(r.rc, CONVERT_MANIFEST_ERROR);
	CHECK(strstr(r.o.err, "files[0].clocks: a clocks override without a "
		     "source clock pins a clockless file"));
	run_free(&r);
	manifest_free(&m);
}

/* Relabelling: machine ids, sequence ids, one SystemInfo per machine. */
/* What test_relabel counts of the output packets of an input. */
struct relabelled {
	struct relabel rl;
	const struct input *in;
	int kept, named, machines, seq2;
};

/* The conversion (with relabelling) then relabel_packet, as sync does. */
static int relabel_one(void *ctx, const struct input_packet *ip,
		       const struct rewritten *res)
{
	struct relabelled *x = ctx;
	const uint8_t *d = res->data;
	size_t n = res->len;
	struct packet_info info;
	const char *why;
	int rc;

	if (res->dropped)
		return 0;
	rc = relabel_packet(&x->rl, x->in, &ip->info, &d, &n);
	if (rc <= 0)
		return rc;
	x->kept++;
	CHECK(packet_info_read(d, n, &info, &why) == 0);
	x->machines += info.machine_id == 1;
	x->seq2 += info.seq_id == 2;
	x->named += info.system_info != NULL;
	return 0;
}

static void test_relabel(void)
{
	struct trace t = { 0 };
	struct relabelled x = { 0 };
	struct seq_map used = { 0 };
	uint32_t max = 0;
	const char *p[2];
	struct run r;
	size_t i;

	p[0] = trace_a();
	sysinfo(&t, "b", 0);
	sysinfo(&t, "b", 0);
	snap(&t, 0, BOOT, 5000000, MONO, 4000000, REAL, 9000300000);
	pkt(&t, 10, 5100000, 0, 2, 0);
	p[1] = save(&t, "b.pb");
	run(&r, p, 2, NULL, 0);
	CHECK(seq_map_assign(&r.in[0].scan.seqs, &used, &max) == 0);
	CHECK(seq_map_assign(&r.in[1].scan.seqs, &used, &max) == 0);
	x.rl.tl = &r.tl;
	x.in = &r.in[1];
	for (i = 0; i < r.tl.machines.n; i++)
		r.tl.machines.v[i].sysinfo_done = false;
	CHECK_EQ_I64(convert_input(&r.in[1], &r.tl, &r.st, true, relabel_one,
				   &x), 0);
	/* the second SystemInfo and the snapshot (not the host) are left
	 * out; the sequences 1 and 2 were a's: b's got 3 and 4 */
	CHECK_EQ_I64(x.kept, 2);
	CHECK_EQ_I64(x.machines, 2);
	CHECK_EQ_I64(x.named, 1);
	CHECK_EQ_I64(x.seq2, 0);
	CHECK_EQ_I64(seq_map_get(&r.in[1].scan.seqs, 2), 4);
	for (i = 0; i < r.tl.machines.n; i++)
		r.tl.machines.v[i].sysinfo_done = false;
	relabel_free(&x.rl);
	seq_map_free(&used);
	run_free(&r);
}

/* ---- remote_clock_sync ---- */

/* A SyncedClocks with one client and one host reading of each clock. */
static void synced(struct wbuf *b, const uint32_t *ids, const uint64_t *c,
		   const uint64_t *h, size_t n)
{
	size_t m = wbuf_begin_len(b, 1), side, i;

	for (side = 0; side < 2; side++) {
		size_t s = wbuf_begin_len(b, side ? 3 : 2);

		for (i = 0; i < n; i++) {
			size_t k = wbuf_begin_len(b, 1);

			wbuf_field_varint(b, 1, ids[i]);
			wbuf_field_varint(b, 2, side ? h[i] : c[i]);
			wbuf_end_len(b, k);
		}
		wbuf_end_len(b, s);
	}
	wbuf_end_len(b, m);
}

static int count_client(void *ctx, const uint8_t *p, size_t n)
{
	(void)p;
	(void)n;
	(*(int *)ctx)++;
	return 0;
}

struct edges {
	int n;
	uint32_t slot[4], clock[4];
	int64_t host[4], client[4];
};

static int note_edge(void *ctx, uint32_t slot, uint32_t clock, int64_t host,
		     int64_t client)
{
	struct edges *e = ctx;

	if (e->n < 4) {
		e->slot[e->n] = slot;
		e->clock[e->n] = clock;
		e->host[e->n] = host;
		e->client[e->n] = client;
	}
	e->n++;
	return 0;
}

static void test_remote_sync(void)
{
	uint32_t ids[2] = { BOOT, MONO };
	uint64_t c1[2] = { 5000, 4000 }, h1[2] = { 1000, 300 };
	uint64_t c2[2] = { 5021, 4021 }, h2[2] = { 1020, 320 };
	uint64_t c3[2] = { 5000 + 40000000000ull, 0 }, h3[2] = { 7, 0 };
	struct remote_sync rs = { 0 };
	struct wbuf b = { 0 };
	struct edges e = { 0 };
	const char *why = NULL;
	int clients = 0;

	synced(&b, ids, c1, h1, 2);
	synced(&b, ids, c2, h2, 2);
	CHECK(remote_sync_add(&rs, 3, b.p, b.len, count_client, &clients,
			      &why) == 0);
	CHECK_EQ_I64(clients, 2);
	CHECK(remote_sync_edges(&rs, note_edge, &e) == 0);
	CHECK_EQ_I64(e.n, 2);
	/* BOOTTIME: o1 = (5000 + 5021) / 2 - 1000 = 4010, o2 = 5021 - 1010 =
	 * 4011, mean 4010 (truncated), at the last host reading */
	CHECK(e.slot[0] == 3 && e.clock[0] == BOOT);
	CHECK_EQ_I64(e.host[0], 1020);
	CHECK_EQ_I64(e.client[0], 1020 + 4010);
	CHECK(e.clock[1] == MONO && e.host[1] == 320);
	/* a message 40 s later is no round trip with the last one, but
	 * gives the anchor */
	b.len = 0;
	synced(&b, ids, c3, h3, 1);
	CHECK(remote_sync_add(&rs, 3, b.p, b.len, count_client, &clients,
			      &why) == 0);
	e.n = 0;
	CHECK(remote_sync_edges(&rs, note_edge, &e) == 0);
	CHECK_EQ_I64(e.host[0], 7);
	CHECK_EQ_I64(e.client[0], 7 + 4010);
	/* malformed */
	CHECK(remote_sync_add(&rs, 3, (const uint8_t *)"\x0a\x05", 2,
			      count_client, &clients, &why) == -1);
	CHECK_STR(why, "malformed remote_clock_sync");
	remote_sync_free(&rs);
	wbuf_free(&b);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/btr-merge.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_seq_map);
	RUN(test_machine_table);
	RUN(test_realtime_rendezvous);
	RUN(test_same_clock_and_unplaced);
	RUN(test_isolation);
	RUN(test_adoption_and_clockless);
	RUN(test_manifest_edges);
	RUN(test_manifest_trace_time);
	RUN(test_manifest_input_errors);
	RUN(test_relabel);
	RUN(test_remote_sync);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			return 1;
	}
	return unit_finish();
}
