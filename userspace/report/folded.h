/* `report --folded`: the off-CPU stacks (offcpu.h) as folded lines for
 * flamegraph.pl, inferno and speedscope, one line per distinct comm and
 * stack, sorted:
 *
 *	comm;user_root;...;user_leaf;-;kernel_root;...;kernel_leaf US
 *
 * US: the off-CPU time of those sleeps in microseconds (the sum in ns,
 * divided down, as bcc's offcputime -f); lines under 1 us are left out.
 * The comm is the thread's name in the trace, its tid in brackets when it
 * has none; a stack without user frames starts "comm;-;", one without
 * kernel frames ends ";-", one that could not be taken is
 * "comm;[no stack]". */
#ifndef BTR_REPORT_FOLDED_H
#define BTR_REPORT_FOLDED_H

#include "report/offcpu.h"

/* Prints the lines on stdout. Returns 0 or -ENOMEM. */
int folded_print(const struct offcpu *o, const struct model *m,
		 const struct names *names);

#endif
