/* Offline clock graph (see clock_graph.h): the clocks, the series of snapshot
 * values, the directed links between clocks, the path search and the cache
 * of resolved paths that keeps a stream of conversions cheap. */
#include "clock/clock_graph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

#define CG_MAX_HOPS 4
#define CG_CACHE_SLOTS 16
#define CG_NONE UINT32_MAX

/* Directed link between two clocks of one series (columns of that series). */
struct cg_edge {
	uint32_t to;
	uint32_t series;
	uint32_t from_col;
	uint32_t to_col;
};

struct cg_clock {
	struct btr_clock_key key;
	uint64_t unit;
	int64_t running; /* incremental: snapshot value plus the deltas since */
	bool incremental;
	bool target_only; /* went back in a series: no link leaves it */
	struct cg_edge *edges; /* sorted by the key of the target */
	size_t nedges, edge_cap;
	/* path search, valid while bfs_epoch is the graph's epoch */
	uint32_t bfs_epoch, bfs_parent, bfs_edge, bfs_depth;
};

/* The snapshots of one set of clocks: cols[c][row] is the value in ns of
 * clock clocks[c] (clocks in key order) in the row-th snapshot. */
struct cg_series {
	uint32_t *clocks;
	int64_t **cols;
	size_t ncols, nrows, row_cap;
	uint64_t hash;
};

/* One link of a resolved path. `from` is non-decreasing (a clock that went
 * back has no link); `last` is the row the previous conversion used. */
struct cg_hop {
	const int64_t *from, *to;
	size_t nrows, last;
};

struct cg_path {
	struct btr_clock_key src, dst;
	enum btr_clock_result result;
	uint32_t src_clock;
	uint32_t nhops;
	struct cg_hop hops[CG_MAX_HOPS];
};

/* One clock of the snapshot being added. */
struct cg_item {
	struct btr_clock_key key;
	int64_t value;
	uint64_t unit;
	uint32_t clock; /* index; >= nclocks for a clock this snapshot creates */
	bool incremental;
	bool goes_back; /* lower than its last value in the series */
};

struct btr_clock_graph {
	struct cg_clock *clocks; /* slots past nclocks are zeroed */
	size_t nclocks, clock_cap;
	struct hmap index; /* clock key -> clock index (uint32_t) */
	uint32_t *queue; /* path search, clock_cap slots */
	size_t queue_cap;
	uint32_t epoch;
	struct cg_series *series; /* slots past nseries are zeroed */
	size_t nseries, series_cap;
	struct cg_item *items;
	size_t item_cap;
	struct btr_clock_key trace_clock;
	struct cg_path cache[CG_CACHE_SLOTS];
	size_t ncached, cache_next, cache_hit;
	bool cache_enabled;
	long allocs_left;
	uint64_t cache_misses;
};

/* ---- keys ---- */

static bool in_seq_range(uint32_t clock_id)
{
	return clock_id >= BTR_CLOCK_SEQ_FIRST && clock_id <= BTR_CLOCK_SEQ_LAST;
}

int btr_clock_key_make(uint32_t clock_id, uint32_t seq_id, uint32_t file,
		       uint32_t machine, struct btr_clock_key *key)
{
	bool scoped = in_seq_range(clock_id);

	if (scoped && seq_id == 0)
		return -EINVAL;
	*key = (struct btr_clock_key){ clock_id, scoped ? seq_id : 0, file,
				       machine };
	return 0;
}

