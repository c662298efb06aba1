/* Machines of sync and dump (docs/clock-model.md, 'Machines'). Every clock
 * belongs to a machine, so two inputs recorded on two computers never share
 * a BOOTTIME. Two tables:
 *
 * - per input, its machine slots (file_machines.h): slot 0 is the input's own machine (the
 *   packets without machine_id, or with the id the input adopted because
 *   all its data came from that remote machine); one more slot per other
 *   TracePacket.machine_id, scoped to the input. The first pass keys the
 *   clocks of its snapshots by slot (clock_scope.machine = slot);
 * - the machine table of a run, filled in processing order: a machine per
 *   distinct name (manifest `machine`/`machines`, else the slot's
 *   SystemInfo.machine_name), an unnamed machine per unnamed remote slot,
 *   and one default machine for the unnamed own slots: inputs that do not
 *   say where they come from are taken as coming from the first input's
 *   machine (Perfetto's "host").
 *
 * The first input with data on a machine owns the machine's clocks
 * (graph file tag 0); a later input on the same machine with snapshots of
 * its own is isolated: its builtin clocks get the tag file id + 1, so its
 * snapshots cannot disturb the others' conversions (docs/clock-model.md,
 * 'Isolated inputs').
 *
 * In the output the machine of the trace clock is the host (no machine_id);
 * the others get ids from 1, keeping the id they had in their first input
 * when it is free (a re-sync keeps them). */
#ifndef BTR_MACHINES_H
#define BTR_MACHINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock/file_machines.h"

struct machine {
	char *name;          /* NULL: unnamed */
	uint32_t first_file; /* file id + 1 of its first input, 0: none yet */
	uint32_t raw_hint;   /* machine_id it had in that input */
	uint32_t out_id;     /* machine_id in the output, 0: the host */
	bool sysinfo_done;   /* the output has its SystemInfo */
};

struct machine_table {
	struct machine *v;
	size_t n, cap;
	uint32_t host;       /* the default machine, UINT32_MAX: none yet */
};

void machine_table_init(struct machine_table *t);
void machine_table_free(struct machine_table *t);
/* The machine called name (added when new); *idx its index. Returns 0 or
 * -ENOMEM. */
int machine_table_named(struct machine_table *t, const char *name,
			uint32_t *idx);
/* A new unnamed machine. Returns 0 or -ENOMEM. */
int machine_table_anon(struct machine_table *t, uint32_t *idx);
/* The index of the machine called name, or UINT32_MAX. */
uint32_t machine_table_find(const struct machine_table *t, const char *name);
/* "NAME", "the host" or "machine N" (N its output id), for messages. */
const char *machine_table_label(const struct machine_table *t, uint32_t idx,
			  char *buf, size_t n);

/* Binds slot `slot` of input `file_id` to machine idx: the first input on
 * a machine owns its clocks, a later one with snapshots is isolated. */
void machine_table_bind(struct machine_table *t, struct file_machines *fm,
		  uint32_t slot, uint32_t file_id, uint32_t idx);

/* Output ids: host the machine of the trace clock (0), the others from 1,
 * each keeping its raw_hint when it is free. */
void machine_table_number(struct machine_table *t, uint32_t host);

#endif
