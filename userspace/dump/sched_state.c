/* Per-CPU "current task" for compact sched reconstruction, and prev_state
 * decoding with the kernel >= 4.14 bit table, as trace_processor does. */
#include "dump/sched_state.h"

#include <stdlib.h>
#include <string.h>

/* Beyond this, CPUs are not tracked (trace_processor rejects >= 1024). */
#define MAX_CPUS 4096u

const struct cpu_task *sched_state_current(const struct sched_state *s,
					   uint64_t cpu)
{
	if (cpu >= s->n || !s->cpus[cpu].known)
		return NULL;
	return &s->cpus[cpu];
}

void sched_state_switch(struct sched_state *s, uint64_t cpu, int64_t pid,
			const char *comm)
{
	struct cpu_task *t;
	char *copy;

	if (cpu >= MAX_CPUS)
		return;
	if (cpu >= s->n) {
		uint32_t n = (uint32_t)cpu + 1;
		struct cpu_task *c = realloc(s->cpus, n * sizeof(*c));

		if (!c)
			return; /* stays unknown: printed as ? */
		memset(c + s->n, 0, (n - s->n) * sizeof(*c));
		s->cpus = c;
		s->n = n;
	}
	t = &s->cpus[cpu];
	copy = strdup(comm ? comm : "");
	free(t->comm);
	t->comm = copy;
	t->pid = pid;
	t->known = copy != NULL;
}

void sched_state_rename(struct sched_state *s, uint64_t cpu, int64_t pid,
			const char *comm)
{
	struct cpu_task *t;
	char *copy;

	if (cpu >= s->n || !s->cpus[cpu].known || s->cpus[cpu].pid != pid)
		return;
	t = &s->cpus[cpu];
	copy = strdup(comm ? comm : "");
	if (!copy)
		return; /* keeps the old name */
	free(t->comm);
	t->comm = copy;
}

void sched_state_free(struct sched_state *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		free(s->cpus[i].comm);
	free(s->cpus);
	s->cpus = NULL;
	s->n = 0;
}

const char *sched_state_letters(int64_t prev_state, char buf[16])
{
	static const char letters[] = "SDTtXZPI"; /* bits 0x01 .. 0x80 */
	unsigned v = (unsigned)((uint64_t)prev_state & 0xffff);
	size_t n = 0;
	unsigned bit;

	if (v & 0xfe00)
		return "?";
	if ((v & 0xff) == 0)
		buf[n++] = 'R';
	for (bit = 0; bit < 8; bit++)
		if (v & (1u << bit))
			buf[n++] = letters[bit];
	if (v & 0x100)
		buf[n++] = '+';
	buf[n] = '\0';
	return buf;
}
