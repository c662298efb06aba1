# shellcheck shell=bash
# What the benchmark scripts share, sourced after setting BENCH (the
# script's name in its messages): die and log, TOP (the project's root)
# and OUT (the build folder, from the environment's OUT, default build).
die() {
	printf '%s: error: %s\n' "$BENCH" "$*" >&2
	exit 1
}
log() { printf '%s: %s\n' "$BENCH" "$*" >&2; }

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MAKE_OUT=${OUT:-build}
case $MAKE_OUT in /*) OUT=$MAKE_OUT ;; *) OUT=$TOP/$MAKE_OUT ;; esac

# Dies unless each of the files given is an executable (built by make).
need_built() {
	local f
	for f; do
		[ -x "$f" ] || die "$f is missing: build with make"
	done
}

# Dies unless each workload of $WORKLOADS is one the benchmarks run.
check_workloads() {
	local w
	for w in $WORKLOADS; do
		case $w in pipe | hackbench) ;; *) die "WORKLOADS: pipe or hackbench, not $w" ;; esac
	done
}

# The command of workload $1 into the array WL_CMD: pipe, the pipe load
# on CPU 0 (PIPE_LOOPS round trips), or hackbench (HB_ARGS, an array).
workload_cmd() {
	# shellcheck disable=SC2034 # WL_CMD is the caller's
	case $1 in
	pipe) WL_CMD=(taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS") ;;
	hackbench) WL_CMD=(hackbench "${HB_ARGS[@]}") ;;
	esac
}

# Dies unless each of the commands given is installed (make deps).
need_tools() {
	local t
	for t; do
		command -v "$t" >/dev/null || die "$t is missing: run make deps"
	done
}
