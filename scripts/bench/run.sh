#!/usr/bin/env bash
# Benchmarks of bpftrace-rec against the tools users would pick instead
# (issue 7), run by `make bench` as root. All contestants in one
# invocation, interleaved round by round; medians, spreads and ratios go to
# a JSON file and a table on stdout:
#   1. overhead on `taskset -c 0 perf bench sched pipe` and hackbench: no
#      recording, bpftrace-rec, perf record, bpftrace, and the floor (the
#      cheapest BPF recorder of the same events, scripts/bench/floor*.c);
#   2. cost per event: BPF run time per program (kernel.bpf_stats_enabled)
#      and the reader's CPU time per event, bpftrace-rec against the floor;
#      bpftrace-rec-all (--blocked-reason all) in phases 1 and 2 prices
#      the blocked reasons of S sleeps;
#   3. output size: bytes per event, bpftrace-rec's trace against perf.data;
#   4. encoder throughput on captured records (capture_raw, bench_encode);
#   5. highest event rate with zero drops at default settings (bench_load);
#   6. offline: clock conversions per second (bench_clock), and
#      scripts/bench-sync.sh when it exists;
#   7. report: events/s and peak RSS of `report` on a generated 1 GB trace.
#   8. manycore: N simulated CPUs (synth_rings: a test BPF program fills N
#      rings through BPF_PROG_TEST_RUN, the recorder's readers drain them):
#      drain rate on 64 full rings with 1, 2 and 4 reader threads (events/s
#      in all, and per second of reader CPU time: per reader thread), cost
#      of an idle drain pass over 8, 64 and 256 rings, memory at the
#      default budget for 2, 64 and 256 CPUs.
#
# Environment: ROUNDS (default 5, QUICK 2), QUICK=1 (small loads, a smoke
# run), RESULTS (default $OUT/bench-results.json), OUT (default build),
# BTR_BIN, BTR_TOOLS, BTR_FLOOR (default under $OUT), KEEP=1 keeps the
# scratch directory, PHASES (default "overhead cost encoder drops offline
# report manycore"), REPORT_SIZE.
# BTR_BIN_ALT=path adds a contestant "bpftrace-rec-alt" (another build of
# the recorder, e.g. with a change to bpf/sched.bpf.c) to phases 1 and 2,
# and to phase 7 (report: its CPU time, its speedup, whether its JSON is
# the same), for before/after numbers in one invocation; BTR_ALT_ARGS are
# its recording options (e.g. --callstacks, to price a change to the call
# stacks). Load sizes: PIPE_LOOPS,
# HACKBENCH_ARGS, COST_LOOPS, COST_ROUNDS, CAPTURE_S, LOAD_S, LOAD_RATES,
# CLOCK_N, ENC_T.
set -euo pipefail
export LC_ALL=C

log() { printf 'bench: %s\n' "$*" >&2; }
die() {
	printf 'bench: error: %s\n' "$*" >&2
	exit 1
}

QUICK=${QUICK:-0}
OUT=${OUT:-build}
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-2}
	PIPE_LOOPS=${PIPE_LOOPS:-30000}
	HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 2 -l 300}
	COST_LOOPS=${COST_LOOPS:-100000}
	COST_ROUNDS=${COST_ROUNDS:-1}
	CAPTURE_S=${CAPTURE_S:-1}
	LOAD_S=${LOAD_S:-1}
	LOAD_RATES=${LOAD_RATES:-500000 1000000 0}
	CLOCK_N=${CLOCK_N:-2000000}
	ENC_T=${ENC_T:-0.2}
else
	ROUNDS=${ROUNDS:-5}
	PIPE_LOOPS=${PIPE_LOOPS:-200000}
	HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 4 -l 1000}
	COST_LOOPS=${COST_LOOPS:-500000}
	COST_ROUNDS=${COST_ROUNDS:-3}
	CAPTURE_S=${CAPTURE_S:-3}
	LOAD_S=${LOAD_S:-2}
	LOAD_RATES=${LOAD_RATES:-250000 500000 750000 1000000 1250000 1500000 2000000 0}
	CLOCK_N=${CLOCK_N:-10000000}
	ENC_T=${ENC_T:-0.5}
