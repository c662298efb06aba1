/* Folded off-CPU stacks on stdout (folded.h). */
#include "report/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct line {
	char comm[NAME_MAX_LEN + 16];
	const char *stack;
	uint64_t ns;
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	return c ? c : strcmp(x->stack, y->stack);
}

/* A name without the folded format's separators. */
static void comm_of(const struct thread *t, const struct names *names,
		    char *out, size_t size)
{
	const char *n = names_str(names, t->name);
	size_t i;

	if (!n || !n[0]) {
		snprintf(out, size, "[%" PRId32 "]", t->tid);
		return;
	}
	snprintf(out, size, "%s", n);
	for (i = 0; out[i]; i++)
		if (out[i] == ';')
			out[i] = ':';
}

int folded_print(const struct offcpu *o, const struct model *m,
		 const struct names *names)
{
	struct line *v = malloc((o->ne ? o->ne : 1) * sizeof(*v));
	size_t i, j;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < o->ne; i++) {
		comm_of(&m->thr[o->e[i].thread], names, v[i].comm,
			sizeof(v[i].comm));
		v[i].stack = o->e[i].stack;
		v[i].ns = o->e[i].ns;
	}
	qsort(v, o->ne, sizeof(*v), cmp_line);
	for (i = 0; i < o->ne; i = j) {
		uint64_t ns = 0;

		for (j = i; j < o->ne && !cmp_line(&v[i], &v[j]); j++)
			ns += v[j].ns;
		if (ns >= 1000)
			printf("%s;%s %" PRIu64 "\n", v[i].comm, v[i].stack,
			       ns / 1000);
	}
	free(v);
	return 0;
}
