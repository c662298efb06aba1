/* Unit tests of the user stacks' process maps and symbols
 * (record/maps.c, record/symbolize.c): executable mappings parsed from a
 * made-up /proc (ranges, offsets, paths with spaces, [vdso], the rest
 * skipped; [vdso] as the kernel's own image), read again once a pass on a miss, forgotten at the end of the
 * pass that saw the process go; and on this very program, its build id,
 * and the function at a pc named through the rel_pc Perfetto defines
 * (pc - start + exact_offset + load_bias) with libdwfl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/maps.h"
#include "record/symbolize.h"
#include "unit.h"

static char dir[] = "/tmp/btr-maps-XXXXXX";

static void write_maps(int pid, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/maps", dir, pid);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		perror(path);
}

static void remove_maps(int pid)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%d/maps", dir, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	rmdir(path);
}

static void test_parse(void)
{
	struct symbolizer *s = symbolizer_new();
	struct proc_maps *pm = proc_maps_new(s, dir);
	const struct user_map *m;

	write_maps(10,
		   "00400000-00401000 r--p 00000000 08:01 12 /no/such file\n"
		   "00401000-00402000 r-xp 00001000 08:01 12 /no/such file\n"
		   "7f0000000000-7f0000002000 r-xp 00000000 00:00 0 [vdso]\n"
		   "7f0000003000-7f0000004000 rw-p 00000000 00:00 0\n"
		   "garbage line\n");
	m = proc_maps_find(pm, 10, 0x401234);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->pm.path, "/no/such file");
		CHECK_EQ_I64(m->pm.start, 0x401000);
		CHECK_EQ_I64(m->pm.end, 0x402000);
		CHECK_EQ_I64(m->pm.exact_offset, 0x1000);
		CHECK(m->mod && !m->mod->elf && !m->pm.build_id_len);
	}
	/* [vdso]: this kernel's image, as the recorder's own */
	m = proc_maps_find(pm, 10, 0x7f0000001000);
	CHECK(m && !strcmp(m->pm.path, "[vdso]") && m->mod && m->mod->elf);
	CHECK(proc_maps_find(pm, 10, 0x400010) == NULL); /* not executable */
	/* a miss reads the maps again: twice a pass at most */
	CHECK_EQ_I64(proc_maps_stats(pm)->reads, 2);
	CHECK(proc_maps_find(pm, 10, 0x7f0000003010) == NULL);
	CHECK_EQ_I64(proc_maps_stats(pm)->reads, 2);
	write_maps(10, "00500000-00501000 r-xp 00000000 08:01 13 /lib/new\n");
	CHECK(proc_maps_find(pm, 10, 0x401234) != NULL); /* as known */
	CHECK(proc_maps_find(pm, 10, 0x500100) == NULL);
	CHECK_EQ_I64(proc_maps_stats(pm)->reads, 2); /* twice in this pass */
	proc_maps_end_pass(pm);
	m = proc_maps_find(pm, 10, 0x500100);
	CHECK(m && !strcmp(m->pm.path, "/lib/new"));
	CHECK_EQ_I64(proc_maps_stats(pm)->reads, 3);
	/* an exec: the next lookup reads the new program's maps, in the same
	 * pass; the old ones stay valid to its end */
	write_maps(10, "00600000-00601000 r-xp 00000000 08:01 14 /bin/next\n");
	proc_maps_note_exec(pm, 10);
	CHECK(m && !strcmp(m->pm.path, "/lib/new"));
	m = proc_maps_find(pm, 10, 0x600100);
	CHECK(m && !strcmp(m->pm.path, "/bin/next"));
	CHECK(proc_maps_find(pm, 10, 0x500100) == NULL);
	CHECK_EQ_I64(proc_maps_stats(pm)->reads, 5);
	proc_maps_end_pass(pm);
	write_maps(10, "00500000-00501000 r-xp 00000000 08:01 13 /lib/new\n");
	CHECK(proc_maps_find(pm, 10, 0x500100) != NULL);
	/* gone: kept to the end of the next pass (its records in rings read
	 * before its exit's may come then), then forgotten */
	proc_maps_note_gone(pm, 10);
	remove_maps(10);
	CHECK(proc_maps_find(pm, 10, 0x500100) != NULL);
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 10, 0x500100) != NULL);
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 10, 0x500100) == NULL);
	/* with more passes kept (reader threads): to the end of the third */
	proc_maps_keep_gone(pm, 3);
	write_maps(13, "00a00000-00a01000 r-xp 00000000 08:01 17 /bin/kept\n");
	CHECK(proc_maps_find(pm, 13, 0xa00100) != NULL);
	proc_maps_note_gone(pm, 13);
	remove_maps(13);
	proc_maps_end_pass(pm);
	proc_maps_end_pass(pm);
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 13, 0xa00100) != NULL);
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 13, 0xa00100) == NULL);
	proc_maps_keep_gone(pm, 1);
	CHECK_EQ_I64(proc_maps_stats(pm)->failed, 2); /* 10, 13 */
	/* gone before its exit was seen: a miss cannot read its maps again,
	 * and the maps it had stay */
	write_maps(12, "00700000-00701000 r-xp 00000000 08:01 15 /bin/gone\n");
	CHECK(proc_maps_find(pm, 12, 0x700100) != NULL);
	remove_maps(12);
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 12, 0x800100) == NULL);
	m = proc_maps_find(pm, 12, 0x700100);
	CHECK(m && !strcmp(m->pm.path, "/bin/gone"));
	/* a process never seen, gone: no maps, counted */
	CHECK(proc_maps_find(pm, 11, 0x1000) == NULL);
	CHECK_EQ_I64(proc_maps_stats(pm)->failed, 4);
	proc_maps_free(pm);
	symbolizer_free(s);
}

