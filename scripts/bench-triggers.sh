#!/usr/bin/env bash
# Benchmark of triggers (issue 26): the reader's CPU time per event with
# three trigger conditions set (latency>20ms, blocked>500ms, runqueue>8),
# against a recording without any, on the pipe load (`taskset -c 0 perf
# bench sched pipe`) and hackbench, in one invocation. Each round runs the
# two recorders side by side on the same workload (each has its own BPF
# programs and rings: both read every event), so that what else the
# machine does weighs on both alike. The reader's CPU is the recorder's,
# every thread's (schedstat), from the workload's start to a few drain
# periods after its end: start-up and the file write are left out.
#
#   scripts/bench-triggers.sh
#
# MODE=alone runs the two recorders one after the other instead, each
# alone on the machine with its own run of the workload (as an agent runs:
# one recorder), the order alternating by round; noisier, since the two
# runs do not share their conditions, but free of what two readers side
# by side do to each other (caches, CPU, the second one's BPF programs).
#
# Each recorder runs as an always-on agent does, its buffer (-b BUFFER,
# default 2M) wrapping: a warm-up run of the workload fills it before the
# measured one. Without it the measured run was the one that first
# touched the buffer's pages, and what the kernel did for those (huge
# pages or not) differed from recorder to recorder by up to a tenth of
# the reader's CPU.
#
# The baseline is the same binary without --trigger, or BTR_BIN_BASE (e.g.
# main's build before triggers); BASE_TRIGGERS=1 gives the baseline the
# three triggers too, to compare two builds of the watch. Environment:
# OUT (build folder), BTR_BIN, MODE (side, the default, or alone), REC_ARGS (options both recorders
# take, e.g. "--readers 2"), ROUNDS (default 8), WORKLOADS (default
# "pipe hackbench"), BUFFER, PIPE_LOOPS
# (default 500000), HACKBENCH_ARGS (default -g 4 -l 5000: with -l 1000 a
# run was some 110K events, 15 ms of the reader's CPU, and what a round
# costs besides its events (the processes hackbench starts, the triggers
# that fire) made its ratios range from 0.8 to 1.75 on a 2-CPU machine),
# QUICK=1 (2 rounds, smaller loads: hackbench's may not fill the buffer).
# Prints a line a round, then one JSON line: per workload the geometric
# mean of the per-round ratios (triggers / baseline) of CPU ns per event
# over rounds that alternate which recorder starts first (an even ROUNDS
# cancels what starting second costs), its 95% interval (ratio_ci95,
# Student's t over the rounds' log ratios: on a 2-CPU VM, 8 rounds of
# hackbench span some +-3%, so a change smaller than that needs more
# rounds, or both builds side by side), their median, and the target (at
# most 1.1 on both workloads; met is null unless both were measured).
# Needs root, perf, hackbench, jq.
set -euo pipefail
export LC_ALL=C

BENCH=bench-triggers
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
BIN=${BTR_BIN:-$OUT/bpftrace-rec}
BASE=${BTR_BIN_BASE:-$BIN}
MODE=${MODE:-side}
case $MODE in side | alone) ;; *) die "MODE is side or alone, not $MODE" ;; esac
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=${ROUNDS:-2} PIPE_LOOPS=${PIPE_LOOPS:-100000}
	HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 2 -l 500}
else
	ROUNDS=${ROUNDS:-8} PIPE_LOOPS=${PIPE_LOOPS:-500000}
	HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 4 -l 5000}
fi
# Three conditions as an agent sets them; the delay puts any snapshot past
# the measured window (what a snapshot costs is the SIGUSR1 path's, not a
# cost per event), the fired ones are counted.
read -r -a HB_ARGS <<<"$HACKBENCH_ARGS"
read -r -a EXTRA <<<"${REC_ARGS:-}"
BUFFER=${BUFFER:-2M}
WORKLOADS=${WORKLOADS:-pipe hackbench}
check_workloads
TRIGGERS=(--trigger 'latency>20ms' --trigger 'blocked>500ms' --trigger 'runqueue>8'
	--trigger-delay 60s)

