/* Options of `bpftrace-rec record`, parsed with argp. */
#ifndef BTR_RECORD_OPTIONS_H
#define BTR_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"
#include "record/kfeatures.h"
#include "trigger/spec.h"

struct record_opts {
	const char *output;        /* -o; "-" for stdout */
	uint64_t duration_ns;      /* -d; 0 = until stopped */
	uint64_t memory;           /* --memory; 0 = the default budget */
	uint64_t ringbuf_size;     /* per online CPU; 0 until the plan */
	uint64_t snapshot_period_ns;
	uint64_t drain_period_ns;
	uint32_t readers;          /* --readers; 0 = from the online CPUs */
	const char *machine_name;  /* NULL = hostname */
	uint64_t buffer_size;      /* central buffer; 0 until the plan */
	int fill_policy;           /* enum fill_policy */
	uint64_t clear_period_ns;  /* incremental-state clears */
	bool stream;               /* write into the file periodically */
	uint64_t file_write_period_ns;
	uint64_t flush_period_ns;  /* 0 = at each file write only */
	uint64_t max_file_size;    /* 0 = no limit */
	bool fallback[KF_COUNT];   /* --raw-tp, --fallback, $BTR_FALLBACK */
	int blocked_mode;          /* enum btr_blocked_mode */
	bool callstacks;           /* call stacks of sleeping switch-outs */
	bool kernel_stacks_only;   /* --callstacks=kernel: no user stacks */
	uint32_t stack_slice;      /* --stack-slice: bytes of user stack
				    * copied at each sleep (0: frame
				    * pointers alone) */
	bool kstack_check;         /* --kstack-check (hidden): a test hook */
	/* --trigger and its options (trigger/spec.h) */
	struct trig_spec triggers[TRIG_MAX];
	uint32_t ntriggers;
	bool trigger_stop;          /* --trigger-mode stop */
	uint64_t trigger_delay_ns;  /* --trigger-delay */
	uint32_t trigger_max;       /* --trigger-max N/TIME: N (0: none,
				     * no limit) */
	uint64_t trigger_window_ns; /* and TIME */
	uint64_t trigger_disk;      /* --trigger-disk (0: no budget) */
	const char *trigger_socket; /* --trigger-socket */
	const char *trigger_allow;  /* --trigger-allow, or NULL */
	bool trigger_set;           /* some --trigger-* option given */
	bool quiet, verbose;
	char **command;            /* after "--", NULL-terminated, or NULL */
};

/* Fills o from argv. Returns 0 to go on, or an exit status (0 for --help
 * and --version, 64 for a usage error) with *done set. */
int record_opts_parse(int argc, char **argv, struct record_opts *o,
		      bool *done);

/* Whether the recording walks kernel stacks at sleeps, and so keeps the
 * threads' cache of them (bpf/kstack_cache.h): --callstacks, or the
 * blocked function of every sleep (--blocked-reason all). */
static inline bool record_opts_kstacks(const struct record_opts *o)
{
	return o->callstacks || o->blocked_mode == BTR_BLOCKED_ALL;
}

/* Whether user stacks are unwound from a copied slice of the stack. */
static inline bool record_opts_slice(const struct record_opts *o)
{
	return o->callstacks && !o->kernel_stacks_only && o->stack_slice;
}

/* --stack-slice's default: the leaf functions of a C library built without
 * frame pointers and the frames up to the first one with them, several
 * times over. */
#define RECORD_SLICE_DEFAULT 4096

#endif
