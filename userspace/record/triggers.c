/* Triggers in a recording (triggers.h). */
#include "record/triggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode/packet.h"
#include "encode/trigger.h"
#include "record/cpus.h"
#include "record/task_status.h"
#include "trigger/limit.h"
#include "trigger/socket.h"
#include "trigger/watch.h"
#include "util/log.h"

#define HITS_PER_TAKE 32
#define SUPPRESSED_LOG_NS 10000000000ull /* a line at most every 10 s */
#define PRODUCER "bpftrace-rec"

struct rec_triggers {
	const struct record_opts *o;
	struct packet_sink *data;
	struct trig_watch *watch;   /* NULL: named triggers only */
	struct trig_server *server; /* NULL: no named trigger */
	struct trig_rate rate;
	struct trig_files files;
	uint64_t now;
	/* the action a trigger asked for, once due */
	bool pending, stopping;
	bool final; /* the hits taken after the readers stopped */
	uint64_t due;
	/* the trigger of the snapshot being written, for its trailer */
	bool acting;
	uint32_t pending_spec, acting_spec;
	uint64_t pending_ts, acting_ts;
	char pending_producer[96], acting_producer[96];
	int32_t pending_uid, acting_uid;
	/* counts */
	uint64_t fired, suppressed, refused, joined, filtered, merged;
	uint32_t pending_specs; /* bit n: spec n already in the pending action */
	struct log_limit suppressed_log;
	uint64_t last_sweep;  /* of the thread table (trace clock) */
	uint64_t swept;       /* its pages given back */
};

/* Pages of the thread table looked at a second for threads all gone: a
 * round of the table (4 KiB pages) in about a minute. */
#define SWEEP_PAGES 1024
#define SWEEP_NS 1000000000ull

/* The watch takes every CPU the recorder can have: its NULL is only ever
 * out of memory. */
_Static_assert(CPUS_MAX <= TRIG_CPUS_MAX, "the trigger watch takes CPUS_MAX");

struct rec_triggers *rec_triggers_new(const struct record_opts *o,
				      uint32_t ncpus,
				      struct packet_sink *data, char *err,
				      size_t errlen)
{
	struct rec_triggers *t = calloc(1, sizeof(*t));
	bool named = false, watched = false;
	uint32_t i;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->o = o;
	t->data = data;
	t->files.budget = o->trigger_disk;
	for (i = 0; i < o->ntriggers; i++) {
		named |= o->triggers[i].kind == TRIG_NAMED;
		watched |= o->triggers[i].kind != TRIG_NAMED;
	}
	if (trig_rate_init(&t->rate, o->trigger_max, o->trigger_window_ns) ||
	    (watched && !(t->watch = trig_watch_new(o->triggers, o->ntriggers,
						     ncpus)))) {
		snprintf(err, errlen, "out of memory");
		rec_triggers_free(t);
		return NULL;
	}
	if (named && !(t->server = trig_server_open(o->trigger_socket,
						    o->trigger_allow, err,
						    errlen))) {
		rec_triggers_free(t);
		return NULL;
	}
	return t;
}

void rec_triggers_free(struct rec_triggers *t)
{
	if (!t)
		return;
	trig_watch_free(t->watch);
	trig_server_close(t->server);
	trig_rate_free(&t->rate);
	trig_files_free(&t->files);
	free(t);
}

struct trig_watch *rec_triggers_watch(const struct rec_triggers *t)
{
	return t->watch;
}

/* The task's process, 0 when it is gone. */
static int32_t tgid_of(int32_t tid)
{
	struct task_status st;

	return task_status_read(tid, &st) ? 0 : st.tgid;
}

/* The filters of s that /proc answers: pid= (the thread or its process)
 * and cgroup= (its cgroup v2 path). A thread gone fails them. */
static bool proc_filters_pass(const struct trig_spec *s, int32_t tid,
			      int32_t tgid)
{
	char cg[512];

	if (s->pid && s->pid != tid && s->pid != tgid)
		return false;
	if (s->cgroup[0] && (task_cgroup_read(tid, cg, sizeof(cg)) ||
			     !trig_cgroup_matches(s->cgroup, cg)))
		return false;
	return true;
}

static const char *verb(bool stop)
{
	return stop ? "the recording stops" : "a snapshot is written";
}