fi
RESULTS=${RESULTS:-$OUT/bench-results.json}
PHASES=${PHASES:-overhead cost encoder drops offline report manycore}
BIN_ALT=${BTR_BIN_ALT:-}
# shellcheck disable=SC2206
ALT_ARGS=(${BTR_ALT_ARGS:-})
BIN=${BTR_BIN:-$OUT/bpftrace-rec}
TOOLS=${BTR_TOOLS:-$OUT/tests}
FLOOR=${BTR_FLOOR:-$OUT/bench/floor}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUN_TIMEOUT=600

[ "$(id -u)" = 0 ] || die "the benchmarks load BPF programs: run as root (sudo make bench)"
case $ROUNDS in '' | *[!0-9]* | 0) die "ROUNDS must be a positive number" ;; esac
for f in "$BIN" "$FLOOR" "$TOOLS/bench_rusage" "$TOOLS/bench_load" \
	"$TOOLS/bench_encode" "$TOOLS/bench_clock" "$TOOLS/capture_raw"; do
	[ -x "$f" ] || die "$f is missing: build with make (and make $FLOOR)"
done
for t in perf hackbench taskset bpftool jq timeout; do
	command -v "$t" >/dev/null || die "$t is missing: run make deps"
done
TASKSET=$(command -v taskset)
PERF=$(command -v perf)
HACKBENCH=$(command -v hackbench)
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if [ -n "$BIN_ALT" ]; then
	[ -x "$BIN_ALT" ] || die "BTR_BIN_ALT=$BIN_ALT is not an executable"
	BIN_ALT=$(cd "$(dirname "$BIN_ALT")" && pwd)/$(basename "$BIN_ALT")
fi

WORK=$(mktemp -d /tmp/btr-bench.XXXXXX)
J=$WORK/json
mkdir -p "$J"
STATS_SAVED=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
BG_PIDS=()

cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_SAVED" >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then
		log "scratch files kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

NOTES=()
note() {
	NOTES+=("$*")
	log "note: $*"
}

# ---- workloads and contestants ----------------------------------------

CONTESTANTS=(none bpftrace-rec perf bpftrace floor)
if ! command -v bpftrace >/dev/null; then
	note "bpftrace is not installed: contestant skipped (make deps installs it)"
	CONTESTANTS=(none bpftrace-rec perf floor)
fi
[ -z "$BIN_ALT" ] || CONTESTANTS+=(bpftrace-rec-alt)
# --blocked-reason all: a kernel stack walk at every S or D switch-out
# (the default takes D sleeps only, which the loads here barely have)
CONTESTANTS+=(bpftrace-rec-all)
# --callstacks: a kernel and user stack record at every S or D switch-out,
# beside what users would run for the same stacks: perf record of
# sched_switch with call graphs
CONTESTANTS+=(bpftrace-rec-stacks perf-stacks)
WORKLOADS=(pipe hackbench)

# The bpftrace contestant: the same two events, every field, as text.
BT_PROG='tracepoint:sched:sched_switch { printf("%llu %d %s %d %d %lld %s %d %d\n", nsecs, cpu, args->prev_comm, args->prev_pid, args->prev_prio, args->prev_state, args->next_comm, args->next_pid, args->next_prio); }
tracepoint:sched:sched_waking { printf("%llu %d %s %d %d %d\n", nsecs, cpu, args->comm, args->pid, args->prio, args->target_cpu); }'

workload_cmd() {
	case $1 in
	pipe) echo "$TASKSET -c 0 $PERF bench sched pipe -l $PIPE_LOOPS" ;;
	hackbench) echo "$HACKBENCH $HACKBENCH_ARGS" ;;
	esac
}

