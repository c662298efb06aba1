/* FtraceEventBundle rewriting onto the trace clock (see rewrite.h): regular
 * events one by one, compact_sched's two delta-encoded timestamp streams
 * decoded and encoded again (with the parallel arrays of dropped events
 * filtered), and the previous bundle's end time. Fields that need no change
 * are copied byte for byte; so is a whole compact_sched or event whose
 * times do not change. When the bundle's clock is the trace clock itself
 * (checked once a bundle) a time converts to itself: no clock graph
 * lookup, and a compact_sched is only walked for its times' range. */
#include <errno.h>
#include <stdlib.h>

#include "convert/bundle_rewrite.h"
#include "util/grow.h"

/* FtraceEventBundle, FtraceEvent and CompactSched field numbers. */
enum {
	B_EVENT = 2,
	B_COMPACT = 4,
	B_FTRACE_CLOCK = 5,
	B_FTRACE_TS = 6,
	B_BOOT_TS = 7,
	B_LAST_READ_TS = 9,
	B_PREV_END_TS = 10,
	EV_TIMESTAMP = 1,
	CS_SWITCH_TS = 1,
	CS_INTERN_TABLE = 5,
	CS_WAKING_TS = 7,
	CS_LAST = 12,
};

/* The parallel arrays of each compact stream (intern_table is shared). */
#define SWITCH_ARRAYS (1u << 2 | 1u << 3 | 1u << 4 | 1u << 6)
#define WAKING_ARRAYS (1u << 8 | 1u << 9 | 1u << 10 | 1u << 11 | 1u << 12)

/* FtraceClock values. */
enum { FCLOCK_BOOT = 0, FCLOCK_GLOBAL = 2, FCLOCK_LOCAL = 3, FCLOCK_MONO_RAW = 4 };

struct bundle_ctx {
	struct rewrite *rw;
	struct wbuf *out;
	struct btr_clock_key key;
	uint32_t machine; /* of the bundle, where a bad clock is counted */
	bool bad_clock; /* events cannot be converted: unknown source */
	bool identity;  /* key is the trace clock: times stay as they are */
	bool any;
	int64_t first, last;
};

/* One decoded stream of compact events. */
struct stream {
	struct u64vec *raw; /* as stored: first absolute, then deltas */
	int64_t **ns;       /* converted times */
	uint8_t **keep;     /* 0 for a dropped event */
	size_t *cap;
	size_t drops;
	bool changed;
};

static int malformed(const char **why, const char *what)
{
	*why = what;
	return -1;
}

static int vec_reserve(struct u64vec *v, size_t n)
{
	return grow_array((void **)&v->v, &v->cap, n, sizeof(*v->v), 64);
}

static bool convert(struct bundle_ctx *b, uint64_t raw, int64_t *ns)
{
	/* what timeline_convert gives for equal keys, without the lookup;
	 * a negative time takes the counting path below */
	if (b->identity && raw <= INT64_MAX) {
		if (b->rw->tl->stats)
			b->rw->tl->stats->converted++;
		*ns = (int64_t)raw;
		return true;
	}
	if (b->bad_clock) {
		timeline_count_unknown_source(b->rw->tl, b->machine);
		return false;
	}
	return timeline_convert(b->rw->tl, b->key, raw, ns);
}

/* Converts an event time, noting it or counting the dropped event. */
static bool convert_event(struct bundle_ctx *b, uint64_t raw, int64_t *ns)
{
	if (!convert(b, raw, ns)) {
		if (b->rw->tl->stats)
			b->rw->tl->stats->events_dropped++;
		return false;
	}
	if (!b->any || *ns < b->first)
		b->first = *ns;
	if (!b->any || *ns > b->last)
		b->last = *ns;
	b->any = true;
	return true;
}