bool btr_clock_key_equal(struct btr_clock_key a, struct btr_clock_key b)
{
	return a.clock_id == b.clock_id && a.seq_id == b.seq_id &&
	       a.file == b.file && a.machine == b.machine;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

int btr_clock_key_cmp(struct btr_clock_key a, struct btr_clock_key b)
{
	int d = cmp_u32(a.clock_id, b.clock_id);

	if (!d)
		d = cmp_u32(a.seq_id, b.seq_id);
	if (!d)
		d = cmp_u32(a.file, b.file);
	return d ? d : cmp_u32(a.machine, b.machine);
}

/* ---- arithmetic ---- */

/* ---- memory ---- */

static void *cg_realloc(struct btr_clock_graph *g, void *p, size_t size)
{
	if (g->allocs_left == 0)
		return NULL;
	if (g->allocs_left > 0)
		g->allocs_left--;
	return realloc(p, size);
}

/* Capacity for at least `need` (> cap) elements, 0 if too large. */
static size_t grown_cap(size_t cap, size_t need, size_t size)
{
	size_t n = cap ? cap : 4;

	while (n < need && n <= SIZE_MAX / 2)
		n *= 2;
	return n >= need && n <= SIZE_MAX / size ? n : 0;
}

/* Returns p grown to hold `need` (> 0) elements, new slots zeroed, or NULL
 * with p untouched. */
static void *grow_array(struct btr_clock_graph *g, void *p, size_t *cap,
			size_t need, size_t size)
{
	size_t n;
	char *q;

	if (need <= *cap)
		return p;
	n = grown_cap(*cap, need, size);
	q = n ? cg_realloc(g, p, n * size) : NULL;
	if (!q)
		return NULL;
	memset(q + *cap * size, 0, (n - *cap) * size);
	*cap = n;
	return q;
}

/* ---- clock index ---- */

static uint32_t clock_find(const struct btr_clock_graph *g,
			   struct btr_clock_key key)
{
	const uint32_t *c = hmap_find(&g->index, &key);

	return c ? *c : CG_NONE;
}

/* Reserved beforehand (index_reserve): never allocates. */
static void index_insert(struct btr_clock_graph *g, struct btr_clock_key key,
			 uint32_t clock)
{
	bool added;

	*(uint32_t *)hmap_insert(&g->index, &key, &added) = clock;
}

/* Room in the index for nclocks clocks. */
static int index_reserve(struct btr_clock_graph *g, size_t nclocks)
{
	if (2 * nclocks <= g->index.cap)
		return 0;
	if (g->allocs_left == 0) /* the tests' failure injection */
		return -ENOMEM;
	if (g->allocs_left > 0)
		g->allocs_left--;
	return hmap_reserve(&g->index, nclocks) ? -ENOMEM : 0;
}

/* ---- graph lifetime ---- */

struct btr_clock_graph *btr_clock_graph_new(void)
{
	struct btr_clock_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->trace_clock.clock_id = BTR_CLOCK_TRACE_FILE;
	hmap_init(&g->index, sizeof(struct btr_clock_key), sizeof(uint32_t),
		  0);
	g->cache_enabled = true;
	g->allocs_left = -1;
	return g;
}

static void series_release(struct cg_series *s)
{
	size_t c;

	for (c = 0; s->cols && c < s->ncols; c++)
		free(s->cols[c]);
	free(s->cols);
	free(s->clocks);
	memset(s, 0, sizeof(*s));
}

void btr_clock_graph_free(struct btr_clock_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nclocks; i++)
		free(g->clocks[i].edges);
	for (i = 0; i < g->nseries; i++)
		series_release(&g->series[i]);
	free(g->clocks);
	hmap_free(&g->index);
	free(g->queue);
	free(g->series);
	free(g->items);
	free(g);
}

void btr_clock_graph_set_trace_clock(struct btr_clock_graph *g,
				     struct btr_clock_key key)
{
	g->trace_clock = key;
}

struct btr_clock_key btr_clock_graph_trace_clock(const struct btr_clock_graph *g)
{
	return g->trace_clock;
}

void btr_clock_graph_set_cache(struct btr_clock_graph *g, bool enabled)
{
	g->cache_enabled = enabled;
	g->ncached = g->cache_next = g->cache_hit = 0;
}

void btr_clock_graph_fail_allocs_after(struct btr_clock_graph *g, long count)
{
	g->allocs_left = count < 0 ? -1 : count;
}

