/* The machine slots of one input (see machines.h for the whole model):
 * slot 0 is the input's own machine, one more slot per other
 * TracePacket.machine_id of the input, each with the name its SystemInfo
 * gives and, once machines are assigned, its machine in the run's table. */
#ifndef BTR_FILE_MACHINES_H
#define BTR_FILE_MACHINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* More machine ids in one input is taken for corrupt input. */
#define MACHINES_MAX_PER_INPUT 1024

struct file_machine {
	uint32_t raw_id;   /* TracePacket.machine_id (slot 0: 0 or adopted) */
	char *name;        /* first SystemInfo.machine_name seen on it */
	uint32_t machine;  /* index in the machine table, once assigned */
	uint32_t tag;      /* graph file tag of its builtin clocks */
	bool has_snapshots;
};

struct file_machines {
	struct file_machine *v; /* v[0] always exists once initialised */
	size_t n, cap;
	uint32_t adopted;  /* machine_id meaning slot 0 (0: none) */
};

/* Creates slot 0. Returns 0 or -ENOMEM. */
int file_machines_init(struct file_machines *fm);
void file_machines_free(struct file_machines *fm);
/* The slot of a packet's machine_id; added when new. Returns the slot,
 * -E2BIG past MACHINES_MAX_PER_INPUT or -ENOMEM. */
int file_machines_add(struct file_machines *fm, uint32_t machine_id);
/* The slot of a packet's machine_id, 0 (the input's own) if unknown. */
uint32_t file_machines_find(const struct file_machines *fm,
			    uint32_t machine_id);
/* Names a slot from SystemInfo.machine_name unless it has a name. Returns
 * 0 or -ENOMEM. */
int file_machines_name(struct file_machines *fm, uint32_t slot,
		       const char *name, size_t len);

#endif
