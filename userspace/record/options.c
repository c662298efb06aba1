/* Command line of the record command. */
#include "record/options.h"

#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util/log.h"
#include "util/parse.h"
#include "buffer/central.h"
#include "record.h"
#include "trigger/limit.h"
#include "trigger/socket.h"

const char *argp_program_version = "bpftrace-rec " BTR_VERSION;
const char *argp_program_bug_address = NULL;

enum {
	OPT_RINGBUF_SIZE = 1001,
	OPT_MACHINE_NAME,
	OPT_SNAPSHOT_PERIOD,
	OPT_DRAIN_PERIOD,
	OPT_RAW_TP,
	OPT_FILL_POLICY,
	OPT_CLEAR_PERIOD,
	OPT_STREAM,
	OPT_FILE_WRITE_PERIOD,
	OPT_FLUSH_PERIOD,
	OPT_MAX_FILE_SIZE,
	OPT_BLOCKED_REASON,
	OPT_MEMORY,
	OPT_CALLSTACKS,
	OPT_READERS,
	OPT_KSTACK_CHECK,
	OPT_STACK_SLICE,
	OPT_FALLBACK,
	OPT_TRIGGER,
	OPT_TRIGGER_MODE,
	OPT_TRIGGER_DELAY,
	OPT_TRIGGER_MAX,
	OPT_TRIGGER_DISK,
	OPT_TRIGGER_SOCKET,
	OPT_TRIGGER_ALLOW,
};

static const char doc[] =
	"Record every CPU's scheduling activity into a Perfetto trace.\n"
	"\n"
	"Commands: record (default), dump FILE [--json], stats FILE [--json],\n"
	"sync -o OUT IN... (one timeline from several traces), report FILE\n"
	"(who ran, who waited and why, in the terminal), trigger NAME (to a\n"
	"recorder with --trigger name:NAME).\n"
	"\n"
	"Examples:\n"
	"  sudo bpftrace-rec -o trace.pb                 until Ctrl-C\n"
	"  sudo bpftrace-rec -d 10s -o trace.pb          for ten seconds\n"
	"  sudo bpftrace-rec -o trace.pb -- make -j8     while a command runs\n"
	"  sudo bpftrace-rec --stream -o long.pb         longer than the buffer\n"
	"  sudo bpftrace-rec --blocked-reason all        where S sleeps blocked too\n"
	"  sudo bpftrace-rec --callstacks                call stacks of sleeps\n"
	"  sudo bpftrace-rec -b 256M -o fr.pb &          flight recorder: kill -USR1\n"
	"                                                writes fr.1.pb, fr.2.pb...\n"
	"  sudo bpftrace-rec --trigger 'latency>20ms' -o fr.pb\n"
	"                                                keeps each 20 ms run delay\n"
	"                                                by itself: fr.1.pb, ...\n"
	"  bpftrace-rec stats trace.pb                   what was lost, where\n"
	"  bpftrace-rec dump trace.pb | head             read it back\n"
	"  bpftrace-rec report trace.pb                  CPU time, waits, wakers\n"
	"\n"
	"Open the trace at https://ui.perfetto.dev or with trace_processor."
	"\vTIME is a number with an optional unit: 10, 2.5s, 500ms, 1m. SIZE"
	" takes K, M or G. Exit status: 0 on success (also when stopped by"
	" Ctrl-C or SIGTERM), 1 on failure, 64 on a usage error.";

