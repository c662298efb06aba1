/* Which machine each input (and each machine id inside it) is on, and
 * which manifest entry names which input (docs/clock-model.md, 'Machines'):
 *
 * - a manifest entry names the input whose archive member path, or
 *   command-line path, or the base name of that path, is its `path`
 *   (exactly one input; none or several is an error);
 * - the input's own machine: the manifest's `machine` name, else the
 *   `machines` name of its id, else the name in its SystemInfo, else the
 *   first input's machine (Perfetto's host); its other machine ids: the
 *   `machines` name (an undeclared id is an error), else their SystemInfo
 *   name, else a machine of their own. The same name is the same machine.
 *
 * Inputs are taken in processing order (the first input with data on a
 * machine owns the machine's clocks: machines.h). */
#ifndef BTR_MACHINE_ASSIGN_H
#define BTR_MACHINE_ASSIGN_H

#include <stddef.h>

#include "convert/input.h"
#include "convert/manifest.h"

/* Binds m's entries to inputs (in->file.manifest_entry, entry->input). Returns
 * 0, or -1 with a message in err. */
int manifest_bind(struct manifest *m, struct input **in, size_t n, char *err,
		  size_t errlen);

/* Fills t and every input's slots (in[0..n) scanned). Returns 0, -1 with
 * a message in err (a manifest rule the inputs break), or -ENOMEM. */
int machine_assign(struct input **in, size_t n, const struct manifest *m,
		   struct machine_table *t, char *err, size_t errlen);

/* The slot of input `in` on the machine called name (NULL: slot 0), or
 * -1 with a message in err: no such machine, or no name for an input
 * with several machines. `what` names the manifest field. */
long machine_slot_named(const struct input *in, const struct machine_table *t,
			const char *name, const char *what, char *err,
			size_t errlen);

#endif