bool btr_clock_graph_is_known(const struct btr_clock_graph *g,
			      struct btr_clock_key key)
{
	return clock_find(g, key) != CG_NONE;
}

/* ---- snapshot: load and validate (nothing changes yet) ---- */

static int item_cmp(const void *a, const void *b)
{
	return btr_clock_key_cmp(((const struct cg_item *)a)->key,
				 ((const struct cg_item *)b)->key);
}

/* Fills g->items from the readings, sorted by key (the column order). */
static int items_load(struct btr_clock_graph *g,
		      const struct btr_clock_reading *r, size_t n)
{
	struct cg_item *items =
		grow_array(g, g->items, &g->item_cap, n, sizeof(*items));
	size_t i;

	if (!items)
		return -ENOMEM;
	g->items = items;
	for (i = 0; i < n; i++) {
		uint64_t unit = r[i].unit_ns ? r[i].unit_ns : 1;

		items[i] = (struct cg_item){
			.key = r[i].key,
			.value = btr_wrap_i64(r[i].ts * unit),
			.unit = unit,
			.clock = clock_find(g, r[i].key),
			.incremental = r[i].incremental,
		};
	}
	qsort(items, n, sizeof(*items), item_cmp);
	return 0;
}

static bool is_trace_clock(const struct btr_clock_graph *g,
			   struct btr_clock_key key)
{
	return btr_clock_key_equal(key, g->trace_clock);
}

/* Unit and incremental flag: fixed by the clock's first snapshot. */
static bool item_valid(const struct btr_clock_graph *g, const struct cg_item *it)
{
	const struct cg_clock *c;

	if (is_trace_clock(g, it->key) && it->unit != 1)
		return false;
	if (it->clock == CG_NONE)
		return !it->incremental || in_seq_range(it->key.clock_id);
	c = &g->clocks[it->clock];
	return c->unit == it->unit && c->incremental == it->incremental;
}

static uint64_t hash_step(uint64_t h, uint32_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

static uint64_t items_hash(const struct cg_item *items, size_t n)
{
	uint64_t h = n;
	size_t i;

	for (i = 0; i < n; i++)
		h = hash_step(h, items[i].clock);
	return h;
}

static bool series_matches(const struct cg_series *s,
			   const struct cg_item *items, size_t n, uint64_t hash)
{
	size_t c;

	if (s->hash != hash || s->ncols != n)
		return false;
	for (c = 0; c < n; c++)
		if (s->clocks[c] != items[c].clock)
			return false;
	return true;
}

/* The series of exactly the items' set of clocks, or CG_NONE. */
static uint32_t series_find(const struct btr_clock_graph *g, size_t n)
{
	uint64_t hash = items_hash(g->items, n);
	size_t s;

	for (s = 0; s < g->nseries; s++)
		if (series_matches(&g->series[s], g->items, n, hash))
			return (uint32_t)s;
	return CG_NONE;
}

/* Marks the items lower than their series' last value; rejects the snapshot
 * if one of them is the trace clock. */
static int items_check_order(struct btr_clock_graph *g, size_t n,
			     const struct cg_series *s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct cg_item *it = &g->items[i];

		it->goes_back = it->value < s->cols[i][s->nrows - 1];
		if (it->goes_back && is_trace_clock(g, it->key))
			return -EINVAL;
	}
	return 0;
}

/* Validates the loaded items, numbers the new clocks, finds the series. */
static int items_check(struct btr_clock_graph *g, size_t n, uint32_t *series)
{
	size_t i, nnew = 0;

	for (i = 0; i < n; i++) {
		struct cg_item *it = &g->items[i];

		if (i && btr_clock_key_equal(it[-1].key, it->key))
			return -EINVAL;
		if (!item_valid(g, it))
			return -EINVAL;
		if (it->clock == CG_NONE)
			it->clock = (uint32_t)(g->nclocks + nnew++);
	}
	*series = nnew ? CG_NONE : series_find(g, n);
	if (*series == CG_NONE)
		return 0;
	return items_check_order(g, n, &g->series[*series]);
}