/* The watch counts the hits of a condition spec before `until` without
 * queueing them: the spec is in the pending action (merged) or the rate
 * limit is spent (suppressed). */
static void mute(struct rec_triggers *t, uint32_t spec, uint64_t until,
		 bool suppressed)
{
	if (t->watch && t->o->triggers[spec].kind != TRIG_NAMED)
		trig_watch_mute(t->watch, spec, until, suppressed);
}

static void mute_all(struct rec_triggers *t, uint64_t until)
{
	uint32_t i;

	for (i = 0; i < t->o->ntriggers; i++)
		mute(t, i, until, true);
}

/* What admit makes of a trigger. */
enum admitted {
	ADMIT_ACT,        /* it acts: it joins the action due, or starts one */
	ADMIT_MERGED,     /* the same trigger is in the action due already */
	ADMIT_SUPPRESSED, /* past the rate limit */
};

/* Whether a trigger may act now: it joins an action already due, or the
 * rate limit lets it start one. */
static enum admitted admit(struct rec_triggers *t, uint32_t spec,
			   const char *producer, int32_t uid, bool *joined)
{
	const struct trig_spec *s = &t->o->triggers[spec];
	uint64_t held;

	*joined = t->pending;
	if (t->pending && (t->pending_specs & (1u << spec))) {
		/* the same condition again before the action: one mark and
		 * one line a condition and action are enough */
		t->merged++;
		return ADMIT_MERGED;
	}
	if (t->pending) {
		t->pending_specs |= 1u << spec;
		mute(t, spec, t->due, false);
		return ADMIT_ACT;
	}
	if (trig_rate_allow(&t->rate, t->now)) {
		t->pending = true;
		t->pending_specs = 1u << spec;
		t->due = t->now + t->o->trigger_delay_ns;
		mute(t, spec, t->due, false);
		t->pending_spec = spec;
		t->pending_ts = t->now;
		snprintf(t->pending_producer, sizeof(t->pending_producer), "%s",
			 producer);
		t->pending_uid = uid;
		return ADMIT_ACT;
	}
	t->suppressed++;
	if (log_limit_due(&t->suppressed_log, t->now, SUPPRESSED_LOG_NS, &held))
		log_event("trigger %s suppressed by --trigger-max %u/%gs "
			  "(%llu suppressed in all)", s->text, t->o->trigger_max,
			  (double)t->o->trigger_window_ns / 1e9,
			  (unsigned long long)t->suppressed);
	mute_all(t, trig_rate_next(&t->rate, t->now));
	return ADMIT_SUPPRESSED;
}

static void fire_hit(struct rec_triggers *t, const struct trig_hit *h)
{
	const struct trig_spec *s = &t->o->triggers[h->spec];
	char title[TRIG_TEXT_MAX + 64], what[96];
	struct trigger_mark m;
	int32_t tgid = 0;
	bool joined;

	/* taken as the recording ends, after a stop: within its delay, part
	 * of it */
	if (t->stopping) {
		t->merged++;
		return;
	}
	/* the filters /proc answers, then the limit, before anything else
	 * reads /proc: a storm past the limit costs a count each */
	if (trig_spec_needs_proc(s)) {
		tgid = tgid_of(h->tid);
		if (!proc_filters_pass(s, h->tid, tgid)) {
			t->filtered++;
			return;
		}
	}
	if (admit(t, h->spec, PRODUCER, 0, &joined) != ADMIT_ACT)
		return;
	if (!tgid)
		tgid = tgid_of(h->tid);
	if (s->kind == TRIG_RUNQUEUE)
		snprintf(what, sizeof(what), "%llu threads waiting on CPU %u",
			 (unsigned long long)h->value, h->cpu);
	else
		snprintf(what, sizeof(what), "%s %.3f ms",
			 s->kind == TRIG_LATENCY ? "runnable"
			 : h->state == 'D'	  ? "blocked (D)"
						  : "blocked (S)",
			 (double)h->value / 1e6);
	snprintf(title, sizeof(title), "%s: %s", s->text, what);
	m = (struct trigger_mark){
		.pid = tgid ? tgid : h->tid, .tid = h->tid, .comm = h->comm,
		.start = h->start, .end = h->end, .title = title,
		.condition = s->text, .cpu = h->cpu, .value = (int64_t)h->value,
		.value_name = s->kind == TRIG_RUNQUEUE ? "threads" : "ns",
	};
	t->fired++;
	t->joined += joined;
	if (trigger_emit(t->data, SEQ_SERVICE_RING, t->now, s->text, PRODUCER, 0,
			 false) ||
	    trigger_emit_mark(t->data, &m))
		log_debug("trigger %s: its packets were not written", s->text);
	log_event("trigger %s fired: tid %d (%.16s, pid %d) %s, at %.6f s to "
		  "%.6f s; %s%s", s->text, (int)h->tid, h->comm, (int)m.pid,
		  what, (double)h->start / 1e9, (double)h->end / 1e9,
		  joined && !t->final ? "it joins the pending action: " : "",
		  t->final ? "read as the recording ends, it is in its trace"
			   : verb(t->o->trigger_stop));
}

