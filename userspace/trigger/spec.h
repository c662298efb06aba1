/* Trigger specifications (--trigger): conditions computed from the
 * scheduler events the reader decodes, or names other processes send
 * (`bpftrace-rec trigger NAME`). The text as written names the trigger in
 * the trace (Trigger.trigger_name):
 *
 *   latency>20ms        a thread runnable that long before it ran
 *   blocked>500ms       an off-CPU sleep (S or D) that long, to its waking
 *   D>1s                the same, uninterruptible sleeps only
 *   runqueue>4          a CPU with more than 4 threads waiting to run
 *   name:deploy         `bpftrace-rec trigger deploy`
 *
 * A condition may be narrowed by terms after it, separated by commas or
 * spaces: comm=NAME (the thread's name), pid=N (the thread or its
 * process), cgroup=PATH (the thread's cgroup v2 path, or one under it). */
#ifndef BTR_TRIGGER_SPEC_H
#define BTR_TRIGGER_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRIG_TEXT_MAX 160
#define TRIG_COMM_LEN 16
#define TRIG_CGROUP_MAX 128
#define TRIG_MAX 16 /* --trigger options at most */

enum trig_kind {
	TRIG_LATENCY,  /* runnable (woken or preempted) to running */
	TRIG_BLOCKED,  /* sleeping switch-out (S or D) to its waking */
	TRIG_BLOCKED_D, /* the same, D only */
	TRIG_RUNQUEUE, /* threads waiting on one CPU */
	TRIG_NAMED,    /* sent by another process */
};

struct trig_spec {
	char text[TRIG_TEXT_MAX]; /* as written: the trigger's name */
	enum trig_kind kind;
	uint64_t threshold; /* ns; threads for TRIG_RUNQUEUE */
	char comm[TRIG_COMM_LEN]; /* "" : any */
	int32_t pid;              /* 0: any */
	char cgroup[TRIG_CGROUP_MAX]; /* "": any */
	char name[TRIG_COMM_LEN * 4]; /* TRIG_NAMED */
};

/* Parses s into t. Returns 0, or -1 with a message in err that quotes the
 * part that is wrong. */
int trig_spec_parse(const char *s, struct trig_spec *t, char *err,
		    size_t errlen);

/* The trigger's name in the trace (Trigger.trigger_name): a named one's
 * NAME, as `perfetto --trigger NAME` writes it; a condition as written. */
static inline const char *trig_spec_name(const struct trig_spec *t)
{
	return t->kind == TRIG_NAMED ? t->name : t->text;
}

/* Whether the spec has filters read from /proc (pid=, cgroup=). */
static inline bool trig_spec_needs_proc(const struct trig_spec *t)
{
	return t->pid || t->cgroup[0];
}

/* Whether a cgroup path (from /proc/TID/cgroup) is `want` or under it. */
bool trig_cgroup_matches(const char *want, const char *path);

#endif
