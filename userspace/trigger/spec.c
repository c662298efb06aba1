/* Parsing --trigger specifications (spec.h). */
#include "trigger/spec.h"

#include <stdio.h>
#include <string.h>

#include "util/parse.h"

static const struct {
	const char *word;
	enum trig_kind kind;
} kinds[] = {
	{ "latency", TRIG_LATENCY },
	{ "blocked", TRIG_BLOCKED },
	{ "D", TRIG_BLOCKED_D },
	{ "runqueue", TRIG_RUNQUEUE },
};

static int fail(char *err, size_t n, const char *fmt, const char *part,
		size_t len)
{
	snprintf(err, n, fmt, (int)len, part);
	return -1;
}

/* The condition "KIND>VALUE" in s[0..len). */
static int condition(const char *s, size_t len, struct trig_spec *t,
		     char *err, size_t n)
{
	const char *gt = memchr(s, '>', len);
	char value[32];
	size_t k, wl;

	if (!gt)
		return fail(err, n, "'%.*s' is no condition (latency>TIME, "
			    "blocked>TIME, D>TIME, runqueue>N or name:NAME)",
			    s, len);
	wl = (size_t)(gt - s);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (strlen(kinds[k].word) == wl && !memcmp(kinds[k].word, s, wl))
			break;
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return fail(err, n, "unknown condition '%.*s' (latency, "
			    "blocked, D or runqueue)", s, wl);
	t->kind = kinds[k].kind;
	len -= wl + 1;
	if (!len || len >= sizeof(value))
		return fail(err, n, "bad value '%.*s' after '>'", gt + 1, len);
	memcpy(value, gt + 1, len);
	value[len] = 0;
	if (t->kind == TRIG_RUNQUEUE) {
		if (parse_u64(value, 1, 100000, &t->threshold))
			return fail(err, n, "bad thread count '%.*s' (1 to "
				    "100000)", value, len);
	} else if (parse_duration_ns(value, &t->threshold) || !t->threshold) {
		return fail(err, n, "bad time '%.*s' (e.g. 20ms, 1.5s)", value,
			    len);
	}
	return 0;
}

/* One narrowing term "KEY=VALUE". */
static int term(const char *s, size_t len, struct trig_spec *t, char *err,
		size_t n)
{
	const char *eq = memchr(s, '=', len);
	const char *v = eq ? eq + 1 : NULL;
	size_t vl = eq ? len - (size_t)(v - s) : 0;
	char num[16];
	uint64_t pid;

	if (!eq || !vl)
		return fail(err, n, "bad term '%.*s' (comm=NAME, pid=N or "
			    "cgroup=PATH)", s, len);
	if (((size_t)(eq - s) == 4 && !memcmp(s, "comm", 4) && t->comm[0]) ||
	    ((size_t)(eq - s) == 3 && !memcmp(s, "pid", 3) && t->pid) ||
	    ((size_t)(eq - s) == 6 && !memcmp(s, "cgroup", 6) && t->cgroup[0]))
		return fail(err, n, "'%.*s' given twice (a trigger narrows by "
			    "one of each)", s, (size_t)(eq - s) + 1);
	if ((size_t)(eq - s) == 4 && !memcmp(s, "comm", 4)) {
		if (vl >= sizeof(t->comm))
			return fail(err, n, "comm '%.*s' is longer than a "
				    "thread name (15 bytes)", v, vl);
		memcpy(t->comm, v, vl);
		t->comm[vl] = 0;
	} else if ((size_t)(eq - s) == 3 && !memcmp(s, "pid", 3)) {
		if (vl >= sizeof(num))
			return fail(err, n, "bad pid '%.*s'", v, vl);
		memcpy(num, v, vl);
		num[vl] = 0;
		if (parse_u64(num, 1, 0x3fffffff, &pid))
			return fail(err, n, "bad pid '%.*s'", v, vl);
		t->pid = (int32_t)pid;
	} else if ((size_t)(eq - s) == 6 && !memcmp(s, "cgroup", 6)) {
		if (vl >= sizeof(t->cgroup) || v[0] != '/')
			return fail(err, n, "bad cgroup '%.*s' (a path from "
				    "the cgroup root, e.g. /system.slice)", v, vl);
		memcpy(t->cgroup, v, vl);
		t->cgroup[vl] = 0;
		while (vl > 1 && t->cgroup[vl - 1] == '/')
			t->cgroup[--vl] = 0;
	} else {
		return fail(err, n, "unknown term '%.*s' (comm=, pid= or "
			    "cgroup=)", s, (size_t)(eq - s) + 1);
	}
	return 0;
}

int trig_spec_parse(const char *s, struct trig_spec *t, char *err,
		    size_t errlen)
{
	size_t len = strlen(s), i = 0, part;
	bool first = true;

	memset(t, 0, sizeof(*t));
	if (!len || len >= sizeof(t->text))
		return fail(err, errlen, "'%.*s': a trigger is 1 to 159 bytes",
			    s, len > 40 ? 40 : len);
	memcpy(t->text, s, len + 1);
	if (!strncmp(s, "name:", 5)) {
		const char *nm = s + 5;
		size_t k, nl = len - 5;

		for (k = 0; k < nl; k++)
			if (!((nm[k] >= 'a' && nm[k] <= 'z') ||
			      (nm[k] >= 'A' && nm[k] <= 'Z') ||
			      (nm[k] >= '0' && nm[k] <= '9') ||
			      strchr("._-", nm[k])))
				break;
		if (!nl || k < nl || nl >= sizeof(t->name))
			return fail(err, errlen, "bad trigger name '%.*s' (1 "
				    "to 63 of A-Z a-z 0-9 . _ -)", nm, nl);
		t->kind = TRIG_NAMED;
		memcpy(t->name, nm, nl + 1);
		return 0;
	}
	while (i < len) {
		while (i < len && (s[i] == ',' || s[i] == ' '))
			i++;
		if (i == len)
			break;
		for (part = 0; i + part < len && s[i + part] != ',' &&
			       s[i + part] != ' ';
		     part++)
			;
		if (first ? condition(s + i, part, t, err, errlen)
			  : term(s + i, part, t, err, errlen))
			return -1;
		first = false;
		i += part;
	}
	if (first)
		return fail(err, errlen, "'%.*s' holds no condition", s, len);
	return 0;
}

bool trig_cgroup_matches(const char *want, const char *path)
{
	size_t n = strlen(want);

	if (n == 1) /* "/" */
		return true;
	return !strncmp(path, want, n) && (path[n] == 0 || path[n] == '/');
}
