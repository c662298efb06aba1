/* Status line and summary on stderr. */
#include "record/status.h"

#include <stdio.h>
#include <unistd.h>

void status_init(struct status *s, bool quiet, uint64_t now_ns)
{
	s->tty = isatty(STDERR_FILENO);
	s->quiet = quiet;
	s->shown = false;
	s->start_ns = s->last_ns = now_ns;
	s->last_events = 0;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

bool status_due(const struct status *s, uint64_t now_ns)
{
	return !s->quiet && s->tty && now_ns - s->last_ns >= 1000000000ull;
}

void status_tick(struct status *s, uint64_t now_ns, const struct rec_counts *c,
		 uint64_t bytes)
{
	double dt = (double)(now_ns - s->last_ns) / 1e9;

	if (!status_due(s, now_ns))
		return;
	fprintf(stderr,
		"\r\033[K%.1fs  %llu events  %.0f/s  %llu dropped  %.1f MiB",
		(double)(now_ns - s->start_ns) / 1e9,
		(unsigned long long)c->events,
		(double)(c->events - s->last_events) / dt,
		(unsigned long long)c->lost, mib(bytes));
	fflush(stderr);
	s->shown = true;
	s->last_ns = now_ns;
	s->last_events = c->events;
}

void status_summary(struct status *s, uint64_t now_ns,
		    const struct rec_counts *c, uint64_t bytes,
		    const char *path)
{
	const uint64_t *t = c->by_type;

	if (s->quiet)
		return;
	if (s->shown)
		fputs("\r\033[K", stderr);
	fprintf(stderr,
		"bpftrace-rec: %.1fs: recorded %llu events (sched_switch %llu, "
		"sched_waking %llu, sched_wakeup_new %llu, task_newtask %llu, "
		"task_rename %llu, fork %llu, exec %llu, exit %llu, free %llu, "
		"sched_blocked_reason %llu), "
		"lost %llu; wrote %llu bytes to %s\n",
		(double)(now_ns - s->start_ns) / 1e9,
		(unsigned long long)c->events,
		(unsigned long long)t[BTR_REC_SWITCH],
		(unsigned long long)t[BTR_REC_WAKING],
		(unsigned long long)t[BTR_REC_WAKEUP_NEW],
		(unsigned long long)t[BTR_REC_NEWTASK],
		(unsigned long long)t[BTR_REC_RENAME],
		(unsigned long long)t[BTR_REC_FORK],
		(unsigned long long)t[BTR_REC_EXEC],
		(unsigned long long)t[BTR_REC_EXIT],
		(unsigned long long)t[BTR_REC_FREE],
		(unsigned long long)t[BTR_REC_BLOCKED],
		(unsigned long long)c->lost, (unsigned long long)bytes,
		path);
	if (c->switch_unmatched)
		fprintf(stderr,
			"bpftrace-rec: %llu sched_switch events switched out a "
			"task other than the one last switched in on their CPU "
			"(the kernel reported no switch in between); they are "
			"written with their prev fields, trace_processor counts "
			"them as mismatched_sched_switch_tids\n",
			(unsigned long long)c->switch_unmatched);
}
