/* The memory budget of a recording (--memory): how much goes to the
 * central buffer and how much to the BPF rings, for the CPUs the host has.
 *
 * What the budget counts: the central buffer; one ring per online CPU
 * (power of two, at least BUDGET_RING_FLOOR, at most BUDGET_RING_CAP); one
 * page of ring for every other CPU id up to the highest possible one (a CPU
 * that is possible but offline); the two header pages of each ring; the
 * reader's state for each online CPU (its bundle encoder and the staging
 * chunk of its sequence, BUDGET_READER_PER_CPU); and BUDGET_BASE for the
 * rest of the process (program, libraries, process tree, file writer, and
 * the peak of loading: the kernel's BTF, parsed by libbpf, takes about
 * 10 MiB while the programs load).
 *
 * How it is split, when neither -b nor --ringbuf-size is given: the buffer
 * takes half the budget, less if the rings at their floor would not fit
 * otherwise; the rings take what is left, up to their cap. Worked example,
 * the default 128 MiB on 192 online CPUs of 4 KiB pages: fixed =
 * 16 MiB + 192 x 160 KiB + 192 x 8 KiB = 47.5 MiB; rings at the floor
 * 192 x 256 KiB = 48 MiB; buffer = min(64 MiB, 128 - 47.5 - 48 = 32.5 MiB)
 * = 32.5 MiB; rings = (128 - 47.5 - 32.5) MiB / 192 = 256 KiB each.
 *
 * Overrides: -b fixes the buffer and --ringbuf-size the ring of each online
 * CPU (rounded up to a power of two). With --memory given, the budget sizes
 * what is not fixed and the whole must fit, else the budget is refused.
 * Without --memory, what is not fixed is sized as the default budget would
 * size it, and the total may exceed the default (-v prints it). A host too
 * big for the default budget (the rings at their floor and a buffer of
 * BUDGET_BUFFER_FLOOR do not fit: past about 230 online CPUs) gets a
 * default just big enough. */
#ifndef BTR_BUDGET_H
#define BTR_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUDGET_DEFAULT (128ull << 20)
/* The floor holds one 50 ms drain period of 50,000 events/s per CPU:
 * 2,500 records of 76 bytes on average (a switch is 80 bytes and a waking
 * 56, plus 8 bytes of ring header each) are 186 KiB. */
#define BUDGET_RING_FLOOR (256ull << 10)
#define BUDGET_RING_CAP (4ull << 20)
#define BUDGET_BUFFER_MIN (1ull << 20)
#define BUDGET_BUFFER_FLOOR (16ull << 20) /* of a grown default */
#define BUDGET_BASE (16ull << 20)
#define BUDGET_READER_PER_CPU (160ull << 10) /* 117 KiB + 32 KiB */
/* The kernel's text symbols, read from /proc/kallsyms when blocked
 * reasons or call stacks are recorded: about 5 MiB for 122k symbols (16 bytes each and
 * their names), with room for the arrays' growth. */
#define BUDGET_KERNEL_SYMBOLS (8ull << 20)
/* The user stacks of --callstacks: the maps of the processes that sleep,
 * the ELF files of their frames (mapped) and the symbol tables libdwfl
 * builds of them; a busy 2-CPU host measured about 8 MiB more Pss with
 * --callstacks than without, with room here for bigger programs. */
#define BUDGET_USER_STACKS (16ull << 20)
/* The kernel stacks' cache of --callstacks and --blocked-reason all
 * (bpf/kstack_cache.h): an LRU hash of 4096 threads' stacks (664 bytes
 * each, with the kernel's element header about 720), and a per-CPU
 * scratch of 17 KiB for every possible CPU id. */
#define BUDGET_KSTACK_CACHE (3ull << 20)
#define BUDGET_KSTACK_PER_CPU (17ull << 10)
/* The user stack slices of --callstacks (--stack-slice): a scratch of 36
 * KiB (the largest slice and a page) for every possible CPU id in the
 * kernel, and in the reader each CPU's last slice (32 KiB, made at its
 * first); the processes whose maps were read (known_procs, an LRU hash of
 * 8192), when they exec'd (exec_times, 8192), the programs they exec'd
 * (exe_paths, 4096 names) and the mapping record's per-CPU scratch. */
#define BUDGET_SLICE_PER_CPU (68ull << 10)
#define BUDGET_SLICE_MAPS (3ull << 20)
#define BUDGET_READER_OFFLINE (8ull << 10)
#define BUDGET_CHUNK (32ull << 10) /* the buffer is whole chunks */

struct budget_in {
	uint64_t memory;      /* --memory; 0 = the default */
	uint64_t buffer;      /* -b; 0 = from the budget */
	uint64_t ring;        /* --ringbuf-size; 0 = from the budget */
	uint32_t nslots;      /* rings: highest possible CPU id + 1 */
	uint32_t nonline;     /* online CPUs among them */
	uint64_t page;        /* page size */
	uint64_t extra;       /* optional parts (BUDGET_KERNEL_SYMBOLS,
			       * BUDGET_USER_STACKS, BUDGET_KSTACK_*,
			       * BUDGET_SLICE_*) */
};

struct budget {
	uint64_t memory;       /* the budget (given, default, or grown) */
	uint64_t total;        /* what the split below adds up to */
	uint64_t buffer;       /* central buffer */
	uint64_t ring_online;  /* each online CPU's ring */
	uint64_t ring_offline; /* each other CPU id's ring: one page */
	uint64_t rings;        /* all rings' data */
	uint64_t fixed;        /* ring headers, readers' state, the rest */
	uint32_t nonline, noffline;
	bool default_grown;    /* the host needed more than the default */
};

/* Splits the budget. Returns 0, or -1 with a one-line reason in err (the
 * budget or the overrides cannot work: a usage error). */
int budget_compute(const struct budget_in *in, struct budget *out,
		   char *err, size_t errlen);
/* Bytes as "64 MiB", "256 KiB" or "1234 B", exact, into buf. */
const char *budget_fmt(uint64_t bytes, char *buf, size_t len);

#endif
