/* /proc/kallsyms read into one sorted array of text symbols (address,
 * name offset into one string arena) and a short list of the section
 * bounds the recorder asks for by name. */
#include "record/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* A return address this far past the last symbol is not in it. */
#define KSYMS_MAX_SPAN (1u << 20)

struct ksym {
	uint64_t addr;
	size_t name; /* offset into the arena */
};

struct ksyms {
	struct ksym *sym;
	size_t n, cap;
	char *arena;
	size_t used, arena_cap;
	bool nonzero;
	/* every symbol's name and address, for ksyms_addr(): only the few
	 * markers below are kept */
	struct ksym mark[4];
	size_t n_mark;
};

static const char *const markers[] = { "__sched_text_start",
				       "__sched_text_end", "__lock_text_start",
				       "__lock_text_end" };

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int add_name(struct ksyms *k, const char *name, size_t *off)
{
	size_t len = strlen(name) + 1;

	if (grow_array((void **)&k->arena, &k->arena_cap, k->used + len, 1,
		       1 << 16))
		return -ENOMEM;
	memcpy(k->arena + k->used, name, len);
	*off = k->used;
	k->used += len;
	return 0;
}

static int add_line(struct ksyms *k, char *line)
{
	char type, name[256];
	uint64_t addr;
	size_t i, off;

	if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
		return 0; /* not a symbol line */
	if (addr)
		k->nonzero = true;
	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (!strcmp(name, markers[i]) && k->n_mark < 4) {
			if (add_name(k, name, &off))
				return -ENOMEM;
			k->mark[k->n_mark++] = (struct ksym){ addr, off };
		}
	if (!is_text(type))
		return 0;
	if (grow_array((void **)&k->sym, &k->cap, k->n + 1, sizeof(*k->sym),
		       4096) ||
	    add_name(k, name, &off))
		return -ENOMEM;
	k->sym[k->n++] = (struct ksym){ addr, off };
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

struct ksyms *ksyms_read(FILE *f)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	char line[512];

	if (!k)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (add_line(k, line)) {
			ksyms_free(k);
			return NULL;
		}
	}
	if (ferror(f)) {
		ksyms_free(k);
		return NULL;
	}
	if (k->n)
		qsort(k->sym, k->n, sizeof(*k->sym), cmp_sym);
	return k;
}

struct ksyms *ksyms_load(const char *path)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	struct ksyms *k;

	if (!f)
		return NULL;
	k = ksyms_read(f);
	fclose(f);
	if (!k && !errno)
		errno = ENOMEM;
	return k;
}

bool ksyms_usable(const struct ksyms *k)
{
	return k && k->nonzero && k->n;
}

size_t ksyms_count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

const char *ksyms_name(const struct ksyms *k, uint64_t addr, uint64_t *id)
{
	size_t lo = 0, hi;

	if (!ksyms_usable(k) || addr < k->sym[0].addr)
		return NULL;
	hi = k->n; /* the answer is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* of several symbols at one address, the first in sorted order */
	while (lo > 0 && k->sym[lo - 1].addr == k->sym[lo].addr)
		lo--;
	if (lo == k->n - 1 && addr - k->sym[lo].addr > KSYMS_MAX_SPAN)
		return NULL;
	if (id)
		*id = lo + 1;
	return k->arena + k->sym[lo].name;
}

uint64_t ksyms_addr(const struct ksyms *k, const char *name)
{
	size_t i;

	for (i = 0; k && i < k->n_mark; i++)
		if (!strcmp(k->arena + k->mark[i].name, name))
			return k->mark[i].addr;
	return 0;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->sym);
	free(k->arena);
	free(k);
}