/* The clock of the bundle's events, from ftrace_clock. */
static int bundle_clock(struct bundle_ctx *b, const uint8_t *p, size_t n,
			uint32_t seq, const struct clock_scope *s,
			uint32_t tag, bool *has_fclock, const char **why)
{
	uint64_t fclock = FCLOCK_BOOT;
	struct wire_reader r;
	struct wire_field f;
	uint32_t id;
	int rc;

	*has_fclock = false;
	wire_reader_init(&r, p, n);
	while ((rc = wire_next(&r, &f)) > 0) {
		switch (f.num) {
		case B_FTRACE_CLOCK:
		case B_FTRACE_TS:
		case B_BOOT_TS:
		case B_LAST_READ_TS:
		case B_PREV_END_TS:
			if (f.type != WIRE_VARINT)
				return malformed(why, "a time field of an ftrace "
					"bundle is not a varint");
			if (f.num == B_FTRACE_CLOCK)
				fclock = f.val;
			break;
		case B_EVENT:
		case B_COMPACT:
			if (f.type != WIRE_LEN)
				return malformed(why, "an ftrace event or "
					"compact_sched is not length-delimited");
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		return malformed(why, "malformed ftrace bundle");
	*has_fclock = fclock != FCLOCK_BOOT;
	b->machine = s->machine;
	switch (fclock) {
	case FCLOCK_BOOT:
		id = b->rw->bundle_clock;
		break;
	case FCLOCK_MONO_RAW:
		id = BTR_CLOCK_MONOTONIC_RAW;
		break;
	case FCLOCK_GLOBAL:
	case FCLOCK_LOCAL:
		id = FTRACE_SEQ_CLOCK_ID;
		break;
	default:
		b->bad_clock = true; /* UNKNOWN or a value we do not know */
		return 0;
	}
	b->bad_clock = clock_scope_key_tag(s, tag, id, seq, &b->key) != 0;
	b->identity = !b->bad_clock &&
		      btr_clock_key_equal(b->key, b->rw->tl->trace_clock);
	return 0;
}

/* One FtraceEvent: converted, copied, or dropped. */
static int event_rewrite(struct bundle_ctx *b, const struct wire_field *ev,
			 const char **why)
{
	struct wire_reader r;
	struct wire_field f;
	uint64_t raw = 0;
	int n_ts = 0, rc;
	bool written = false;
	int64_t ns;
	size_t mark;

	wire_reader_init(&r, ev->data, (size_t)ev->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		if (f.num != EV_TIMESTAMP)
			continue;
		if (f.type != WIRE_VARINT)
			return malformed(why, "an ftrace event's timestamp is "
				"not a varint");
		raw = f.val;
		n_ts++;
	}
	if (rc < 0)
		return malformed(why, "malformed ftrace event");
	if (!n_ts) {
		wbuf_field_copy(b->out, ev); /* nothing to convert */
		return 0;
	}
	if (!convert_event(b, raw, &ns))
		return 0;
	if (n_ts == 1 && (uint64_t)ns == raw) {
		wbuf_field_copy(b->out, ev);
		return 0;
	}
	mark = wbuf_begin_len(b->out, B_EVENT);
	wire_reader_init(&r, ev->data, (size_t)ev->val);
	while (wire_next(&r, &f) > 0) {
		if (f.num != EV_TIMESTAMP) {
			wbuf_field_copy(b->out, &f);
		} else if (!written) {
			wbuf_field_varint(b->out, EV_TIMESTAMP, (uint64_t)ns);
			written = true;
		}
	}
	wbuf_end_len(b->out, mark);
	return 0;
}

/* Every occurrence of field num of a compact_sched payload, in order,
 * packed or not, into v. */
static int gather(const struct wire_field *cs, uint32_t num, struct u64vec *v,
		  const char **why)
{
	struct wire_reader r;
	struct wire_field f;
	int rc;

	v->n = 0;
	wire_reader_init(&r, cs->data, (size_t)cs->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		if (f.num != num)
			continue;
		rc = wire_append_varints(&f, &v->v, &v->n, &v->cap);
		if (rc == -2)
			return -ENOMEM;
		if (rc < 0)
			return malformed(why, "malformed compact_sched array");
	}
	return rc < 0 ? malformed(why, "malformed compact_sched") : 0;
}

static int stream_convert(struct bundle_ctx *b, struct stream *s)
{
	uint64_t acc = 0;
	size_t i, n = s->raw->n;

	if (n > *s->cap) {
		int64_t *ns = realloc(*s->ns, n * sizeof(*ns));
		uint8_t *keep;

		if (!ns)
			return -ENOMEM;
		*s->ns = ns;
		keep = realloc(*s->keep, n);
		if (!keep)
			return -ENOMEM;
		*s->keep = keep;
		*s->cap = n;
	}
	for (i = 0; i < n; i++) {
		int64_t ns = 0;

		acc += s->raw->v[i]; /* first absolute, then deltas */
		(*s->keep)[i] = convert_event(b, acc, &ns);
		(*s->ns)[i] = ns;
		if (!(*s->keep)[i])
			s->drops++;
		else if ((uint64_t)ns != acc)
			s->changed = true;
	}
	return 0;
}

/* The kept times of a stream, delta-encoded again, as one packed field. */
static int put_times(struct bundle_ctx *b, uint32_t num, const struct stream *s)
{
	struct u64vec *tmp = &b->rw->arr;
	uint64_t prev = 0;
	size_t i;

	tmp->n = 0;
	if (vec_reserve(tmp, s->raw->n))
		return -ENOMEM;
	for (i = 0; i < s->raw->n; i++) {
		if (!(*s->keep)[i])
			continue;
		tmp->v[tmp->n++] = (uint64_t)(*s->ns)[i] - prev;
		prev = (uint64_t)(*s->ns)[i];
	}
	wbuf_field_packed(b->out, num, tmp->v, tmp->n);
	return 0;
}

/* A parallel array without the dropped events' entries (entries past the
 * timestamps, which no reader pairs with an event, are kept). */
static int put_filtered(struct bundle_ctx *b, const struct wire_field *cs,
			uint32_t num, const struct stream *s, const char **why)
{
	struct u64vec *tmp = &b->rw->arr;
	size_t i, n = 0;
	int err = gather(cs, num, tmp, why);

	if (err)
		return err;
	for (i = 0; i < tmp->n; i++)
		if (i >= s->raw->n || (*s->keep)[i])
			tmp->v[n++] = tmp->v[i];
	wbuf_field_packed(b->out, num, tmp->v, n);
	return 0;
}

/* The range and count of the times of a compact_sched on the identity
 * path: lo and hi start at INT64_MAX and INT64_MIN, so that with no time
 * they are none. */
struct time_range {
	int64_t lo, hi;
	uint64_t n;
};

/* Adds delta v to the stream time *acc; false when the time is negative. */
static inline bool range_add(struct time_range *g, uint64_t *acc, uint64_t v)
{
	*acc += v; /* first absolute, then deltas */
	if (*acc > INT64_MAX)
		return false;
	g->lo = (int64_t)*acc < g->lo ? (int64_t)*acc : g->lo;
	g->hi = (int64_t)*acc > g->hi ? (int64_t)*acc : g->hi;
	g->n++;
	return true;
}

/* The times of a packed array p[0..n) (deltas from *acc) into g; false
 * when one is negative or the array malformed. */
static bool range_packed(struct time_range *g, uint64_t *acc,
			 const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct time_range r = *g;
	uint64_t v, t = *acc;

	while (p < end)
		if (!wire_read_varint(&p, end, &v) || !range_add(&r, &t, v))
			return false;
	*g = r;
	*acc = t;
	return true;
}

/* The identity case of compact_rewrite: both timestamp streams walked
 * (every occurrence, packed or not, as gather reads them) for their range
 * and count, nothing stored. False, with nothing noted, when a time is
 * negative or an array malformed: compact_rewrite's general path then
 * drops, counts or reports it. */
static bool compact_identity(struct bundle_ctx *b, const struct wire_field *cs)
{
	struct time_range g = { b->any ? b->first : INT64_MAX,
				b->any ? b->last : INT64_MIN, 0 };
	uint64_t acc[2] = { 0, 0 };
	struct wire_reader r;
	struct wire_field f;
	int rc;

	wire_reader_init(&r, cs->data, (size_t)cs->val);
	while ((rc = wire_next(&r, &f)) > 0) {
		uint64_t *a = &acc[f.num == CS_WAKING_TS];

		if (f.num != CS_SWITCH_TS && f.num != CS_WAKING_TS)
			continue;
		if (f.type == WIRE_VARINT) {
			if (!range_add(&g, a, f.val))
				return false;
			continue;
		}
		/* only a LEN field has data */
		if (f.type != WIRE_LEN ||
		    !range_packed(&g, a, f.data, (size_t)f.val))
			return false;
	}
	if (rc < 0)
		return false;
	if (g.n || b->any) {
		b->first = g.lo;
		b->last = g.hi;
		b->any = true;
	}
	if (b->rw->tl->stats)
		b->rw->tl->stats->converted += g.n;
	return true;
}

static int compact_rewrite(struct bundle_ctx *b, const struct wire_field *cs,
			   const char **why)
{
	struct rewrite *rw = b->rw;
	struct stream sw = { &rw->sw, &rw->sw_ns, &rw->sw_keep, &rw->sw_cap, 0,
			     false };
	struct stream wk = { &rw->wk, &rw->wk_ns, &rw->wk_keep, &rw->wk_cap, 0,
			     false };
	struct wire_reader r;
	struct wire_field f;
	uint32_t done = 0;
	size_t mark;
	int err;

	if (b->identity && (rw->compact_as_is || compact_identity(b, cs))) {
		wbuf_field_copy(b->out, cs);
		return 0;
	}
	err = gather(cs, CS_SWITCH_TS, &rw->sw, why);
	if (!err)
		err = gather(cs, CS_WAKING_TS, &rw->wk, why);
	if (!err)
		err = stream_convert(b, &sw);
	if (!err)
		err = stream_convert(b, &wk);
	if (err)
		return err;
	if (!sw.drops && !wk.drops && !sw.changed && !wk.changed) {
		wbuf_field_copy(b->out, cs);
		return 0;
	}
	mark = wbuf_begin_len(b->out, B_COMPACT);
	wire_reader_init(&r, cs->data, (size_t)cs->val);
	while (!err && wire_next(&r, &f) > 0) {
		uint32_t bit = f.num <= CS_LAST ? 1u << f.num : 0;
		const struct stream *s = NULL;

		if (f.num == CS_SWITCH_TS || ((bit & SWITCH_ARRAYS) && sw.drops))
			s = &sw;
		else if (f.num == CS_WAKING_TS ||
			 ((bit & WAKING_ARRAYS) && wk.drops))
			s = &wk;
		if (!s) {
			wbuf_field_copy(b->out, &f);
			continue;
		}
		if (done & bit)
			continue; /* the whole array went with its first part */
		done |= bit;
		if (f.num == CS_SWITCH_TS || f.num == CS_WAKING_TS)
			err = put_times(b, f.num, s);
		else
			err = put_filtered(b, cs, f.num, s, why);
	}
	wbuf_end_len(b->out, mark);
	return err;
}

/* previous_bundle_end_timestamp or last_read_event_timestamp: 0 (none) is
 * kept, another value converted or dropped. */
static void end_time_rewrite(struct bundle_ctx *b, const struct wire_field *f)
{
	int64_t ns;

	if (f->val == 0) {
		wbuf_field_copy(b->out, f);
	} else if (convert(b, f->val, &ns)) {
		wbuf_field_varint(b->out, f->num, (uint64_t)ns);
	} else if (b->rw->tl->stats) {
		b->rw->tl->stats->fields_dropped++;
	}
}

int bundle_rewrite(struct rewrite *rw, const uint8_t *p, size_t n,
		   uint32_t seq, const struct clock_scope *scope, uint32_t tag,
		   bool *any, int64_t *first,
		   int64_t *last, const char **why)
{
	struct bundle_ctx b = { .rw = rw, .out = &rw->out };
	struct wire_reader r;
	struct wire_field f;
	bool has_fclock;
	int err;

	err = bundle_clock(&b, p, n, seq, scope, tag, &has_fclock, why);
	wire_reader_init(&r, p, n);
	while (!err && wire_next(&r, &f) > 0) {
		switch (f.num) {
		case B_EVENT:
			err = event_rewrite(&b, &f, why);
			break;
		case B_COMPACT:
			err = compact_rewrite(&b, &f, why);
			break;
		case B_FTRACE_CLOCK:
		case B_FTRACE_TS:
		case B_BOOT_TS:
			if (!has_fclock)
				wbuf_field_copy(b.out, &f);
			break;
		case B_LAST_READ_TS:
		case B_PREV_END_TS:
			end_time_rewrite(&b, &f);
			break;
		default:
			wbuf_field_copy(b.out, &f);
			break;
		}
	}
	*any = b.any;
	*first = b.first;
	*last = b.last;
	return err;
}

bool bundle_ftrace_pair(const uint8_t *p, size_t n, int64_t *ftrace_ts,
			int64_t *boot_ts)
{
	bool has_f = false, has_b = false;
	uint64_t clock = FCLOCK_BOOT;
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, p, n);
	while (wire_next(&r, &f) > 0) {
		if (f.type != WIRE_VARINT)
			continue;
		if (f.num == B_FTRACE_CLOCK)
			clock = f.val;
		else if (f.num == B_FTRACE_TS)
			has_f = true, *ftrace_ts = (int64_t)f.val;
		else if (f.num == B_BOOT_TS)
			has_b = true, *boot_ts = (int64_t)f.val;
	}
	return (clock == FCLOCK_GLOBAL || clock == FCLOCK_LOCAL) && has_f &&
	       has_b;
}
