/* The triggers of a trace, for the report (triggers.h). */
#include "report/triggers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/grow.h"
#include "util/wire.h"

enum {
	P_TS = 8, P_TRACK_EVENT = 11, P_TRIGGER = 46, P_TRACK_DESC = 60,
	P_CLONE_TRIGGER = 113,
	T_NAME = 1, T_PRODUCER = 2,
	TD_UUID = 1, TD_THREAD = 4, TH_PID = 1, TH_TID = 2, TH_NAME = 5,
	TE_TYPE = 9, TE_TRACK = 11, TE_NAME = 23,
	TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3,
};

static void copy_str(char *dst, size_t n, const struct wire_field *f)
{
	snprintf(dst, n, "%.*s", (int)(f->val < n ? f->val : n - 1),
		 (const char *)f->data);
}

static int trigger(struct trig_seen *s, const struct wire_field *t,
		   uint64_t ts, bool clone)
{
	struct trig_fired e = { .ts = ts };
	struct wire_reader r;
	struct wire_field f;

	wire_reader_init(&r, t->data, (size_t)t->val);
	while (wire_next(&r, &f) > 0) {
		if (f.type != WIRE_LEN)
			continue;
		if (f.num == T_NAME)
			copy_str(e.name, sizeof(e.name), &f);
		else if (f.num == T_PRODUCER)
			copy_str(e.producer, sizeof(e.producer), &f);
	}
	if (clone) {
		s->snapshot = e;
		s->has_snapshot = true;
		return 0;
	}
	if (grow_array((void **)&s->fired, &s->capfired, s->nfired + 1, sizeof(e), 8))
		return -1;
	s->fired[s->nfired++] = e;
	return 0;
}

static int track(struct trig_seen *s, const struct wire_field *t)
{
	struct trig_track k = { 0 };
	struct wire_reader r, q;
	struct wire_field f, g;
	bool thread = false;

	wire_reader_init(&r, t->data, (size_t)t->val);
	while (wire_next(&r, &f) > 0) {
		if (f.num == TD_UUID && f.type == WIRE_VARINT)
			k.uuid = f.val;
		if (f.num != TD_THREAD || f.type != WIRE_LEN)
			continue;
		thread = true;
		wire_reader_init(&q, f.data, (size_t)f.val);
		while (wire_next(&q, &g) > 0) {
			if (g.num == TH_PID && g.type == WIRE_VARINT)
				k.pid = (int32_t)g.val;
			else if (g.num == TH_TID && g.type == WIRE_VARINT)
				k.tid = (int32_t)g.val;
			else if (g.num == TH_NAME && g.type == WIRE_LEN)
				copy_str(k.comm, sizeof(k.comm), &g);
		}
	}
	if (!thread)
		return 0;
	if (grow_array((void **)&s->tracks, &s->captracks, s->ntracks + 1, sizeof(k), 8))
		return -1;
	s->tracks[s->ntracks++] = k;
	return 0;
}

static int event(struct trig_seen *s, const struct wire_field *t, uint64_t ts)
{
	struct trig_slice e = { .start = ts, .end = ts };
	struct wire_reader r;
	struct wire_field f;
	uint64_t type = 0;
	size_t i;

	wire_reader_init(&r, t->data, (size_t)t->val);
	while (wire_next(&r, &f) > 0) {
		if (f.num == TE_TYPE && f.type == WIRE_VARINT)
			type = f.val;
		else if (f.num == TE_TRACK && f.type == WIRE_VARINT)
			e.uuid = f.val;
		else if (f.num == TE_NAME && f.type == WIRE_LEN)
			copy_str(e.title, sizeof(e.title), &f);
	}
	if (type == TYPE_END) {
		for (i = s->nslices; i-- > 0;)
			if (s->slices[i].open && s->slices[i].uuid == e.uuid) {
				s->slices[i].end = ts;
				s->slices[i].open = false;
				break;
			}
		return 0;
	}
	if (type != TYPE_BEGIN && type != TYPE_INSTANT)
		return 0;
	e.open = type == TYPE_BEGIN;
	if (grow_array((void **)&s->slices, &s->capslices, s->nslices + 1, sizeof(e), 8))
		return -1;
	s->slices[s->nslices++] = e;
	return 0;
}

