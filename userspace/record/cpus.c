/* Possible and online CPUs from sysfs (cpus.h). */
#include "record/cpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS_CPU "/sys/devices/system/cpu/"

static int parse_id(const char **p, uint32_t *id)
{
	const char *s = *p;
	uint32_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (uint32_t)(*s - '0');
		if (v > CPUS_MAX)
			return -1;
		s++;
	}
	*p = s;
	*id = v;
	return 0;
}

int cpus_parse_list(const char *text, bool *set, uint32_t nslots,
		    uint32_t *count, uint32_t *max_id)
{
	const char *p = text;
	uint32_t n = 0, top = 0, a, b, i;
	bool any = false;

	if (nslots)
		memset(set, 0, nslots * sizeof(*set));
	while (*p && *p != '\n') {
		if (parse_id(&p, &a))
			return -1;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_id(&p, &b) || b < a)
				return -1;
		}
		for (i = a; i <= b && i < nslots; i++) {
			n += !set[i];
			set[i] = true;
		}
		if (b > top || !any)
			top = b;
		any = true;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	if (!any || (*p == '\n' && p[1]))
		return -1;
	*count = n;
	*max_id = top;
	return 0;
}

static int read_list(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), SYS_CPU "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n ? 0 : -EINVAL;
}

int cpus_read(struct cpus *c)
{
	char text[4096];
	uint32_t max_id = 0;
	bool *tmp;
	int e;

	memset(c, 0, sizeof(*c));
	e = read_list("possible", text, sizeof(text));
	if (e)
		return e;
	tmp = calloc(CPUS_MAX + 1, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	if (cpus_parse_list(text, tmp, CPUS_MAX + 1, &c->npossible, &max_id)) {
		e = -EINVAL;
		goto out;
	}
	c->nslots = max_id + 1;
	c->online = calloc(c->nslots, sizeof(*c->online));
	if (!c->online) {
		e = -ENOMEM;
		goto out;
	}
	e = read_list("online", text, sizeof(text));
	if (!e && cpus_parse_list(text, tmp, CPUS_MAX + 1, &c->nonline,
				  &max_id))
		e = -EINVAL;
	if (!e) {
		memcpy(c->online, tmp, c->nslots * sizeof(*tmp));
		c->nonline = 0;
		for (max_id = 0; max_id < c->nslots; max_id++)
			c->nonline += c->online[max_id];
	}
out:
	free(tmp);
	if (e)
		cpus_free(c);
	return e;
}

int cpus_simulate(struct cpus *c, uint32_t nslots, uint32_t nonline)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	if (!nslots || nonline > nslots || nslots > CPUS_MAX)
		return -EINVAL;
	c->online = calloc(nslots, sizeof(*c->online));
	if (!c->online)
		return -ENOMEM;
	c->nslots = c->npossible = nslots;
	c->nonline = nonline;
	for (i = 0; i < nonline; i++)
		c->online[i] = true;
	return 0;
}

void cpus_free(struct cpus *c)
{
	free(c->online);
	memset(c, 0, sizeof(*c));
}