/* ---- snapshot: reserve memory (invisible if it fails) ---- */

static int clocks_reserve(struct btr_clock_graph *g, size_t need)
{
	struct cg_clock *clocks;
	uint32_t *queue;

	if (need >= CG_NONE / 2)
		return -ENOMEM;
	clocks = grow_array(g, g->clocks, &g->clock_cap, need, sizeof(*clocks));
	if (!clocks)
		return -ENOMEM;
	g->clocks = clocks;
	queue = grow_array(g, g->queue, &g->queue_cap, need, sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	g->queue = queue;
	return index_reserve(g, need);
}

/* Room for a link from every item to every other one. */
static int edges_reserve(struct btr_clock_graph *g, size_t n)
{
	size_t i;

	for (i = 0; n > 1 && i < n; i++) {
		struct cg_clock *c = &g->clocks[g->items[i].clock];
		struct cg_edge *edges = grow_array(g, c->edges, &c->edge_cap,
						   c->nedges + n - 1,
						   sizeof(*edges));

		if (!edges)
			return -ENOMEM;
		c->edges = edges;
	}
	return 0;
}

static int series_reserve_row(struct btr_clock_graph *g, struct cg_series *s)
{
	size_t cap, c;

	if (s->nrows < s->row_cap)
		return 0;
	cap = grown_cap(s->row_cap, s->nrows + 1, sizeof(int64_t));
	if (!cap)
		return -ENOMEM;
	for (c = 0; c < s->ncols; c++) {
		int64_t *col = cg_realloc(g, s->cols[c], cap * sizeof(*col));

		if (!col)
			return -ENOMEM;
		s->cols[c] = col;
	}
	s->row_cap = cap;
	return 0;
}

/* Allocates the slot after the last series for n clocks. */
static int series_prepare(struct btr_clock_graph *g, size_t n)
{
	struct cg_series *all = grow_array(g, g->series, &g->series_cap,
					   g->nseries + 1, sizeof(*all));
	struct cg_series *s;

	if (!all)
		return -ENOMEM;
	g->series = all;
	s = &all[g->nseries];
	s->ncols = n;
	s->clocks = cg_realloc(g, NULL, n * sizeof(*s->clocks));
	s->cols = cg_realloc(g, NULL, n * sizeof(*s->cols));
	if (s->cols)
		memset(s->cols, 0, n * sizeof(*s->cols));
	if (!s->clocks || !s->cols || series_reserve_row(g, s)) {
		series_release(s);
		return -ENOMEM;
	}
	return 0;
}

/* Frees what the reservation gave to clocks the snapshot would create. */
static void new_clocks_release(struct btr_clock_graph *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t c = g->items[i].clock;

		if (c >= g->nclocks && c < g->clock_cap) {
			free(g->clocks[c].edges);
			memset(&g->clocks[c], 0, sizeof(g->clocks[c]));
		}
	}
}

static int snapshot_reserve(struct btr_clock_graph *g, size_t n,
			    uint32_t series)
{
	size_t i, nnew = 0;
	int err;

	for (i = 0; i < n; i++)
		nnew += g->items[i].clock >= g->nclocks;
	err = clocks_reserve(g, g->nclocks + nnew);
	if (!err && series == CG_NONE)
		err = edges_reserve(g, n);
	if (!err)
		err = series == CG_NONE ?
			      series_prepare(g, n) :
			      series_reserve_row(g, &g->series[series]);
	if (err)
		new_clocks_release(g, n);
	return err;
}

/* ---- snapshot: commit (cannot fail) ---- */

static void cache_clear(struct btr_clock_graph *g)
{
	g->ncached = g->cache_next = g->cache_hit = 0;
}

