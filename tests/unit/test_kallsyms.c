/* Unit tests of kernel symbolization (record/kallsyms.c): lookup by binary
 * search against a linear scan, ids stable within a function, addresses
 * outside every symbol, the section bounds, unsorted input and a table
 * whose addresses kptr_restrict hid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/kallsyms.h"
#include "unit.h"

static struct ksyms *from_text(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct ksyms *k;

	if (!f)
		return NULL;
	k = ksyms_read(f);
	fclose(f);
	return k;
}

static const char sample[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 t do_nanosleep\n"
	"ffffffff81001800 T hrtimer_nanosleep\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff82265800 T __sched_text_start\n"
	"ffffffff82265800 T __schedule\n"
	"ffffffff82266000 T schedule\n"
	"ffffffff8226e522 T __sched_text_end\n"
	"ffffffff8226e530 T __lock_text_start\n"
	"ffffffff8226ffb1 T __lock_text_end\n"
	"ffffffff81003000 t pipe_read\n" /* out of order */
	"ffffffffc0001000 t ext4_sync_file\t[ext4]\n"
	"garbage line\n";

static void test_lookup(void)
{
	struct ksyms *k = from_text(sample);
	uint64_t id = 0, id2 = 0;

	CHECK(k != NULL);
	CHECK(ksyms_usable(k));
	CHECK_EQ_I64(ksyms_count(k), 11); /* text symbols only */
	CHECK_STR(ksyms_name(k, 0xffffffff81001000ull, &id), "do_nanosleep");
	CHECK_STR(ksyms_name(k, 0xffffffff810017ffull, &id2), "do_nanosleep");
	CHECK_EQ_I64(id, id2);
	CHECK_STR(ksyms_name(k, 0xffffffff81001834ull, &id2), "hrtimer_nanosleep");
	CHECK(id2 != id);
	/* data symbols are not functions: the text before them wins */
	CHECK_STR(ksyms_name(k, 0xffffffff81002010ull, NULL), "hrtimer_nanosleep");
	CHECK_STR(ksyms_name(k, 0xffffffff81003020ull, NULL), "pipe_read");
	CHECK_STR(ksyms_name(k, 0xffffffffc0001044ull, NULL), "ext4_sync_file");
	/* two names at one address: always the same one */
	CHECK_STR(ksyms_name(k, 0xffffffff82265900ull, &id), "__sched_text_start");
	CHECK_STR(ksyms_name(k, 0xffffffff82265800ull, &id2), "__sched_text_start");
	CHECK_EQ_I64(id, id2);
	/* below the first symbol, far past the last */
	CHECK(ksyms_name(k, 0x1000, NULL) == NULL);
	CHECK(ksyms_name(k, 0xffffffffc0001000ull + (2u << 20), NULL) == NULL);
	CHECK_EQ_I64(ksyms_addr(k, "__sched_text_start"), 0xffffffff82265800ull);
	CHECK_EQ_I64(ksyms_addr(k, "__lock_text_end"), 0xffffffff8226ffb1ull);
	CHECK_EQ_I64(ksyms_addr(k, "schedule"), 0); /* not a bound */
	ksyms_free(k);
}

/* Binary search against a linear scan over many symbols. */
static void test_against_scan(void)
{
	size_t n = 5000, i, bad = 0;
	char *text = malloc(n * 40);
	uint64_t *addr = malloc(n * sizeof(*addr));
	size_t len = 0;
	struct ksyms *k;

	CHECK(text && addr);
	if (!text || !addr)
		goto out;
	for (i = 0; i < n; i++) {
		addr[i] = 0xffffffff81000000ull + i * 97 + (i % 7) * 13;
		len += (size_t)sprintf(text + len, "%016llx T f%zu\n",
				       (unsigned long long)addr[i], i);
	}
	k = from_text(text);
	CHECK(k != NULL);
	for (i = 0; k && i < n; i++) {
		char want[32];
		uint64_t probe = addr[i] + (i % 5);
		const char *got = ksyms_name(k, probe, NULL);

		if (i + 1 < n && probe >= addr[i + 1])
			continue;
		snprintf(want, sizeof(want), "f%zu", i);
		if (!got || strcmp(got, want))
			bad++;
	}
	CHECK_EQ_I64(bad, 0);
	ksyms_free(k);
out:
	free(text);
	free(addr);
}

/* What an unprivileged reader sees under kptr_restrict. */
static void test_restricted(void)
{
	struct ksyms *k = from_text("0000000000000000 T _stext\n"
				    "0000000000000000 t do_nanosleep\n");

	CHECK(k != NULL);
	CHECK(!ksyms_usable(k));
	CHECK(ksyms_name(k, 0, NULL) == NULL);
	CHECK(ksyms_name(k, 0xffffffff81001000ull, NULL) == NULL);
	ksyms_free(k);
	k = from_text("");
	CHECK(k != NULL && !ksyms_usable(k));
	ksyms_free(k);
}

/* The running kernel's own table (readable by root): the scheduler's
 * bounds are there and name functions. */
static void test_proc(void)
{
	struct ksyms *k = ksyms_load(NULL);

	CHECK(k != NULL);
	if (k && ksyms_usable(k)) {
		uint64_t s = ksyms_addr(k, "__sched_text_start");

		CHECK(s != 0);
		CHECK(ksyms_addr(k, "__sched_text_end") > s);
		CHECK(ksyms_name(k, s + 1, NULL) != NULL);
	}
	ksyms_free(k);
}

int main(void)
{
	RUN(test_lookup);
	RUN(test_against_scan);
	RUN(test_restricted);
	RUN(test_proc);
	return unit_finish();
}
