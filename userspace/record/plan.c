/* The memory plan of a recording (plan.h). */
#include "record/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "record/cpus.h"
#include "util/log.h"

int plan_make(struct plan *p, struct record_opts *o)
{
	struct budget_in in = {
		.memory = o->memory,
		.buffer = o->buffer_size,
		.ring = o->ringbuf_size,
		.page = (uint64_t)sysconf(_SC_PAGESIZE),
		.extra = (o->blocked_mode != BTR_BLOCKED_NONE || o->callstacks ?
				  BUDGET_KERNEL_SYMBOLS : 0) +
			 (o->callstacks && !o->kernel_stacks_only ?
				  BUDGET_USER_STACKS : 0),
	};
	struct cpus c;
	char err[256];
	uint32_t i;
	int e;

	memset(p, 0, sizeof(*p));
	e = cpus_read(&c);
	if (e) {
		log_error("cannot read the CPU lists of /sys/devices/system/cpu: %s",
			  strerror(-e));
		return e;
	}
	in.nslots = c.nslots;
	in.nonline = c.nonline;
	if (record_opts_kstacks(o))
		in.extra += BUDGET_KSTACK_CACHE +
			    (uint64_t)c.nslots * BUDGET_KSTACK_PER_CPU;
	if (record_opts_slice(o))
		in.extra += BUDGET_SLICE_MAPS +
			    (uint64_t)c.nslots * BUDGET_SLICE_PER_CPU;
	if (budget_compute(&in, &p->b, err, sizeof(err))) {
		log_error("%s", err);
		e = -EINVAL;
		goto out;
	}
	p->nslots = c.nslots;
	p->ring_sizes = calloc(c.nslots, sizeof(*p->ring_sizes));
	if (!p->ring_sizes) {
		log_error("out of memory");
		e = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c.nslots; i++)
		p->ring_sizes[i] = c.online[i] ? p->b.ring_online
					       : p->b.ring_offline;
	o->buffer_size = p->b.buffer;
	o->ringbuf_size = p->b.ring_online;
out:
	cpus_free(&c);
	return e;
}

void plan_log(const struct plan *p)
{
	const struct budget *b = &p->b;
	char m[32], t[32], buf[32], r[32], ro[32], rs[32], f[32];

	log_debug("memory: budget %s%s, planned %s: buffer %s, rings %s "
		  "(%u online CPUs x %s, %u other CPU ids x %s), %s for ring "
		  "headers, readers and the rest",
		  budget_fmt(b->memory, m, sizeof(m)),
		  b->default_grown ? " (the default, grown for this host)" : "",
		  budget_fmt(b->total, t, sizeof(t)),
		  budget_fmt(b->buffer, buf, sizeof(buf)),
		  budget_fmt(b->rings, rs, sizeof(rs)), b->nonline,
		  budget_fmt(b->ring_online, r, sizeof(r)), b->noffline,
		  budget_fmt(b->ring_offline, ro, sizeof(ro)),
		  budget_fmt(b->fixed, f, sizeof(f)));
	if (b->total > b->memory)
		log_debug("memory: -b or --ringbuf-size take %s more than the "
			  "default budget", budget_fmt(b->total - b->memory, t,
						       sizeof(t)));
}

void plan_free(struct plan *p)
{
	free(p->ring_sizes);
	memset(p, 0, sizeof(*p));
}