[ "$(id -u)" = 0 ] || die "loads BPF programs: run as root"
need_built "$BIN" "$BASE"
need_tools perf hackbench taskset jq
WORK=$(mktemp -d /tmp/btr-bench-triggers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# CPU ns of every thread of process $1 so far.
proc_cpu() {
	awk '{ s += $1 } END { printf "%.0f\n", s }' /proc/"$1"/task/*/schedstat 2>/dev/null
}

# Starts recorder $1 (base or triggers) in the background; its pid in
# REC_PID once attached (it dropped its capabilities), its log in
# $WORK/$1.log.
start_rec() {
	local kind=$1 bin=$BIN args=() _ pid=
	[ "$kind" = base ] && bin=$BASE
	[ "$kind" = triggers ] || [ "${BASE_TRIGGERS:-0}" = 1 ] && args=("${TRIGGERS[@]}")
	"$bin" "${args[@]}" ${EXTRA[@]+"${EXTRA[@]}"} -b "$BUFFER" -o "$WORK/$kind.pb" >"$WORK/$kind.log" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		grep -Eq '^CapEff:[[:space:]]+00000000000[08]000[01]$' /proc/"$pid"/status 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || die "$kind did not start: $(tail -n 3 "$WORK/$kind.log")"
		sleep 0.1
	done
	REC_PID=$pid
}

# The workload $1 once.
workload() {
	workload_cmd "$1"
	"${WL_CMD[@]}" >/dev/null 2>&1
}

# Stops recorder $1 (base or triggers, pid $2), a child of this shell.
stop_rec() {
	kill -INT "$2"
	wait "$2" || die "$1 failed: $(tail -n 3 "$WORK/$1.log")"
}

# What stopped recorder $1 read, $2 its CPU ns over the window: prints
# "ns_per_event events fired" (fired: triggers', 0 for the base).
figures() {
	local ev fired
	ev=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$WORK/$1.log" | tail -n 1)
	fired=$(sed -n 's/.*triggers: \([0-9]*\) fired.*/\1/p' "$WORK/$1.log" | tail -n 1)
	[ "${ev:-0}" -gt 0 ] || die "$1 recorded no events"
	awk -v c="$2" -v e="$ev" -v f="${fired:-0}" 'BEGIN { printf "%.3f %d %d\n", c / e, e, f }'
}

# Recorder $1 alone over one run of workload $2: prints its figures.
run_alone() {
	local kind=$1 w=$2 p c0 c1
	start_rec "$kind"
	p=$REC_PID
	workload "$w" # the warm-up: the buffer filled
	c0=$(proc_cpu "$p")
	workload "$w"
	sleep 0.3 # a few drain periods: the rings read
	c1=$(proc_cpu "$p")
	stop_rec "$kind" "$p"
	figures "$kind" $((c1 - c0))
}

# One round. MODE=side: both recorders attached at once, so that they
# read the same events under the same conditions; each one's CPU from the
# workload's start to a drain period after its end (the file write left
# out: the same in both, and noisy). MODE=alone: each alone over its own
# run, $2 first. Prints "base_ns_per_event triggers_ns_per_event
# triggers_fired base_events triggers_events".
run_round() {
	local w=$1 first=$2 b t f eb et cb0 ct0 cb1 ct1 rb rt
	if [ "$MODE" = alone ]; then
		if [ "$first" = base ]; then
			rb=$(run_alone base "$w")
			rt=$(run_alone triggers "$w")
		else
			rt=$(run_alone triggers "$w")
			rb=$(run_alone base "$w")
		fi
		read -r b eb _ <<<"$rb"
		read -r t et f <<<"$rt"
		echo "$b $t $f $eb $et"
		return
	fi
	# the recorder started second reads slower (measured: 7% on the pipe
	# load, 13% on hackbench, two recorders without triggers side by
	# side): rounds alternate which one starts first
	if [ "$first" = base ]; then
		start_rec base
		b=$REC_PID
		start_rec triggers
		t=$REC_PID
	else
		start_rec triggers
		t=$REC_PID
		start_rec base
		b=$REC_PID
	fi
	workload "$w" # the warm-up: the buffers filled
	cb0=$(proc_cpu "$b")
	ct0=$(proc_cpu "$t")
	workload "$w"
	sleep 0.3 # a few drain periods: the rings read
	cb1=$(proc_cpu "$b")
	ct1=$(proc_cpu "$t")
	stop_rec base "$b"
	stop_rec triggers "$t"
	rb=$(figures base $((cb1 - cb0)))
	rt=$(figures triggers $((ct1 - ct0)))
	read -r b eb _ <<<"$rb"
	read -r t et f <<<"$rt"
	echo "$b $t $f $eb $et"
}

results=()
for w in $WORKLOADS; do
	for ((r = 1; r <= ROUNDS; r++)); do
		first=base
		((r % 2)) || first=triggers
		read -r b t f eb et < <(run_round "$w" "$first")
		log "$w round $r ($first first): base $b ns/event ($eb events), triggers $t ns/event ($et events, $f fired)"
		results+=("$(jq -nc --arg w "$w" --argjson b "$b" --argjson t "$t" \
			--argjson f "$f" '{workload: $w, base: $b, triggers: $t, fired: $f, ratio: ($t / $b)}')")
	done
done
printf '%s\n' "${results[@]}" | jq -L "$TOP/scripts/lib" -sc --arg base "$BASE" --arg bin "$BIN" --arg mode "$MODE" '
	include "stats";
	group_by(.workload) | map({(.[0].workload): {
		base_ns_per_event: (map(.base) | median),
		triggers_ns_per_event: (map(.triggers) | median),
		ratio: (map(.ratio) | geomean),
		ratio_ci95: (map(.ratio) | ci95),
		ratio_median: (map(.ratio) | median), fired: (map(.fired) | add),
		rounds: length}}) | add
	| . + {baseline: $base, binary: $bin, mode: $mode,
	       target: {limit: 1.1, met: (if .pipe and .hackbench
		then [.pipe.ratio, .hackbench.ratio] | max <= 1.1
		else null end)}}'