__attribute__((noinline)) int maps_test_marker_fn(int x)
{
	return x * 3 + 1;
}

static void test_self(void)
{
	struct symbolizer *s = symbolizer_new();
	struct proc_maps *pm = proc_maps_new(s, NULL);
	uint64_t pc = (uint64_t)(uintptr_t)&maps_test_marker_fn + 4, rel;
	const struct user_map *m = proc_maps_find(pm, getpid(), pc);
	const char *name;

	CHECK(m != NULL && m->mod != NULL);
	if (!m || !m->mod)
		goto out;
	CHECK(m->mod->elf);
	CHECK(m->pm.build_id_len > 0); /* gcc and clang link with one */
	rel = pc - m->pm.start + m->pm.exact_offset + m->pm.load_bias;
	name = symbolizer_name(s, m->mod, rel, true);
	CHECK(name != NULL);
	if (name)
		CHECK_STR(name, "maps_test_marker_fn");
	/* asked again: from the cache */
	CHECK(symbolizer_name(s, m->mod, rel, true) == name);
	CHECK_EQ_I64(symbolizer_stats(s)->addrs, 1);
	CHECK_EQ_I64(symbolizer_stats(s)->named, 1);
out:
	CHECK_EQ_I64(maps_test_marker_fn(1), 4);
	proc_maps_free(pm);
	symbolizer_free(s);
}

/* v as a mapping of this program's file (the kernel's dev_t), its path
 * into self; false when it cannot be read. */
static bool self_vma(struct btr_vma *v, char *self, size_t size)
{
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", self, size - 1);

	CHECK(n > 0 && !stat("/proc/self/exe", &st));
	if (n <= 0)
		return false;
	self[n] = '\0';
	v->ino = st.st_ino;
	v->dev = major(st.st_dev) << 20 | minor(st.st_dev);
	snprintf(v->name, sizeof(v->name), "%s", strrchr(self, '/') + 1);
	return true;
}

/* The mappings the BPF side saw (a process gone before its maps could
 * be read): found by pc, the file by its inode and the program the
 * process exec'd; forgotten at a later exec; a fork's pcs found in its
 * parent's maps. */
static void test_recorded(void)
{
	struct symbolizer *s = symbolizer_new();
	struct proc_maps *pm = proc_maps_new(s, dir);
	struct btr_vma v = { .start = 0x1000, .end = 0x3000 };
	const struct user_map *m;
	char self[4096];

	if (!self_vma(&v, self, sizeof(self)))
		goto out;
	proc_maps_note_exec_file(pm, 20, 100, self);
	proc_maps_note_vmas(pm, 20, 200, &v, 1);
	m = proc_maps_find(pm, 20, 0x1800);
	CHECK(m && !strcmp(m->pm.path, self) && m->mod && m->mod->elf);
	CHECK(m && m->pm.build_id_len > 0 && m->pm.exact_offset == 0);
	CHECK(proc_maps_find(pm, 20, 0x3800) == NULL);
	CHECK(proc_maps_stats(pm)->recorded == 1);
	/* a new program: what was seen of the old one goes */
	proc_maps_note_exec_file(pm, 20, 300, "/bin/true");
	proc_maps_end_pass(pm);
	CHECK(proc_maps_find(pm, 20, 0x1800) == NULL);
	/* a fork that did not exec: its parent's maps */
	write_maps(21, "00900000-00901000 r-xp 00000000 08:01 16 /bin/parent\n");
	proc_maps_note_fork(pm, 22, 21);
	m = proc_maps_find(pm, 22, 0x900100);
	CHECK(m && !strcmp(m->pm.path, "/bin/parent"));
	remove_maps(21);
out:
	proc_maps_free(pm);
	symbolizer_free(s);
}

/* A mapping record of a later exec read before that exec's record (from
 * another CPU's ring): its program names the text, not the one the
 * process ran before (a shell that exec'd it); the exec's record, or an
 * older exec's read later, changes nothing. */