static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "Write the trace to FILE (default trace.pb, - for stdout)", 0 },
	{ "duration", 'd', "TIME", 0, "Stop after TIME (default: at Ctrl-C, SIGTERM, or when the command exits)", 0 },
	{ "memory", OPT_MEMORY, "SIZE", 0, "Memory budget of the recording, split between the buffer (at most half) and one BPF ring per online CPU (256K to 4M each; a page for offline CPUs). Default 128M, more on hosts too big for it; -v prints the split", 0 },
	{ "ringbuf-size", OPT_RINGBUF_SIZE, "SIZE", 0, "BPF ring buffer per online CPU, instead of the budget's (default: from --memory, 4M on small hosts)", 0 },
	{ "machine-name", OPT_MACHINE_NAME, "NAME", 0, "Machine name written into the trace (default: the hostname)", 0 },
	{ "clock-snapshot-period", OPT_SNAPSHOT_PERIOD, "TIME", 0, "Clock snapshot every TIME (default 1s)", 0 },
	{ "readers", OPT_READERS, "N", 0, "Threads that drain the rings, each a contiguous range of CPUs with as many online ones as the others (default: one per 64 online CPUs, rounded up; at most one per CPU id)", 0 },
	{ "drain-period", OPT_DRAIN_PERIOD, "TIME", 0, "Drain the rings every TIME (default 50ms)", 0 },
	{ "blocked-reason", OPT_BLOCKED_REASON, "d|all|none", 0, "Which sleeps record the kernel function they blocked in and their I/O wait (sched_blocked_reason): d, uninterruptible ones (default); all, S sleeps too (from the thread's cached kernel stack when it sleeps where it slept before, else a stack walk); none. With --callstacks S sleeps get theirs too, from the stack taken", 0 },
	{ "callstacks", OPT_CALLSTACKS, "all|kernel", OPTION_ARG_OPTIONAL, "At each sleeping (S or D) switch-out, the kernel and user call stacks of the task going to sleep (=kernel: the kernel's alone), written as a PerfSample on the sched/sched_switch timebase (flame graphs of where threads wait; user frames through frame pointers, named with elfutils; a kernel stack walk each, unless the thread sleeps where it slept before)", 0 },
	{ "stack-slice", OPT_STACK_SLICE, "SIZE", 0, "With --callstacks: bytes of each sleeping thread's user stack copied (as perf's --call-graph dwarf,SIZE) and unwound with the binaries' CFI (.eh_frame) where frame pointers are missing, joining the frame-pointer chain where it starts; 0 for frame pointers alone. Default 4K, at most 32K; a stack deeper than its slice is flagged as cut (kernels from 5.17)", 0 },
	{ "kstack-check", OPT_KSTACK_CHECK, NULL, OPTION_HIDDEN, "Test hook: check each kernel stack taken from the thread's cache against a walk (-v counts the differences)", 0 },
	{ "fallback", OPT_FALLBACK, "LIST", OPTION_HIDDEN, "Test hook: take the older path of each listed feature as a kernel without it does (raw-tp, switch-state, rdonly-cast, user-walk, kstack-cache, tai, find-vma, all; default: $BTR_FALLBACK)", 0 },
	{ "raw-tp", OPT_RAW_TP, NULL, 0, "Use raw tracepoints instead of tp_btf", 0 },
	{ "buffer-size", 'b', "SIZE", 0, "Central buffer, instead of the budget's (default: half of --memory, 64M, less on many-CPU hosts). With --memory the two overrides must fit in it; without, they add to the default", 0 },
	{ "fill-policy", OPT_FILL_POLICY, "ring|discard", 0, "When the buffer is full: overwrite the oldest data (ring, default) or drop new data (discard)", 0 },
	{ "incremental-state-clear-period", OPT_CLEAR_PERIOD, "TIME", 0, "Re-emit process names every TIME so a wrapped ring still has them (default 5s)", 0 },
	{ "stream", OPT_STREAM, NULL, 0, "Write the buffer into the file periodically: recordings longer than the buffer keep everything", 0 },
	{ "file-write-period", OPT_FILE_WRITE_PERIOD, "TIME", 0, "Write every TIME with --stream (default 2.5s)", 0 },
	{ "flush-period", OPT_FLUSH_PERIOD, "TIME", 0, "Commit partly filled buffer chunks every TIME (default: at each file write)", 0 },
	{ "max-file-size", OPT_MAX_FILE_SIZE, "SIZE", 0, "Stop recording when the file reaches SIZE", 0 },
	{ "trigger", OPT_TRIGGER, "SPEC", 0, "Act when SPEC holds (repeatable): latency>TIME (a thread runnable that long before it ran), blocked>TIME (an S or D sleep that long, to its waking), D>TIME (D sleeps only), runqueue>N (a CPU with more than N threads waiting), each narrowed by comm=NAME, pid=N or cgroup=PATH after a comma; or name:NAME, sent by `bpftrace-rec trigger NAME`. Each writes a Trigger packet and marks the thread and time in the trace", 0 },
	{ "trigger-mode", OPT_TRIGGER_MODE, "snapshot|stop", 0, "What a trigger does after --trigger-delay: write the buffer into the next OUTPUT.N.pb and go on recording (snapshot, default), or write OUTPUT and exit (stop)", 0 },
	{ "trigger-delay", OPT_TRIGGER_DELAY, "TIME", 0, "Keep recording TIME after a trigger before acting, so the aftermath is kept too (default 1s)", 0 },
	{ "trigger-max", OPT_TRIGGER_MAX, "N/TIME", 0, "Act on at most N triggers in any TIME (default 10/1h), counting the others as suppressed; none: act on every one (--trigger-disk still holds)", 0 },
	{ "trigger-disk", OPT_TRIGGER_DISK, "SIZE", 0, "Snapshot files written for triggers kept at most, the oldest removed first (default 1G; 0: no limit; SIGUSR1's are not counted)", 0 },
	{ "trigger-socket", OPT_TRIGGER_SOCKET, "PATH", 0, "Where name: triggers are received (default " TRIG_SOCKET_DEFAULT ")", 0 },
	{ "trigger-allow", OPT_TRIGGER_ALLOW, "LIST", 0, "Users (and @groups) besides root and the trace's owner who may send name: triggers", 0 },
	{ "quiet", 'q', NULL, 0, "No status line and no summary", 0 },
	{ "verbose", 'v', NULL, 0, "More messages, libbpf's included", 0 },
	{ 0 },
};