static void clock_commit(struct btr_clock_graph *g, const struct cg_item *it)
{
	struct cg_clock *c = &g->clocks[it->clock];

	if (it->clock == g->nclocks) {
		c->key = it->key;
		c->unit = it->unit;
		c->incremental = it->incremental;
		index_insert(g, it->key, it->clock);
		g->nclocks++;
	}
	if (c->incremental)
		c->running = it->value;
	if (it->goes_back) {
		c->target_only = true;
		c->nedges = 0;
	}
}

static uint32_t series_commit_new(struct btr_clock_graph *g, size_t n)
{
	struct cg_series *s = &g->series[g->nseries];
	size_t c;

	for (c = 0; c < n; c++)
		s->clocks[c] = g->items[c].clock;
	s->hash = items_hash(g->items, n);
	return (uint32_t)g->nseries++;
}

static void series_append(struct cg_series *s, const struct cg_item *items)
{
	size_t c;

	for (c = 0; c < s->ncols; c++)
		s->cols[c][s->nrows] = items[c].value;
	s->nrows++;
}

/* Links item i to item j unless i is target-only or already linked to j
 * (the series created first keeps the pair). */
static void edge_add(struct btr_clock_graph *g, uint32_t i, uint32_t j,
		     uint32_t series)
{
	struct cg_clock *from = &g->clocks[g->items[i].clock];
	uint32_t to = g->items[j].clock;
	size_t pos = 0;

	if (from->target_only)
		return;
	while (pos < from->nedges &&
	       btr_clock_key_cmp(g->clocks[from->edges[pos].to].key,
				 g->items[j].key) < 0)
		pos++;
	if (pos < from->nedges && from->edges[pos].to == to)
		return;
	memmove(&from->edges[pos + 1], &from->edges[pos],
		(from->nedges - pos) * sizeof(from->edges[0]));
	from->edges[pos] = (struct cg_edge){ to, series, i, j };
	from->nedges++;
}

/* Links come with a series' first snapshot: a later one of the same set
 * of clocks can add none (its pairs are linked or kept by an older series,
 * and a clock that went back never gets a link again). */
static void snapshot_commit(struct btr_clock_graph *g, size_t n,
			    uint32_t series)
{
	bool fresh = series == CG_NONE;
	uint32_t i, j;

	for (i = 0; i < n; i++)
		clock_commit(g, &g->items[i]);
	if (fresh)
		series = series_commit_new(g, n);
	series_append(&g->series[series], g->items);
	for (i = 0; fresh && i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j)
				edge_add(g, i, j, series);
	cache_clear(g);
}

int btr_clock_graph_add_snapshot(struct btr_clock_graph *g,
				 const struct btr_clock_reading *clocks,
				 size_t n)
{
	uint32_t series;
	int err;

	if (n == 0)
		return 0;
	if (n >= CG_NONE / 2) {
		return -EINVAL;
	}
	err = items_load(g, clocks, n);
	if (err)
		return err;
	err = items_check(g, n, &series);
	if (err)
		return err;
	err = snapshot_reserve(g, n, series);
	if (err)
		return err;
	snapshot_commit(g, n, series);
	return 0;
}

/* A reading of key at ts with the clock's own unit and flag. */
static struct btr_clock_reading edge_reading(const struct btr_clock_graph *g,
					     struct btr_clock_key key,
					     uint64_t ts)
{
	struct btr_clock_reading r = { .key = key, .ts = ts, .unit_ns = 1 };
	uint32_t c = clock_find(g, key);

	if (c != CG_NONE) {
		r.unit_ns = g->clocks[c].unit;
		r.incremental = g->clocks[c].incremental;
	}
	return r;
}

int btr_clock_graph_add_edge(struct btr_clock_graph *g, struct btr_clock_key a,
			     uint64_t ts_a, struct btr_clock_key b, uint64_t ts_b)
{
	struct btr_clock_reading r[2] = { edge_reading(g, a, ts_a),
					  edge_reading(g, b, ts_b) };

	return btr_clock_graph_add_snapshot(g, r, 2);
}