# The workload's own time, in seconds, from its output.
workload_time() {
	case $1 in
	pipe) awk '/Total time:/ { print $3; exit }' "$2" ;;
	hackbench) awk '/^Time:/ { print $2; exit }' "$2" ;;
	esac
}

# "recorded N events (sched_switch A, sched_waking B, ...), lost L; wrote
# W bytes" -> JSON {events, sched_switch, sched_waking, lost, bytes}
rec_summary_json() {
	sed -n 's/.*recorded \([0-9]*\) events (sched_switch \([0-9]*\), sched_waking \([0-9]*\),.*lost \([0-9]*\); wrote \([0-9]*\) bytes.*/{"events":\1,"sched_switch":\2,"sched_waking":\3,"lost":\4,"bytes":\5}/p' "$1" |
		tail -n 1
}

# Sums of the -v lines "cpu N: R program runs, N records read, D dropped"
rec_verbose_json() {
	awk '/program runs,/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "program") r += $i; if ($(i+1) == "dropped") d += $i } }
	     END { printf "{\"runs\":%d,\"dropped\":%d}\n", r, d }' "$1"
}

# Runs one contestant on one workload; appends a JSON line to $J/p1.jsonl
# and sets LAST_T to the workload's time (null when it failed).
run_contestant() {
	local c=$1 w=$2 r=$3 extra='{}' t rc=0 out cmd cpu
	out=$WORK/p1-$c-$w.log
	# Under bench_rusage, which writes the workload's CPU time (user+sys,
	# children included) to wl-ru.txt: CPU time barely moves when other
	# work on the machine delays the workload, wall time does.
	cmd="$TOOLS/bench_rusage $WORK/wl-ru.txt $(workload_cmd "$w")"
	rm -f "$WORK/wl-ru.txt"
	# shellcheck disable=SC2086
	case $c in
	none) timeout $RUN_TIMEOUT $cmd >"$out" 2>&1 || rc=$? ;;
	bpftrace-rec) timeout $RUN_TIMEOUT "$BIN" -o "$WORK/rec-$w.pb" -- $cmd >"$out" 2>&1 || rc=$? ;;
	bpftrace-rec-alt) timeout $RUN_TIMEOUT "$BIN_ALT" "${ALT_ARGS[@]}" -o "$WORK/alt-$w.pb" -- $cmd >"$out" 2>&1 || rc=$? ;;
	bpftrace-rec-all) timeout $RUN_TIMEOUT "$BIN" --blocked-reason all -o "$WORK/all-$w.pb" -- $cmd >"$out" 2>&1 || rc=$? ;;
	bpftrace-rec-stacks) timeout $RUN_TIMEOUT "$BIN" --callstacks -o "$WORK/stacks-$w.pb" -- $cmd >"$out" 2>&1 || rc=$? ;;
	perf) timeout $RUN_TIMEOUT "$PERF" record -q -o "$WORK/perf-$w.data" \
		-e sched:sched_switch -e sched:sched_waking -a -- $cmd >"$out" 2>&1 || rc=$? ;;
	perf-stacks) timeout $RUN_TIMEOUT "$PERF" record -q -g -o "$WORK/perfg-$w.data" \
		-e sched:sched_switch -a -- $cmd >"$out" 2>&1 || rc=$? ;;
	bpftrace) timeout $RUN_TIMEOUT bpftrace -o /dev/null -e "$BT_PROG" -c "$cmd" >"$out" 2>&1 || rc=$? ;;
	floor) timeout $RUN_TIMEOUT "$FLOOR" -- $cmd >"$out" 2>&1 || rc=$? ;;
	esac
	t=$(workload_time "$w" "$out")
	cpu=$(sed -n 's/^cpu_ns=\([0-9]*\).*/\1/p' "$WORK/wl-ru.txt" 2>/dev/null)
	if [ "$rc" != 0 ] || [ -z "$t" ]; then
		note "round $r: $c on $w failed (exit $rc): $(tail -n 2 "$out" | tr '\n' ' ')"
		t=null
	fi
	case $c in
	bpftrace-rec*) extra=$(rec_summary_json "$out") ;;
	floor) extra=$(sed -n 's/^floor: records=\([0-9]*\) dropped=\([0-9]*\).*/{"events":\1,"lost":\2}/p' "$out" | tail -n 1) ;;
	esac
	[ -n "$extra" ] || extra='{}'
	jq -nc --arg w "$w" --arg c "$c" --argjson r "$r" --argjson t "$t" \
		--argjson cpu "${cpu:-null}" --argjson x "$extra" \
		'{workload: $w, contestant: $c, round: $r, seconds: $t,
		  cpu_s: (if $cpu == null then null else $cpu / 1e9 end)} + $x' \
		>>"$J/p1.jsonl"
	LAST_T=$t
}

