/* The CPUs of the host as sysfs lists them: which CPU ids may exist
 * (/sys/devices/system/cpu/possible) and which are online now
 * (/sys/devices/system/cpu/online), in the kernel's list format
 * ("0-3,8,10-11"). The recorder creates one ring per id up to the highest
 * possible one, as the BPF side indexes rings by CPU id. */
#ifndef BTR_CPUS_H
#define BTR_CPUS_H

#include <stdbool.h>
#include <stdint.h>

#define CPUS_MAX 8192u /* the kernel's NR_CPUS ceiling */

struct cpus {
	uint32_t nslots;   /* highest possible CPU id + 1: rings to create */
	uint32_t npossible;
	uint32_t nonline;  /* online and below nslots */
	bool *online;      /* nslots entries */
};

/* Parses a CPU list into set[0..nslots) (cleared first): set[i] for every
 * listed id below nslots. *count gets the ids set, *max_id the highest id
 * listed (even beyond nslots). Returns 0, or -1 for malformed text or an
 * id over CPUS_MAX. */
int cpus_parse_list(const char *text, bool *set, uint32_t nslots,
		    uint32_t *count, uint32_t *max_id);

/* Reads both lists from sysfs. Returns 0 or a negative errno; cpus_free
 * releases what it allocated. */
int cpus_read(struct cpus *c);
/* nslots CPUs of which the first nonline are online: a host as the
 * synthetic tests simulate it. */
int cpus_simulate(struct cpus *c, uint32_t nslots, uint32_t nonline);
void cpus_free(struct cpus *c);

#endif
