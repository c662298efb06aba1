/* The report's section of off-CPU call sites (offcpu.h): the threads of
 * most sampled off-CPU time, their heaviest stacks, and the short form
 * of a stack the text shows. */
#include "report/offcpu.h"

#include <stdio.h>
#include <string.h>

/* Whether a has more time than b (then the lower tid, for a stable
 * order). */
static bool heavier(uint64_t a_ns, int32_t a_tid, uint64_t b_ns,
		    int32_t b_tid)
{
	return a_ns != b_ns ? a_ns > b_ns : a_tid < b_tid;
}

/* Puts x into the sorted top list v[0..*n) of at most max. */
#define TOP_INSERT(v, n, max, x, heavier_than)                            \
	do {                                                               \
		size_t k_ = *(n) < (max) ? (*(n))++ : (max);               \
		for (; k_ > 0 && heavier_than((x), (v)[k_ - 1]); k_--)     \
			if (k_ < (max))                                     \
				(v)[k_] = (v)[k_ - 1];                      \
		if (k_ < (max))                                             \
			(v)[k_] = (x);                                      \
	} while (0)

#define THREAD_HEAVIER(x, y) heavier((x).ns, (x).tid, (y).ns, (y).tid)
#define SITE_HEAVIER(x, y) heavier((x).ns, 0, (y).ns, 0)

size_t offcpu_top(const struct offcpu *o, const struct model *m,
		  const struct names *names, struct offcpu_thread *out)
{
	size_t i = 0, j, n = 0;

	while (i < o->ne) { /* one thread's entries at a time */
		const struct thread *t = &m->thr[o->e[i].thread];
		struct offcpu_thread x = { .tid = t->tid, .tgid = t->tgid,
					   .machine = t->machine,
					   .name = names_str(names, t->name) };

		for (j = i; j < o->ne && o->e[j].thread == o->e[i].thread; j++) {
			struct offcpu_site s = { o->e[j].stack, o->e[j].ns,
						 o->e[j].count };

			x.ns += s.ns;
			x.count += s.count;
			TOP_INSERT(x.site, &x.nsite, OFFCPU_SITES, s,
				   SITE_HEAVIER);
		}
		TOP_INSERT(out, &n, OFFCPU_THREADS, x, THREAD_HEAVIER);
		i = j;
	}
	return n;
}

/* The scheduler's own frames, left out of a call site. */
static bool in_scheduler(const char *f, size_t len)
{
	static const char word[] = "schedule";
	size_t i;

	for (i = 0; i + sizeof(word) - 1 <= len; i++)
		if (!memcmp(f + i, word, sizeof(word) - 1))
			return true;
	return false;
}

/* Appends frame f[0..len) to buf (used so far), after sep when not the
 * first. */
static void put(char *buf, size_t size, size_t *used, const char *sep,
		const char *f, size_t len)
{
	int k;

	if (*used >= size)
		return;
	k = snprintf(buf + *used, size - *used, "%s%.*s", *used ? sep : "",
		     (int)len, f);
	*used += k > 0 ? (size_t)k : 0;
}

/* The frames of stack between begin and end (";"-separated, root first)
 * leaf first, at most max, the scheduler's leaf-side frames left out when
 * skip_sched (all of them: the leaf alone). */
static void leaf_frames(const char *begin, const char *end, size_t max,
			bool skip_sched, char *buf, size_t size, size_t *used,
			const char *first_sep)
{
	const char *p = end, *f;
	size_t n = 0, len;
	bool skipping = skip_sched;

	while (p > begin && n < max) {
		for (f = p; f > begin && f[-1] != ';'; f--)
			;
		len = (size_t)(p - f);
		if (skipping && in_scheduler(f, len) && f > begin) {
			p = f - 1;
			continue;
		}
		skipping = false;
		put(buf, size, used, n ? " < " : first_sep, f, len);
		n++;
		p = f > begin ? f - 1 : begin;
	}
}

void offcpu_site_short(const char *stack, char *buf, size_t size)
{
	const char *dash = strstr(stack, ";-;");
	const char *end = stack + strlen(stack);
	const char *user_end = dash, *kernel = dash ? dash + 3 : NULL;
	size_t used = 0;

	buf[0] = '\0';
	if (!dash && !strncmp(stack, "-;", 2)) /* kernel frames only */
		kernel = stack + 2;
	else if (!dash && end - stack >= 2 && !strcmp(end - 2, ";-"))
		user_end = end - 2; /* user frames only */
	else if (!dash) /* [no stack] */
		user_end = end;
	if (kernel)
		leaf_frames(kernel, end, 3, true, buf, size, &used, "");
	if (user_end)
		leaf_frames(stack, user_end, 2, false, buf, size, &used,
			    " | ");
	if (used >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}