phase_overhead() {
	local r i k n=${#CONTESTANTS[@]} w c
	log "1. overhead: $ROUNDS rounds of ${#WORKLOADS[@]} workloads x $n contestants"
	for ((r = 1; r <= ROUNDS; r++)); do
		for w in "${WORKLOADS[@]}"; do
			local line="round $r/$ROUNDS $w:"
			for ((i = 0; i < n; i++)); do
				k=$(((i + r - 1) % n)) # rotate the order each round
				c=${CONTESTANTS[$k]}
				run_contestant "$c" "$w" "$r"
				line="$line $c=$LAST_T"
			done
			log "$line"
		done
	done
	# perf.data of the last round: size and samples
	for w in "${WORKLOADS[@]}"; do
		local f=$WORK/perf-$w.data
		[ -f "$f" ] || continue
		"$PERF" report -i "$f" --stats >"$WORK/perf-stats-$w.txt" 2>/dev/null || true
		jq -nc --arg w "$w" --argjson bytes "$(stat -c %s "$f")" \
			--argjson samples "$(awk '/^ *SAMPLE events:/ { print $3; exit }' "$WORK/perf-stats-$w.txt" || echo 0)" \
			--argjson lost "$(awk '/^ *LOST events:/ { print $3; exit }' "$WORK/perf-stats-$w.txt" | grep . || echo 0)" \
			'{workload: $w, bytes: $bytes, samples: ($samples // 0), lost: $lost}' >>"$J/perfsize.jsonl"
	done
}

# ---- 2. cost per event ---------------------------------------------------

# Waits until process $1 holds $2 BPF links (attached), at most 60 s.
wait_links() {
	local i n fd
	for ((i = 0; i < 600; i++)); do
		n=0
		for fd in /proc/"$1"/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf_link" ] && n=$((n + 1))
		done
		[ "$n" -ge "$2" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The child of process $1 (the wrapper), at most 10 s.
child_of() {
	local i p
	for ((i = 0; i < 100; i++)); do
		p=$(pgrep -P "$1" | head -n 1 || true)
		[ -n "$p" ] && echo "$p" && return 0
		sleep 0.1
	done
	return 1
}

# BPF statistics of the programs process $1 holds, as JSON lines
# {name, run_time_ns, run_cnt}.
prog_stats() {
	local fd id
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '/^prog_id:/ { print $2 }' "/proc/$1/fdinfo/${fd##*/}")
		[ -n "$id" ] || continue
		bpftool prog show id "$id" --json 2>/dev/null |
			jq -c '{name, run_time_ns: (.run_time_ns // 0), run_cnt: (.run_cnt // 0)}'
	done
}

cost_run() {
	local c=$1 rep=$2 ru out wpid pid cpu0 cpu1 ev
	ru=$WORK/ru-$c.txt
	out=$WORK/cost-$c.log
	rm -f "$ru"
	case $c in
	bpftrace-rec) "$TOOLS/bench_rusage" "$ru" "$BIN" -o "$WORK/cost.pb" >"$out" 2>&1 & ;;
	bpftrace-rec-alt) "$TOOLS/bench_rusage" "$ru" "$BIN_ALT" "${ALT_ARGS[@]}" -o "$WORK/cost.pb" >"$out" 2>&1 & ;;
	bpftrace-rec-all) "$TOOLS/bench_rusage" "$ru" "$BIN" --blocked-reason all -o "$WORK/cost.pb" >"$out" 2>&1 & ;;
	bpftrace-rec-stacks) "$TOOLS/bench_rusage" "$ru" "$BIN" --callstacks -o "$WORK/cost.pb" >"$out" 2>&1 & ;;
	floor) "$TOOLS/bench_rusage" "$ru" "$FLOOR" >"$out" 2>&1 & ;;
	esac
	wpid=$!
	BG_PIDS+=("$wpid")
	pid=$(child_of "$wpid") || die "cost: $c did not start"
	wait_links "$pid" 9 || die "cost: $c did not attach: $(tail -n 3 "$out")"
	cpu0=$(awk '{ print $1 }' "/proc/$pid/schedstat")
	"$TASKSET" -c 0 "$PERF" bench sched pipe -l "$COST_LOOPS" >/dev/null 2>&1
	prog_stats "$pid" >"$WORK/progs-$c.jsonl"
	kill -INT "$pid"
	wait "$wpid" || note "cost: $c exited with status $?"
	BG_PIDS=() # one at a time
	cpu1=$(sed -n 's/^cpu_ns=\([0-9]*\).*/\1/p' "$ru")
	case $c in
	bpftrace-rec*) ev=$(rec_summary_json "$out" | jq '.events // 0') ;;
	floor) ev=$(sed -n 's/^floor: records=\([0-9]*\).*/\1/p' "$out") ;;
	esac
	jq -sc --arg c "$c" --argjson rep "$rep" --argjson cpu0 "$cpu0" \
		--argjson cpu1 "${cpu1:-0}" --argjson ev "${ev:-0}" '
		def kind: if test("switch") then "sched_switch"
			elif test("waking") then "sched_waking" else "other" end;
		map(select(.name != "clock_sync") | . + {kind: (.name | kind)})
		| {contestant: $c, rep: $rep, events: $ev,
		   reader_cpu_ns: ($cpu1 - $cpu0),
		   programs: map({(.name): {kind, run_cnt, run_time_ns}}) | add}' \
		"$WORK/progs-$c.jsonl" >>"$J/cost.jsonl"
}

