/* What the user sees while and after recording: a status line refreshed
 * about once a second when stderr is a terminal, and a one-line summary. */
#ifndef BTR_STATUS_H
#define BTR_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

struct rec_counts {
	uint64_t by_type[BTR_REC_TYPE_MAX];
	uint64_t events; /* scheduler records read */
	uint64_t lost;   /* reserve failures: carried by the records so far,
			  * the BPF side's totals at the end */
	uint64_t clock_skipped; /* clock stamps that found their ring full */
	uint64_t switch_unmatched; /* switches whose prev_pid was not the task
				      last switched in on that CPU */
};

struct status {
	bool tty, quiet, shown;
	uint64_t start_ns, last_ns, last_events;
};

void status_init(struct status *s, bool quiet, uint64_t now_ns);
/* Whether status_tick would print now (a terminal, not quiet, a second
 * since the last line): the counts need refreshing first. */
bool status_due(const struct status *s, uint64_t now_ns);
/* Refreshes the line if a second has passed. */
void status_tick(struct status *s, uint64_t now_ns, const struct rec_counts *c,
		 uint64_t bytes);
/* Clears the line and prints the summary. */
void status_summary(struct status *s, uint64_t now_ns,
		    const struct rec_counts *c, uint64_t bytes,
		    const char *path);

#endif