/* Whether the trigger just parsed (o->triggers[o->ntriggers]) is a named
 * one given before: only the first would ever be sent. */
static bool named_twice(const struct record_opts *o)
{
	const struct trig_spec *t = &o->triggers[o->ntriggers];
	uint32_t i;

	for (i = 0; t->kind == TRIG_NAMED && i < o->ntriggers; i++)
		if (o->triggers[i].kind == TRIG_NAMED &&
		    !strcmp(o->triggers[i].name, t->name))
			return true;
	return false;
}

static error_t bad_value(struct argp_state *st, const char *what,
			 const char *arg)
{
	argp_error(st, "invalid %s '%s'", what, arg);
	return EINVAL;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct record_opts *o = st->input;

	switch (key) {
	case 'o':
		if (!*arg)
			return bad_value(st, "output path", arg);
		o->output = arg;
		break;
	case 'd':
		if (parse_duration_ns(arg, &o->duration_ns) || !o->duration_ns)
			return bad_value(st, "duration", arg);
		break;
	case OPT_RINGBUF_SIZE:
		if (parse_size(arg, &o->ringbuf_size) ||
		    o->ringbuf_size < 4096 || o->ringbuf_size > (1ull << 30))
			return bad_value(st, "ring buffer size (4K to 1G)", arg);
		break;
	case OPT_MEMORY:
		if (parse_size(arg, &o->memory) || !o->memory ||
		    o->memory > (1ull << 40))
			return bad_value(st, "memory budget (up to 1T)", arg);
		break;
	case OPT_READERS: {
		char *end;
		unsigned long n = strtoul(arg, &end, 10);

		if (!*arg || *end || !n || n > 4096)
			return bad_value(st, "reader count (1 to 4096)", arg);
		o->readers = (uint32_t)n;
		break;
	}
	case OPT_MACHINE_NAME:
		o->machine_name = arg;
		break;
	case OPT_SNAPSHOT_PERIOD:
		if (parse_duration_ns(arg, &o->snapshot_period_ns) ||
		    o->snapshot_period_ns < 10000000ull)
			return bad_value(st, "clock snapshot period (at least 10ms)", arg);
		break;
	case OPT_DRAIN_PERIOD:
		if (parse_duration_ns(arg, &o->drain_period_ns) ||
		    o->drain_period_ns < 1000000ull ||
		    o->drain_period_ns > 10000000000ull)
			return bad_value(st, "drain period (1ms to 10s)", arg);
		break;
	case OPT_RAW_TP:
		o->fallback[KF_TP_BTF] = true;
		break;
	case OPT_FALLBACK: {
		const char *bad;
		int n;

		if (kfeatures_parse_fallback(arg, o->fallback, &bad, &n)) {
			argp_error(st, "invalid --fallback '%.*s' (%s)", n, bad,
				   kfeatures_fallback_names());
			return EINVAL;
		}
		break;
	}
	case OPT_KSTACK_CHECK:
		o->kstack_check = true;
		break;
	case OPT_STACK_SLICE: {
		uint64_t v;

		if (parse_size(arg, &v) || v > BTR_SLICE_MAX)
			return bad_value(st, "stack slice (0 to 32K)", arg);
		o->stack_slice = (uint32_t)v;
		break;
	}
	case OPT_CALLSTACKS:
		o->callstacks = true;
		if (arg && strcmp(arg, "kernel") == 0)
			o->kernel_stacks_only = true;
		else if (arg && strcmp(arg, "all") != 0)
			return bad_value(st, "call stacks (all or kernel)", arg);
		break;
	case OPT_BLOCKED_REASON:
		if (strcmp(arg, "d") == 0)
			o->blocked_mode = BTR_BLOCKED_D;
		else if (strcmp(arg, "all") == 0)
			o->blocked_mode = BTR_BLOCKED_ALL;
		else if (strcmp(arg, "none") == 0)
			o->blocked_mode = BTR_BLOCKED_NONE;
		else
			return bad_value(st, "blocked reason (d, all or none)", arg);
		break;
	case 'b':
		if (parse_size(arg, &o->buffer_size) ||
		    o->buffer_size < (64ull << 10) || o->buffer_size > (64ull << 30))
			return bad_value(st, "buffer size (64K to 64G)", arg);
		break;
	case OPT_FILL_POLICY:
		if (strcmp(arg, "ring") == 0)
			o->fill_policy = FILL_RING;
		else if (strcmp(arg, "discard") == 0)
			o->fill_policy = FILL_DISCARD;
		else
			return bad_value(st, "fill policy (ring or discard)", arg);
		break;
	case OPT_CLEAR_PERIOD:
		if (parse_duration_ns(arg, &o->clear_period_ns) ||
		    o->clear_period_ns < 100000000ull)
			return bad_value(st, "incremental state clear period (at least 100ms)", arg);
		break;
	case OPT_STREAM:
		o->stream = true;
		break;
	case OPT_FILE_WRITE_PERIOD:
		if (parse_duration_ns(arg, &o->file_write_period_ns) ||
		    o->file_write_period_ns < 100000000ull)
			return bad_value(st, "file write period (at least 100ms)", arg);
		break;
	case OPT_FLUSH_PERIOD:
		if (parse_duration_ns(arg, &o->flush_period_ns) ||
		    o->flush_period_ns < 10000000ull)
			return bad_value(st, "flush period (at least 10ms)", arg);
		break;
	case OPT_MAX_FILE_SIZE:
		if (parse_size(arg, &o->max_file_size) ||
		    o->max_file_size < 4096)
			return bad_value(st, "maximum file size (at least 4K)", arg);
		break;
	case OPT_TRIGGER: {
		char err[256];

		if (o->ntriggers == TRIG_MAX) {
			argp_error(st, "more than %d --trigger options", TRIG_MAX);
			return EINVAL;
		}
		if (trig_spec_parse(arg, &o->triggers[o->ntriggers], err,
				    sizeof(err))) {
			argp_error(st, "invalid --trigger '%s': %s", arg, err);
			return EINVAL;
		}
		if (named_twice(o)) {
			argp_error(st, "--trigger '%s' given twice", arg);
			return EINVAL;
		}
		o->ntriggers++;
		break;
	}
	case OPT_TRIGGER_MODE:
		if (strcmp(arg, "snapshot") && strcmp(arg, "stop"))
			return bad_value(st, "trigger mode (snapshot or stop)", arg);
		o->trigger_stop = !strcmp(arg, "stop");
		o->trigger_set = true;
		break;
	case OPT_TRIGGER_DELAY:
		if (parse_duration_ns(arg, &o->trigger_delay_ns) ||
		    o->trigger_delay_ns > 3600000000000ull)
			return bad_value(st, "trigger delay (0 to 1h)", arg);
		o->trigger_set = true;
		break;
	case OPT_TRIGGER_MAX: {
		char err[128];

		if (trig_rate_parse(arg, &o->trigger_max, &o->trigger_window_ns,
				    err, sizeof(err))) {
			argp_error(st, "invalid --trigger-max '%s': %s", arg, err);
			return EINVAL;
		}
		o->trigger_set = true;
		break;
	}
	case OPT_TRIGGER_DISK:
		if (parse_size(arg, &o->trigger_disk))
			return bad_value(st, "trigger disk budget", arg);
		o->trigger_set = true;
		break;
	case OPT_TRIGGER_SOCKET:
		if (!*arg)
			return bad_value(st, "trigger socket", arg);
		o->trigger_socket = arg;
		o->trigger_set = true;
		break;
	case OPT_TRIGGER_ALLOW:
		if (!*arg)
			return bad_value(st, "trigger allow list", arg);
		o->trigger_allow = arg;
		o->trigger_set = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (st->arg_num == 0 && strcmp(arg, "record") == 0)
			break;
		argp_error(st, "unexpected argument '%s' (a command goes after --)", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int record_opts_parse(int argc, char **argv, struct record_opts *o, bool *done)
{
	static const struct argp argp = { options, parse_opt, "[-- COMMAND [ARG...]]", doc, 0, 0, 0 };
	int i, end = argc, badlen;
	const char *env, *bad;

	memset(o, 0, sizeof(*o));
	o->output = "trace.pb";
	o->snapshot_period_ns = 1000000000ull;
	o->drain_period_ns = 50000000ull;
	o->stack_slice = RECORD_SLICE_DEFAULT;
	o->fill_policy = FILL_RING;
	o->clear_period_ns = 5000000000ull;
	o->blocked_mode = BTR_BLOCKED_D;
	o->trigger_delay_ns = 1000000000ull;
	o->trigger_max = 10;
	o->trigger_window_ns = 3600000000000ull;
	o->trigger_disk = 1ull << 30;
	o->trigger_socket = TRIG_SOCKET_DEFAULT;
	*done = false;
	env = getenv("BTR_FALLBACK");
	if (env && kfeatures_parse_fallback(env, o->fallback, &bad, &badlen)) {
		log_error("invalid BTR_FALLBACK '%.*s' (%s)", badlen, bad,
			  kfeatures_fallback_names());
		*done = true;
		return EXIT_USAGE;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			end = i;
			if (i + 1 < argc)
				o->command = argv + i + 1;
			break;
		}
	}
	/* record is the default command: `bpftrace-rec record` is
	 * bpftrace-rec */
	if (cmd_parse_args(&argp, end, argv, "bpftrace-rec", o)) {
		*done = true;
		return EXIT_USAGE;
	}
	if (end < argc && !o->command) {
		log_error("nothing after --: give a command to run");
		*done = true;
		return EXIT_USAGE;
	}
	if (!o->stream && (o->file_write_period_ns || o->max_file_size)) {
		log_error("--file-write-period and --max-file-size need --stream");
		*done = true;
		return EXIT_USAGE;
	}
	if (o->trigger_set && !o->ntriggers) {
		log_error("the --trigger-* options need --trigger");
		*done = true;
		return EXIT_USAGE;
	}
	if (!o->file_write_period_ns)
		o->file_write_period_ns = 2500000000ull;
	if (o->quiet && o->verbose) {
		log_error("-q and -v exclude each other");
		*done = true;
		return EXIT_USAGE;
	}
	return 0;
}