int btr_clock_graph_add_zero_offset_edge(struct btr_clock_graph *g,
					 struct btr_clock_key a,
					 struct btr_clock_key b)
{
	return btr_clock_graph_add_edge(g, a, 0, b, 0);
}

/* ---- path search ---- */

static void bfs_new_epoch(struct btr_clock_graph *g)
{
	size_t c;

	if (++g->epoch)
		return;
	for (c = 0; c < g->nclocks; c++)
		g->clocks[c].bfs_epoch = 0;
	g->epoch = 1;
}

static void bfs_visit(struct btr_clock_graph *g, uint32_t clock,
		      uint32_t parent, uint32_t edge, uint32_t depth)
{
	struct cg_clock *c = &g->clocks[clock];

	c->bfs_epoch = g->epoch;
	c->bfs_parent = parent;
	c->bfs_edge = edge;
	c->bfs_depth = depth;
}

/* Breadth-first from src, neighbours in key order, at most CG_MAX_HOPS
 * links: the first path found is the shortest one through the lowest keys.
 * Leaves the way back in the clocks' bfs fields. */
static bool bfs(struct btr_clock_graph *g, uint32_t src, uint32_t dst)
{
	size_t head = 0, tail = 0;

	bfs_new_epoch(g);
	bfs_visit(g, src, CG_NONE, CG_NONE, 0);
	g->queue[tail++] = src;
	while (head < tail) {
		uint32_t u = g->queue[head++];
		const struct cg_clock *c = &g->clocks[u];
		uint32_t e;

		for (e = 0; e < c->nedges; e++) {
			uint32_t v = c->edges[e].to;

			if (g->clocks[v].bfs_epoch == g->epoch)
				continue;
			bfs_visit(g, v, u, e, c->bfs_depth + 1);
			if (v == dst)
				return true;
			if (c->bfs_depth + 1 < CG_MAX_HOPS)
				g->queue[tail++] = v;
		}
	}
	return false;
}

static void path_build(struct btr_clock_graph *g, struct cg_path *p,
		       uint32_t dst)
{
	uint32_t v = dst, k;

	p->nhops = g->clocks[dst].bfs_depth;
	for (k = p->nhops; k-- > 0; v = g->clocks[v].bfs_parent) {
		const struct cg_clock *to = &g->clocks[v];
		const struct cg_edge *e =
			&g->clocks[to->bfs_parent].edges[to->bfs_edge];
		const struct cg_series *s = &g->series[e->series];

		p->hops[k] = (struct cg_hop){ s->cols[e->from_col],
					      s->cols[e->to_col], s->nrows, 0 };
	}
}

static void path_resolve(struct btr_clock_graph *g, struct btr_clock_key src,
			 struct btr_clock_key dst, struct cg_path *p)
{
	uint32_t to = clock_find(g, dst);

	*p = (struct cg_path){ .src = src, .dst = dst };
	p->src_clock = clock_find(g, src);
	if (p->src_clock == CG_NONE)
		p->result = BTR_CLOCK_UNKNOWN_SOURCE;
	else if (to == CG_NONE)
		p->result = BTR_CLOCK_UNKNOWN_TARGET;
	else if (!bfs(g, p->src_clock, to))
		p->result = BTR_CLOCK_NO_PATH;
	else
		path_build(g, p, to);
}

/* ---- path cache ---- */

static bool path_is(const struct cg_path *p, struct btr_clock_key src,
		    struct btr_clock_key dst)
{
	return btr_clock_key_equal(p->src, src) &&
	       btr_clock_key_equal(p->dst, dst);
}

static struct cg_path *cache_lookup(struct btr_clock_graph *g,
				    struct btr_clock_key src,
				    struct btr_clock_key dst)
{
	size_t k;