static void test_exe_order(void)
{
	struct symbolizer *s = symbolizer_new();
	struct proc_maps *pm = proc_maps_new(s, dir);
	struct btr_vma v = { .start = 0x1000, .end = 0x3000 };
	const struct user_map *m;
	char self[4096];

	if (!self_vma(&v, self, sizeof(self)))
		goto out;
	proc_maps_note_exec_file(pm, 30, 100, "/bin/sh");
	proc_maps_note_exe(pm, 30, 250, self);
	proc_maps_note_vmas(pm, 30, 250, &v, 1);
	m = proc_maps_find(pm, 30, 0x1800);
	CHECK(m && m->mod && !strcmp(m->pm.path, self));
	/* the exec's own record, then an older exec's */
	proc_maps_note_exec_file(pm, 30, 200, self);
	proc_maps_note_exec_file(pm, 30, 50, "/bin/old");
	m = proc_maps_find(pm, 30, 0x1800);
	CHECK(m && m->mod && !strcmp(m->pm.path, self));
	/* a later mapping of the same file is named by the same program */
	v.start = 0x5000;
	v.end = 0x6000;
	proc_maps_note_vmas(pm, 30, 260, &v, 1);
	m = proc_maps_find(pm, 30, 0x5800);
	CHECK(m && m->mod && !strcmp(m->pm.path, self));
out:
	proc_maps_free(pm);
	symbolizer_free(s);
}

/* Frames in this process's own [vdso] are named from the kernel's image:
 * across its first page, the names found are the vDSO's functions. */
static void test_vdso(void)
{
	static const char *const known[] = {
		"__vdso_clock_gettime", "clock_gettime", "__vdso_gettimeofday",
		"gettimeofday", "__vdso_time", "time", "__vdso_getcpu", "getcpu",
		"__vdso_clock_getres", "clock_getres", "__vdso_getrandom",
		"getrandom", "__vdso_sgx_enter_enclave",
	};
	struct symbolizer *s = symbolizer_new();
	struct proc_maps *pm = proc_maps_new(s, NULL);
	uint64_t base = getauxval(AT_SYSINFO_EHDR), pc;
	const struct user_map *m = proc_maps_find(pm, getpid(), base + 0x800);
	int named = 0, other = 0;
	size_t k;

	CHECK(m && !strcmp(m->pm.path, "[vdso]") && m->mod && m->mod->elf);
	if (!m || !m->mod)
		goto out;
	CHECK(m->pm.build_id_len > 0);
	for (pc = m->pm.start; pc < m->pm.end && pc < m->pm.start + 4096;
	     pc += 8) {
		const char *name = symbolizer_name(
			s, m->mod, pc - m->pm.start + m->pm.load_bias, true);

		if (!name)
			continue;
		named++;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (!strcmp(name, known[k]))
				break;
		if (k == sizeof(known) / sizeof(known[0])) {
			fprintf(stderr, "vdso: unexpected %s\n", name);
			other++;
		}
	}
	CHECK(named > 0);
	CHECK_EQ_I64(other, 0);
out:
	proc_maps_free(pm);
	symbolizer_free(s);
}

/* One file seen under two devices and inodes (overlayfs: the program's
 * text from its mm on the overlay's device, its mappings on the layer's)
 * is one module, so one ModuleSymbols; another path is another module,
 * even of the same content. */
static struct sym_module *module_of(struct symbolizer *s, const char *path,
				     uint64_t dev, uint64_t ino)
{
	return symbolizer_module(s, &(struct sym_file){ path, NULL, dev, ino });
}

static void test_same_file(void)
{
	const uint64_t d1 = 1ull << 32 | 5, d2 = 9ull << 32 | 1;
	struct symbolizer *s = symbolizer_new();
	char self[4096];
	struct sym_module *a, *b, *c;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	if (n <= 0)
		goto out;
	self[n] = '\0';
	a = module_of(s, self, d1, 77);
	b = module_of(s, self, d2, 78);
	CHECK(a && b && a == b && a->build_id_len > 0);
	CHECK_EQ_I64(symbolizer_stats(s)->modules, 1);
	/* asked again under either: the same, nothing reopened */
	CHECK(module_of(s, self, d1, 77) == a);
	CHECK(module_of(s, self, d2, 78) == a);
	/* found by either inode */
	CHECK(symbolizer_find(s, d2, 78, strrchr(self, '/') + 1) == a);
	CHECK(symbolizer_find(s, d1, 77, strrchr(self, '/') + 1) == a);
	c = module_of(s, "/proc/self/exe", d2, 78);
	CHECK(c && c != a);
	CHECK_EQ_I64(symbolizer_stats(s)->modules, 2);
out:
	symbolizer_free(s);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_parse);
	RUN(test_self);
	RUN(test_vdso);
	RUN(test_recorded);
	RUN(test_exe_order);
	RUN(test_same_file);
	rmdir(dir);
	return unit_finish();
}