/* A named trigger from the socket: NULL to take it, else why not. */
static const char *on_named(void *ctx, const char *name, uid_t uid, pid_t pid)
{
	struct rec_triggers *t = ctx;
	struct task_status st;
	char producer[96];
	uint32_t i;
	bool joined;

	for (i = 0; i < t->o->ntriggers; i++)
		if (t->o->triggers[i].kind == TRIG_NAMED &&
		    !strcmp(t->o->triggers[i].name, name))
			break;
	if (i == t->o->ntriggers)
		return "this recorder has no --trigger name:NAME of that name";
	if (t->stopping)
		return "the recording is stopping";
	snprintf(producer, sizeof(producer), "%s (pid %d)",
		 task_status_read(pid, &st) ? "" : st.name, (int)pid);
	switch (admit(t, i, producer, (int32_t)uid, &joined)) {
	case ADMIT_ACT:
		break;
	case ADMIT_MERGED: /* taken: the action due is this trigger's */
		return NULL;
	case ADMIT_SUPPRESSED:
		return "suppressed by --trigger-max";
	}
	t->fired++;
	t->joined += joined;
	if (trigger_emit(t->data, SEQ_SERVICE_RING, t->now,
			 trig_spec_name(&t->o->triggers[i]), producer,
			 (int32_t)uid, false))
		log_debug("trigger %s: its packet was not written", name);
	log_event("trigger %s fired: sent by %s, uid %u; %s%s",
		  t->o->triggers[i].text, producer, (unsigned)uid,
		  joined ? "it joins the pending action: " : "",
		  verb(t->o->trigger_stop));
	return NULL;
}

/* Fires the hits take() hands out. */
static void take_hits(struct rec_triggers *t,
		      size_t (*take)(struct trig_watch *, struct trig_hit *,
				     size_t, uint64_t *))
{
	struct trig_hit hits[HITS_PER_TAKE];
	uint64_t overflow = 0;
	size_t n, i;

	while (t->watch && (n = take(t->watch, hits, HITS_PER_TAKE, &overflow)))
		for (i = 0; i < n; i++)
			fire_hit(t, &hits[i]);
	if (overflow) {
		/* more than the queue holds between two turns: a storm the
		 * rate limit would have stopped anyway */
		t->suppressed += overflow;
		log_debug("%llu trigger conditions beyond the queue",
			  (unsigned long long)overflow);
	}
}

void rec_triggers_finish(struct rec_triggers *t, uint64_t now)
{
	t->now = now;
	t->final = true;
	if (t->pending && !t->stopping)
		log_event("the recording ends before the %s of trigger %s was "
			  "due (--trigger-delay): the trace holds it",
			  t->o->trigger_stop ? "stop" : "snapshot",
			  t->o->triggers[t->pending_spec].text);
	if (t->watch)
		trig_watch_muted(t->watch, &t->merged, &t->suppressed);
	take_hits(t, trig_watch_take_rest);
}

enum trig_action rec_triggers_tick(struct rec_triggers *t, uint64_t now)
{
	t->now = now;
	if (t->server)
		t->refused += trig_server_poll(t->server, on_named, t);
	if (t->watch)
		trig_watch_muted(t->watch, &t->merged, &t->suppressed);
	if (t->watch && now - t->last_sweep >= SWEEP_NS) {
		t->last_sweep = now;
		t->swept += trig_watch_sweep(t->watch, SWEEP_PAGES);
	}
	if (!t->stopping)
		take_hits(t, trig_watch_take);
	if (!t->pending || now < t->due || t->stopping)
		return TRIG_NONE;
	t->pending = false;
	t->acting = true;
	t->acting_spec = t->pending_spec;
	t->acting_ts = t->pending_ts;
	t->acting_uid = t->pending_uid;
	memcpy(t->acting_producer, t->pending_producer, sizeof(t->acting_producer));
	if (t->o->trigger_stop) {
		t->stopping = true;
		return TRIG_STOP;
	}
	return TRIG_SNAPSHOT;
}

