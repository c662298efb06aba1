#!/usr/bin/env bash
# Benchmark of what triggers cost the reader, taken apart (issue 26), in
# userspace alone: the records of a workload are captured once from the
# real BPF programs (tests/tools/capture_raw), then replayed through the
# reader's encoding by tests/tools/bench_encode, pinned to one CPU, in
# three ways that take turns within each round:
#   ring  - ring by ring, as a recorder without --trigger reads them;
#   time  - in time order across CPUs, as a recorder with --trigger reads
#           them (rings_drain_merged), without the watch;
#   lean  - in time order, through the watch of those conditions that are
#           not runqueue> ones (when there are both kinds): the threads'
#           states followed, the queues not counted;
#   watch - in time order, through the trigger watch of the three
#           conditions scripts/bench-triggers.sh sets (or TRIGGERS).
# time/ring is what reading in time order costs the encoder, watch/time
# what the watch costs (lean/time its threads' part, watch/lean its
# runqueue counts'), watch/ring both (the part of bench-triggers.sh's
# ratio that is the reader's own work: the rings' reading and what two
# recorders side by side do to each other are left out). Less noisy than
# bench-triggers.sh, and quick: a change to the watch or the encoder can
# be weighed here first.
#
#   scripts/bench-watch.sh
#
# Environment: OUT (build folder), ROUNDS (default 10), WORKLOADS (default
# "pipe hackbench"), TRIGGERS (the conditions, default "latency>20ms
# blocked>500ms runqueue>8"), CPU (the one the replays run on, default
# the last), PIPE_LOOPS (default 200000), HACKBENCH_ARGS (default -g 4 -l
# 2000).
# Prints a line a round, then one JSON line: per workload the median ns a
# record of each way, and per ratio (order, watch, total; with lean also
# threads and runqueue) its geometric mean over the rounds,
# 95% interval, and the ratio of the two ways' fastest rounds. Needs root
# (the capture), perf, hackbench, jq.
set -euo pipefail
export LC_ALL=C

BENCH=bench-watch
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
ROUNDS=${ROUNDS:-10}
WORKLOADS=${WORKLOADS:-pipe hackbench}
CPU=${CPU:-$(($(nproc) - 1))}
PIPE_LOOPS=${PIPE_LOOPS:-200000}
read -r -a HB_ARGS <<<"${HACKBENCH_ARGS:--g 4 -l 2000}"
SPECS=() LEAN_SPECS=()
for spec in ${TRIGGERS:-latency>20ms blocked>500ms runqueue>8}; do
	SPECS+=(-w "$spec")
	[[ $spec == runqueue* ]] || LEAN_SPECS+=(-w "$spec")
done
WAYS=(ring time watch)
if [ "${#LEAN_SPECS[@]}" -gt 0 ] && [ "${#LEAN_SPECS[@]}" -lt "${#SPECS[@]}" ]; then
	WAYS=(ring time lean watch)
fi
CAPTURE=$OUT/tests/capture_raw
ENCODE=$OUT/tests/bench_encode

[ "$(id -u)" = 0 ] || die "captures with the BPF programs: run as root"
need_built "$CAPTURE" "$ENCODE"
need_tools perf hackbench taskset jq
check_workloads
if ! [[ $ROUNDS =~ ^[0-9]+$ ]] || [ "$ROUNDS" -lt 2 ]; then
	die "ROUNDS: a number, 2 or more"
fi
WORK=$(mktemp -d /tmp/btr-bench-watch.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Records of workload $1 into $WORK/$1.raw.
capture() {
	workload_cmd "$1"
	"$CAPTURE" -o "$WORK/$1.raw" -d 120 -n 4000000 -- "${WL_CMD[@]}" \
		>/dev/null 2>"$WORK/$1.capture.log" ||
		die "capture of $1 failed: $(tail -n 3 "$WORK/$1.capture.log")"
	log "$1: $(grep -o 'records=[0-9]* dropped=[0-9]*' "$WORK/$1.capture.log")"
}

# ns a record of way $2 (ring, time, lean or watch) over $WORK/$1.raw.
replay() {
	local args=() rate
	case $2 in
	time) args=(-T) ;;
	lean) args=(-T "${LEAN_SPECS[@]}") ;;
	watch) args=(-T "${SPECS[@]}") ;;
	esac
	rate=$(taskset -c "$CPU" "$ENCODE" -r 3 -t 0.2 "${args[@]}" "$WORK/$1.raw" |
		sed -n 's/^bench_encode .* rate=\([0-9]*\) .*/\1/p')
	if [ -z "$rate" ] || [ "$rate" -eq 0 ]; then
		die "bench_encode gave no rate for $1 ($2)"
	fi
	awk -v r="$rate" 'BEGIN { printf "%.3f\n", 1e9 / r }'
}

results=()
for w in $WORKLOADS; do
	capture "$w"
	for ((r = 1; r <= ROUNDS; r++)); do
		declare -A ns=()
		# the ways take turns in a rotating order: what running first
		# or last costs falls on each alike
		line="$w round $r:" json=
		for ((k = 0; k < ${#WAYS[@]}; k++)); do
			way=${WAYS[$(((k + r) % ${#WAYS[@]}))]}
			ns[$way]=$(replay "$w" "$way")
		done
		for way in "${WAYS[@]}"; do
			line+=" $way ${ns[$way]}"
			json+="${json:+,}\"$way\":${ns[$way]}"
		done
		log "$line ns/record"
		results+=("{\"workload\":\"$w\",$json}")
	done
done
printf '%s\n' "${results[@]}" | jq -L "$TOP/scripts/lib" -sc '
	include "stats";
	# per ratio: the geometric mean over the rounds, its interval, and
	# the ratio of the fastest rounds of the two ways (the host at its
	# quietest: steadier where other guests come and go)
	def ratio(a; b): {ratio: (map(.[a] / .[b]) | geomean),
		ratio_ci95: (map(.[a] / .[b]) | ci95),
		ratio_of_min: ((map(.[a]) | min) / (map(.[b]) | min))};
	group_by(.workload) | map({(.[0].workload): ({
		ring_ns: (map(.ring) | median), time_ns: (map(.time) | median),
		watch_ns: (map(.watch) | median),
		order: ratio("time"; "ring"), watch: ratio("watch"; "time"),
		total: ratio("watch"; "ring"), rounds: length}
		+ if .[0].lean then {lean_ns: (map(.lean) | median),
			threads: ratio("lean"; "time"),
			runqueue: ratio("watch"; "lean")} else {} end)}) | add'