	if (g->cache_hit < g->ncached &&
	    path_is(&g->cache[g->cache_hit], src, dst))
		return &g->cache[g->cache_hit];
	for (k = 0; k < g->ncached; k++) {
		if (path_is(&g->cache[k], src, dst)) {
			g->cache_hit = k;
			return &g->cache[k];
		}
	}
	return NULL;
}

/* The next slot, round robin. */
static struct cg_path *cache_take(struct btr_clock_graph *g)
{
	size_t k = g->cache_next;

	g->cache_next = (k + 1) % CG_CACHE_SLOTS;
	if (g->ncached < CG_CACHE_SLOTS)
		g->ncached++;
	g->cache_hit = k;
	return &g->cache[k];
}

static struct cg_path *path_get(struct btr_clock_graph *g,
				struct btr_clock_key src,
				struct btr_clock_key dst,
				struct cg_path *scratch)
{
	struct cg_path *p = g->cache_enabled ? cache_lookup(g, src, dst) : NULL;

	if (p)
		return p;
	p = g->cache_enabled ? cache_take(g) : scratch;
	g->cache_misses++;
	path_resolve(g, src, dst, p);
	return p;
}

/* ---- conversion ---- */

/* Row of the last value <= x (the first row if x is below all of them);
 * tries the previous row and the next one before a binary search. */
static size_t hop_row(struct cg_hop *h, int64_t x)
{
	size_t i = h->last, lo = 0, hi = h->nrows;

	for (; i < h->last + 2 && i < h->nrows; i++)
		if ((i == 0 || h->from[i] <= x) &&
		    (i + 1 == h->nrows || h->from[i + 1] > x))
			return h->last = i;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->from[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return h->last = lo ? lo - 1 : 0;
}

static int64_t path_apply(struct cg_path *p, int64_t ns)
{
	uint32_t k;

	for (k = 0; k < p->nhops; k++) {
		struct cg_hop *h = &p->hops[k];
		size_t row = hop_row(h, ns);

		ns = btr_wrap_i64((uint64_t)ns - (uint64_t)h->from[row] +
			      (uint64_t)h->to[row]);
	}
	return ns;
}

/* ts in ns; an incremental clock adds it to its running value. */
static int64_t source_ns(struct cg_clock *c, int64_t ts)
{
	int64_t ns = btr_wrap_i64((uint64_t)ts * c->unit);

	if (!c->incremental)
		return ns;
	c->running = btr_wrap_i64((uint64_t)c->running + (uint64_t)ns);
	return c->running;
}

enum btr_clock_result btr_clock_graph_convert(struct btr_clock_graph *g,
					      struct btr_clock_key src,
					      int64_t ts,
					      struct btr_clock_key dst,
					      int64_t *ns)
{
	struct cg_path scratch, *p;

	if (btr_clock_key_equal(src, dst)) {
		*ns = ts;
		return BTR_CLOCK_OK;
	}
	p = path_get(g, src, dst, &scratch);
	if (p->result != BTR_CLOCK_OK)
		return p->result;
	*ns = path_apply(p, source_ns(&g->clocks[p->src_clock], ts));
	return BTR_CLOCK_OK;
}

bool btr_clock_graph_has_path(struct btr_clock_graph *g,
			      struct btr_clock_key src,
			      struct btr_clock_key dst)
{
	struct cg_path p;

	if (btr_clock_key_equal(src, dst))
		return true;
	path_resolve(g, src, dst, &p);
	return p.result == BTR_CLOCK_OK;
}

void btr_clock_graph_reset_incremental(struct btr_clock_graph *g,
				       struct btr_clock_key key, uint64_t raw)
{
	uint32_t c = clock_find(g, key);

	if (c != CG_NONE && g->clocks[c].incremental)
		g->clocks[c].running = btr_wrap_i64(raw * g->clocks[c].unit);
}

/* ---- stats ---- */

uint64_t btr_clock_graph_cache_misses(const struct btr_clock_graph *g)
{
	return g->cache_misses;
}
