#!/usr/bin/env bats
# perf script text printed without pids (`-F comm,tid,time,ip,sym,dso`):
# sync puts each sample in the process the traces of its machine give its
# thread (ProcessTree, sched_process_exit), and only for threads they do
# not know takes pid = tid; the report counts both. One real recording of
# a multithreaded workload (tests/tools/threads.c) under perf, shared by
# the tests of this file.

load helpers

# Records the workload once: $REC/trace.pb (bpftrace-rec), $REC/perf.data,
# the workload's "pid P" / "tid T NAME" lines in $REC/threads.out.
setup_file() {
	REC=$BATS_FILE_TMPDIR
	export REC
	need_root
	command -v perf >/dev/null || fail "perf is needed (linux-perf)"
	"$BTR" -q -o "$REC/trace.pb" -- perf record -q -k mono -F 999 \
		-o "$REC/perf.data" -- "$TOOLS/threads" 3 0.5 >"$REC/threads.out" \
		2>"$REC/perf.err" || fail "record failed: $(cat "$REC/perf.err")"
	perf script -i "$REC/perf.data" -F comm,tid,time,ip,sym,dso \
		>"$REC/perf.txt" 2>/dev/null || fail "perf script failed"
	perf script -i "$REC/perf.data" -F comm,pid,tid,time,ip,sym,dso \
		>"$REC/perf_pid.txt" 2>/dev/null || fail "perf script failed"
}

workload_pid() {
	awk '$1 == "pid" { print $2 }' "$REC/threads.out"
}

# The tids of the non-main threads, one a line.
worker_tids() {
	awk '$1 == "tid" { print $2 }' "$REC/threads.out"
}

# perf_samples FILE: "TS pid=P tid=T" of every sample in a synced trace.
perf_samples() {
	"$BTR" dump "$1" | awk '$3 == "perf_sample" { print $1, $4, $5 }'
}

# same_samples A B: the synced traces A and B have the same perf samples.
same_samples() {
	diff -u <(perf_samples "$1") <(perf_samples "$2") >"$TMP/samples.diff" ||
		fail "$(head -20 "$TMP/samples.diff")"
}

# The numbers of the report's pid line: "WITHOUT TRACED FROM_TID".
pid_counts() {
	sed -n 's/.*: \([0-9]*\) perf samples without a pid: \([0-9]*\) took the process of their thread from the traces of its machine, \([0-9]*\) pid = tid .*/\1 \2 \3/p' <<<"$1"
}

@test "the workload ran its threads under perf, which printed no pid" {
	[ "$(worker_tids | wc -l)" -eq 3 ]
	pid=$(workload_pid)
	for tid in $(worker_tids); do
		[ "$tid" -ne "$pid" ]
		# comm, then the tid right before the time: no pid/tid piece
		[ "$(awk -v t="$tid" '$2 == t && $3 ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/' "$REC/perf.txt" | wc -l)" -gt 20 ]
	done
	! grep -q "$pid/" "$REC/perf.txt" || false
	grep -q " $pid/$(worker_tids | head -1) " "$REC/perf_pid.txt"
}

@test "samples of a non-main thread take the process's pid from the trace" {
	pid=$(workload_pid)
	run "$BTR" sync -o "$TMP/out.pb" "$REC/trace.pb" "$REC/perf.txt"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" != *warning* ]]
	read -r without traced from_tid <<<"$(pid_counts "$output")"
	read_line=$(grep -o 'perf.txt: [0-9]* perf samples read' <<<"$output")
	[ "$without" -eq "$(awk '{ print $2 }' <<<"$read_line")" ]
	[ "$((traced + from_tid))" -eq "$without" ]
	perf_samples "$TMP/out.pb" >"$TMP/samples.txt"
	[ "$(wc -l <"$TMP/samples.txt")" -eq "$without" ]
	# every sample of the workload's threads is in its process
	for tid in $pid $(worker_tids); do
		[ "$(grep -c " tid=$tid\$" "$TMP/samples.txt")" -gt 20 ]
		[ "$(grep " tid=$tid\$" "$TMP/samples.txt" | grep -vc " pid=$pid ")" -eq 0 ]
	done
	workers=$(grep -c -E " tid=($(worker_tids | paste -sd'|'))\$" "$TMP/samples.txt")
	[ "$traced" -ge "$((workers + $(grep -c " tid=$pid\$" "$TMP/samples.txt")))" ]
}

@test "the pids from the trace are the ones perf prints with -F pid" {
	"$BTR" sync -q -o "$TMP/tid.pb" "$REC/trace.pb" "$REC/perf.txt"
	run "$BTR" sync -o "$TMP/pid.pb" "$REC/trace.pb" "$REC/perf_pid.txt"
	[ "$status" -eq 0 ]
	# every header has its pid: nothing to look up, no line about it
	[[ "$output" != *"without a pid"* ]]
	same_samples "$TMP/pid.pb" "$TMP/tid.pb"
	# the same whichever input comes first (on the same trace clock)
	"$BTR" sync -q --trace-clock BOOTTIME -o "$TMP/rev.pb" "$REC/perf.txt" "$REC/trace.pb"
	same_samples "$TMP/rev.pb" "$TMP/tid.pb"
}

@test "threads no trace of the machine knows keep pid = tid, counted" {
	pid=$(workload_pid)
	tid=$(worker_tids | head -1)
	# alone: no trace at all
	run "$BTR" sync -o "$TMP/alone.pb" "$REC/perf.txt"
	[ "$status" -eq 0 ]
	read -r without traced from_tid <<<"$(pid_counts "$output")"
	[ "$without" -gt 60 ]
	[ "$traced" -eq 0 ]
	[ "$from_tid" -eq "$without" ]
	perf_samples "$TMP/alone.pb" | grep -q " pid=$tid tid=$tid\$"
	! perf_samples "$TMP/alone.pb" | grep -q " pid=$pid tid=$tid\$" || false
	# with the trace, but perf's text on another machine: its tids are
	# not the trace's threads
	cat >"$TMP/m.json" <<-EOF
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "$REC/trace.pb"},
	  {"path": "$REC/perf.txt", "machine": {"name": "box"},
	   "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "$REC/trace.pb", "clock": "MONOTONIC"}}}]}}
	EOF
	run "$BTR" sync --manifest "$TMP/m.json" -o "$TMP/box.pb" "$REC/trace.pb" "$REC/perf.txt"
	[ "$status" -eq 0 ]
	echo "$output"
	read -r without2 traced from_tid <<<"$(pid_counts "$output")"
	[ "$without2" -eq "$without" ]
	[ "$traced" -eq 0 ]
	[ "$from_tid" -eq "$without" ]
	"$BTR" dump "$TMP/box.pb" | grep -q " perf_sample machine_id=1 pid=$tid tid=$tid "
}