phase_cost() {
	local rep i who=(bpftrace-rec floor bpftrace-rec-all bpftrace-rec-stacks)
	[ -z "$BIN_ALT" ] || who+=(bpftrace-rec-alt)
	log "2. cost per event: $COST_ROUNDS rounds, $COST_LOOPS pipe loops, kernel.bpf_stats_enabled=1"
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
	for ((rep = 1; rep <= COST_ROUNDS; rep++)); do
		for ((i = 0; i < ${#who[@]}; i++)); do # rotated each round
			cost_run "${who[$(((i + rep - 1) % ${#who[@]}))]}" "$rep"
		done
	done
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_SAVED" >/dev/null
}

# ---- 4. encoder ----------------------------------------------------------

phase_encoder() {
	local raw=$WORK/raw.bin
	log "4. encoder: capturing ${CAPTURE_S}s of records, replaying them"
	"$TOOLS/capture_raw" -o "$raw" -d "$CAPTURE_S" -n 1000000 -- sh -c \
		"$HACKBENCH -g 2 -l 100000 >/dev/null 2>&1 & h=\$!; $TOOLS/bench_load -r 0 -d $CAPTURE_S >/dev/null; kill \$h 2>/dev/null; wait" \
		>"$WORK/capture.log" 2>&1 || die "capture_raw failed: $(tail -n 3 "$WORK/capture.log")"
	"$TOOLS/bench_encode" -r 5 -t "$ENC_T" "$raw" >"$WORK/encode.log" 2>&1 ||
		die "bench_encode failed: $(tail -n 3 "$WORK/encode.log")"
	awk '/^bench_encode / { printf "{"; for (i = 2; i <= NF; i++) { split($i, kv, "="); printf "%s\"%s\":%s", (i > 2 ? "," : ""), kv[1], kv[2] } print "}" }' \
		"$WORK/encode.log" >"$J/encoder.json"
	jq -c --arg cap "$(grep '^capture_raw:' "$WORK/capture.log" | tail -n 1)" '. + {capture: $cap}' \
		"$J/encoder.json" >"$J/encoder.tmp" && mv "$J/encoder.tmp" "$J/encoder.json"
}

# ---- 5. drops at increasing rates ----------------------------------------

# One step: bench_load at about $1 events/s (0: as fast as it goes) under the
# recorder; appends a JSON line, sets STEP_RATE and STEP_DROPPED.
drop_step() {
	local rate=$1 out=$WORK/load-$1.log info rec secs
	timeout $RUN_TIMEOUT "$BIN" -v -o "$WORK/load.pb" -- \
		"$TOOLS/bench_load" -r "$rate" -d "$LOAD_S" >"$out" 2>&1 ||
		note "drops: the step at $rate events/s failed: $(tail -n 1 "$out")"
	info=$(rec_verbose_json "$out")
	rec=$(rec_summary_json "$out")
	[ -n "$rec" ] || rec='{}'
	secs=$(sed -n 's/^bench_load .*seconds=\([0-9.]*\).*/\1/p' "$out")
	STEP_DROPPED=$(jq '.dropped' <<<"$info")
	STEP_RATE=$(awk -v n="$(jq '.runs' <<<"$info")" -v s="${secs:-0}" \
		'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
	log "  target $([ "$rate" = 0 ] && echo max || echo "$rate/s"): $STEP_RATE events/s, $STEP_DROPPED dropped"
	jq -nc --argjson target "$rate" --argjson rate "$STEP_RATE" \
		--argjson s "${secs:-0}" --argjson i "$info" --argjson rec "$rec" \
		'{target: $target, rate: $rate, seconds: $s, program_runs: $i.runs,
		  dropped: $i.dropped, recorded: ($rec.events // null)}' >>"$J/drops.jsonl"
}

# Rates go up until a step drops. The achieved rate is what counts: the
# generator's events per round trip vary (3 when the woken thread preempts
# the waker, 4 when it does not), so a target is only a knob.
phase_drops() {
	local rate
	log "5. drops: bench_load under bpftrace-rec (default settings), ${LOAD_S}s per step"
	for rate in $LOAD_RATES; do
		drop_step "$rate"
		[ "$STEP_DROPPED" = 0 ] || break
	done
}

# ---- 6. offline ----------------------------------------------------------

phase_offline() {
	log "6. offline: clock conversions ($CLOCK_N per case)"
	"$TOOLS/bench_clock" -n "$CLOCK_N" -r 5 >"$WORK/clock.log" 2>&1 ||
		die "bench_clock failed: $(tail -n 3 "$WORK/clock.log")"
	awk '/^bench_clock case=/ { split($2, c, "="); printf "{\"case\":\"%s\"", c[2]; for (i = 3; i <= NF; i++) { split($i, kv, "="); printf ",\"%s\":%s", kv[1], kv[2] } print "}" }' \
		"$WORK/clock.log" | jq -sc 'map({(.case): del(.case)}) | add' >"$J/clock.json"
	if [ -f "$TOP/scripts/bench-sync.sh" ]; then
		log "6. offline: scripts/bench-sync.sh"
		local rc=0
		OUT=$OUT QUICK=$QUICK BTR_BIN=$BIN bash "$TOP/scripts/bench-sync.sh" >"$WORK/sync.log" 2>&1 || rc=$?
		jq -Rsc --argjson rc "$rc" '{exit: $rc, output: (split("\n") | map(select(length > 0)) | .[-20:]),
			result: ([split("\n")[] | select(startswith("{")) | (try fromjson catch empty)] | last)}' \
			"$WORK/sync.log" >"$J/sync.json"
	else
		note "scripts/bench-sync.sh is not there yet: the sync benchmark (1 GB trace) was skipped"
		echo '{"skipped": "scripts/bench-sync.sh not present"}' >"$J/sync.json"
	fi
}

# ---- 7. report -------------------------------------------------------------

# `bpftrace-rec report` on a generated trace of REPORT_SIZE (default 1G,
# QUICK 100M; bench_sync gen: 4 CPUs whose bundles cover the same 12 ms
# (finely interleaved; one CPU's bundles do not overlap), 2000
# threads drawn from a Zipf distribution, the mix printed): events per
# second of CPU time (one core: the command is single-threaded) and peak
# RSS. Targets: 20 M events/s, 512 MB.
# One `report` run of BIN on the generated trace: "wall user sys maxrss"
# on stdout, its JSON in $2.
report_once() {
	local t=$WORK/report-time.txt
	/usr/bin/time -f '%e %U %S %M' -o "$t" \
		"$1" report --json --top 5 "$WORK/report-in.pb" >"$2" 2>"$WORK/report.err" ||
		die "report ($1) failed: $(tail -n 3 "$WORK/report.err")"
	cat "$t"
}

# The median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# 7. report: ROUNDS runs of bpftrace-rec (and of BTR_BIN_ALT, interleaved,
# for a before/after ratio in one invocation); medians of CPU time.
phase_report() {
	local size=${REPORT_SIZE:-$([ "$QUICK" = 1 ] && echo 100M || echo 1G)} w u s m ev gen r
	local cpu=() cpu_alt=() rss=0 rss_alt=0 alt=null same=null
	[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed for peak memory"
	log "7. report: generating a $size trace"
	"$TOOLS/bench_sync" gen "$size" "$WORK/report-in.pb" >"$WORK/report-gen.log"
	gen=$(grep '^bench_sync gen' "$WORK/report-gen.log" | tail -n 1)
	log "7. report: trace: ${gen#bench_sync gen }"
	for ((r = 0; r < ROUNDS; r++)); do
		read -r w u s m < <(report_once "$BIN" "$WORK/report.json")
		cpu+=("$(echo "$u + $s" | bc)")
		[ "$m" -gt "$rss" ] && rss=$m
		[ -n "$BIN_ALT" ] || continue
		read -r w u s m < <(report_once "$BIN_ALT" "$WORK/report-alt.json")
		cpu_alt+=("$(echo "$u + $s" | bc)")
		[ "$m" -gt "$rss_alt" ] && rss_alt=$m
	done
	ev=$(jq '.events' "$WORK/report.json")
	u=$(printf '%s\n' "${cpu[@]}" | median)
	if [ -n "$BIN_ALT" ]; then
		cmp -s "$WORK/report.json" "$WORK/report-alt.json" && same=true || same=false
		alt=$(jq -nc --argjson c "$(printf '%s\n' "${cpu_alt[@]}" | median)" \
			--argjson m "$rss_alt" --argjson ev "$ev" --argjson u "$u" --arg bin "$BIN_ALT" \
			'{bin: $bin, cpu_s: $c, peak_rss_kb: $m, events_per_cpu_s: ($ev / (if $c > 0 then $c else 1 end)),
			  speedup: (if $u > 0 then $c / $u else null end)}')
	fi
	jq -nc --argjson bytes "$(stat -c %s "$WORK/report-in.pb")" --argjson ev "$ev" \
		--argjson u "$u" --argjson m "$rss" --argjson rounds "$ROUNDS" \
		--argjson cpus "$(printf '%s\n' "${cpu[@]}" | jq -sc .)" \
		--arg gen "${gen#bench_sync gen }" --argjson losses "$(jq '.losses | length' "$WORK/report.json")" \
		--argjson alt "$alt" --argjson same "$same" \
		'{bytes: $bytes, events: $ev, rounds: $rounds, cpu_s: $u, cpu_s_each: $cpus, peak_rss_kb: $m,
		  events_per_cpu_s: ($ev / (if $u > 0 then $u else 1 end)),
		  trace: ($gen | split(" ") | map(split("=") | {(.[0]): (.[1] | tonumber? // .)}) | add),
		  loss_rows: $losses, alt: $alt, same_output_as_alt: $same,
		  target_events_per_s: 20000000, target_rss_kb: 524288}' | tee "$J/report.json" >&2
	rm -f "$WORK/report-in.pb"
}

# ---- 8. many cores, simulated ---------------------------------------------

# synth_rings' key=value line -> a JSON object
kv_json() {
	awk '{ printf "{"; for (i = 1; i <= NF; i++) { split($i, kv, "="); printf "%s\"%s\":%s", (i > 1 ? "," : ""), kv[1], kv[2] } print "}" }'
}

phase_manycore() {
	local n rate idle mem
	log "8. manycore: drain rate with 1, 2, 4 readers, idle pass, memory at the default budget (simulated CPUs)"
	rate=$(for n in 1 2 4; do "$TOOLS/synth_rings" rate -n 64 -r 1048576 -k 20 -t "$n" | kv_json; done | jq -sc .) ||
		die "synth_rings rate failed"
	idle=$(for n in 8 64 256; do "$TOOLS/synth_rings" idle -n "$n" -k 50000 | kv_json; done | jq -sc .) ||
		die "synth_rings idle failed"
	mem=$(for n in 2 64 256; do "$TOOLS/synth_rings" memory -n "$n" | kv_json; done | jq -sc .) ||
		die "synth_rings memory failed"
	jq -nc --argjson r "$rate" --argjson i "$idle" --argjson m "$mem" \
		'{drain: $r, idle: $i, memory: $m}' >"$J/manycore.json"
}

# ---- results -------------------------------------------------------------

assemble() {
	local meta notes
	meta=$(jq -nc --arg date "$(date -u +%FT%TZ)" --arg kernel "$(uname -r)" \
		--argjson cpus "$(nproc)" --argjson rounds "$ROUNDS" --argjson quick "$QUICK" \
		--arg pipe "$(workload_cmd pipe)" --arg hb "$(workload_cmd hackbench)" \
		--argjson cost_loops "$COST_LOOPS" --arg rev "$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
		'{date: $date, kernel: $kernel, cpus: $cpus, rounds: $rounds, quick: ($quick == 1),
		  commit: $rev, workloads: {pipe: $pipe, hackbench: $hb}, cost_pipe_loops: $cost_loops}')
	notes=$(printf '%s\n' "${NOTES[@]+"${NOTES[@]}"}" | jq -Rsc 'split("\n") | map(select(length > 0))')
	jq -n --argjson meta "$meta" --argjson notes "$notes" \
		--slurpfile p1 "$J/p1.jsonl" --slurpfile perfsize "$J/perfsize.jsonl" \
		--slurpfile cost "$J/cost.jsonl" --slurpfile enc "$J/encoder.json" \
		--slurpfile drops "$J/drops.jsonl" --slurpfile clock "$J/clock.json" \
		--slurpfile sync "$J/sync.json" --slurpfile report "$J/report.json" \
		--slurpfile manycore "$J/manycore.json" \
		-f "$TOP/scripts/bench/results.jq"
}

for f in p1.jsonl perfsize.jsonl cost.jsonl encoder.json drops.jsonl clock.json sync.json report.json manycore.json; do
	: >"$J/$f"
done
for p in $PHASES; do
	case $p in
	overhead | cost | encoder | drops | offline | report | manycore) "phase_$p" ;;
	*) die "unknown phase '$p' in PHASES (overhead cost encoder drops offline report manycore)" ;;
	esac
done
mkdir -p "$(dirname "$RESULTS")"
assemble >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
bash "$TOP/scripts/bench/table.sh" "$RESULTS"
log "results written to $RESULTS"