void rec_triggers_snapshot_written(struct rec_triggers *t, const char *path,
				   uint64_t bytes)
{
	/* a snapshot asked for with SIGUSR1 is the operator's: only the
	 * triggers' own are in --trigger-disk's account */
	bool ours = t->acting;

	t->acting = false;
	if (path && ours && trig_files_add(&t->files, path, bytes))
		log_warn("out of memory: snapshot %s is out of --trigger-disk's "
			 "account", path);
}

static int emit_counts(struct rec_triggers *t, struct packet_sink *to,
		       uint32_t seq)
{
	static const char *const keys[] = {
		"bpftrace_rec.triggers_fired",
		"bpftrace_rec.triggers_suppressed",
		"bpftrace_rec.triggers_refused",
		"bpftrace_rec.trigger_snapshots_removed",
		"bpftrace_rec.triggers_merged",
		"bpftrace_rec.trigger_records_inexact",
	};
	uint64_t v[] = { t->fired, t->suppressed, t->refused, t->files.removed,
			 t->merged, t->watch ? trig_watch_inexact(t->watch) : 0 };
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceAttributes ta = PERFETTO__PROTOS__TRACE_ATTRIBUTES__INIT;
	Perfetto__Protos__TraceAttributes__Attribute a[6], *ap[6];
	size_t i;

	_Static_assert(sizeof(keys) / sizeof(keys[0]) == 6 &&
			       sizeof(v) / sizeof(v[0]) == 6,
		       "a value a key");
	for (i = 0; i < 6; i++) {
		perfetto__protos__trace_attributes__attribute__init(&a[i]);
		a[i].key = (char *)keys[i];
		a[i].value_case =
			PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE;
		a[i].long_value = (int64_t)v[i];
		ap[i] = &a[i];
	}
	ta.n_attribute = 6;
	ta.attribute = ap;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES;
	p.trace_attributes = &ta;
	return packet_emit(to, seq, &p);
}

int rec_triggers_trailer(struct rec_triggers *t, struct packet_sink *to,
			 uint32_t seq, bool snapshot)
{
	int e = emit_counts(t, to, seq);

	if (!e && snapshot && t->acting)
		e = trigger_emit(to, seq, t->acting_ts,
				 trig_spec_name(&t->o->triggers[t->acting_spec]),
				 t->acting_producer, t->acting_uid, true);
	return e;
}

void rec_triggers_log(const struct rec_triggers *t)
{
	log_event("triggers: %llu fired (%llu joined an action already due; "
		  "%llu more of a condition already in it were merged into it), "
		  "%llu suppressed by --trigger-max, %llu refused to their "
		  "sender, %llu snapshots removed for --trigger-disk",
		  (unsigned long long)t->fired, (unsigned long long)t->joined,
		  (unsigned long long)t->merged,
		  (unsigned long long)t->suppressed,
		  (unsigned long long)t->refused,
		  (unsigned long long)t->files.removed);
	if (t->watch) {
		bool paged;
		size_t kib = trig_watch_resident(t->watch, &paged) >> 10;

		log_debug("trigger conditions: %zu KiB of thread state in "
			  "memory (%s, resident only where threads were seen; "
			  "%llu pages of threads all gone given back)",
			  kib, paged ? "pages of 4096 threads mapped as seen"
				     : "one table of address space",
			  (unsigned long long)t->swept);
		if (trig_watch_inexact(t->watch))
			log_debug("%llu records watched for trigger conditions "
				  "out of time order (a reader thread far behind "
				  "the others) or not at all (out of memory)",
				  (unsigned long long)trig_watch_inexact(t->watch));
	}
	if (t->filtered)
		log_debug("%llu trigger conditions held for threads their "
			  "pid= or cgroup= left out",
			  (unsigned long long)t->filtered);
}