int trig_seen_packet(struct trig_seen *s, const uint8_t *pkt, size_t len)
{
	struct wire_reader r;
	struct wire_field f, body = { 0 };
	uint64_t ts = 0;

	wire_reader_init(&r, pkt, len);
	while (wire_next(&r, &f) > 0) {
		if (f.num == P_TS && f.type == WIRE_VARINT)
			ts = f.val;
		else if (trig_seen_field(f.num) && f.type == WIRE_LEN)
			body = f;
	}
	switch (body.num) {
	case P_TRIGGER:
	case P_CLONE_TRIGGER:
		return trigger(s, &body, ts, body.num == P_CLONE_TRIGGER);
	case P_TRACK_DESC:
		return track(s, &body);
	case P_TRACK_EVENT:
		return event(s, &body, ts);
	default:
		return 0;
	}
}

void trig_seen_free(struct trig_seen *s)
{
	free(s->fired);
	free(s->slices);
	free(s->tracks);
	memset(s, 0, sizeof(*s));
}

static const struct trig_track *track_of(const struct trig_seen *s,
					 uint64_t uuid)
{
	size_t i;

	for (i = s->ntracks; i-- > 0;)
		if (s->tracks[i].uuid == uuid)
			return &s->tracks[i];
	return NULL;
}

void trig_seen_print(const struct trig_seen *s)
{
	size_t i;

	if (!s->nfired && !s->has_snapshot)
		return;
	printf("\nTriggers (%zu fired in the trace", s->nfired);
	if (s->has_snapshot)
		printf("; this snapshot was written for %s at %.6f s",
		       s->snapshot.name, (double)s->snapshot.ts / 1e9);
	printf("):\n");
	for (i = 0; i < s->nfired; i++)
		printf("  %.6f s  %s  (from %s)\n", (double)s->fired[i].ts / 1e9,
		       s->fired[i].name,
		       s->fired[i].producer[0] ? s->fired[i].producer : "?");
	for (i = 0; i < s->nslices; i++) {
		const struct trig_slice *m = &s->slices[i];
		const struct trig_track *t = track_of(s, m->uuid);

		printf("  thread %d %s (pid %d): %s, %.6f s to %.6f s\n",
		       t ? t->tid : 0, t ? t->comm : "?", t ? t->pid : 0,
		       m->title, (double)m->start / 1e9, (double)m->end / 1e9);
	}
}

json_object *trig_seen_json(const struct trig_seen *s)
{
	json_object *o = json_object_new_object(), *f = json_object_new_array(),
		    *th = json_object_new_array();
	size_t i;

	for (i = 0; i < s->nfired; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "ts", json_object_new_int64((int64_t)s->fired[i].ts));
		json_object_object_add(e, "name", json_object_new_string(s->fired[i].name));
		json_object_object_add(e, "producer", json_object_new_string(s->fired[i].producer));
		json_object_array_add(f, e);
	}
	for (i = 0; i < s->nslices; i++) {
		const struct trig_slice *m = &s->slices[i];
		const struct trig_track *t = track_of(s, m->uuid);
		json_object *e = json_object_new_object();

		json_object_object_add(e, "tid", json_object_new_int(t ? t->tid : 0));
		json_object_object_add(e, "pid", json_object_new_int(t ? t->pid : 0));
		json_object_object_add(e, "comm", json_object_new_string(t ? t->comm : ""));
		json_object_object_add(e, "what", json_object_new_string(m->title));
		json_object_object_add(e, "start", json_object_new_int64((int64_t)m->start));
		json_object_object_add(e, "end", json_object_new_int64((int64_t)m->end));
		json_object_array_add(th, e);
	}
	json_object_object_add(o, "fired", f);
	json_object_object_add(o, "threads", th);
	if (s->has_snapshot)
		json_object_object_add(o, "snapshot_for",
				       json_object_new_string(s->snapshot.name));
	return o;
}
