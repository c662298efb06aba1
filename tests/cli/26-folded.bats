#!/usr/bin/env bats
# Off-CPU stacks in the report: `report --folded` writes the stacks of a
# trace recorded with --callstacks as folded lines (comm;user frames;-;
# kernel frames, root first, a value in microseconds), each sample weighed
# by the sleep its switch-out began as the report's model counts it; the
# text and JSON report add the threads' off-CPU call sites. The workload
# (tests/tools/fpstacks.c) blocks on an empty pipe in reader_main ->
# outer_fn -> middle_fn -> inner_fn.

load helpers

bats_require_minimum_version 1.5.0

ROUNDS=5

setup_file() {
	need_root
	file_scratch folded
	"$BTR" --callstacks -o "$W/fp.pb" -- "$TOOLS/fpstacks" "$ROUNDS" \
		>"$W/fp.out" 2>"$W/fp.err" || fail "record failed: $(cat "$W/fp.err")"
	"$BTR" -o "$W/plain.pb" -- "$TOOLS/fpstacks" 2 \
		>"$W/plain.out" 2>"$W/plain.err" || fail "record failed: $(cat "$W/plain.err")"
	"$BTR" report --folded "$W/fp.pb" >"$W/fp.folded" 2>"$W/fp.folded.err" ||
		fail "report --folded failed: $(cat "$W/fp.folded.err")"
}

teardown_file() {
	file_scratch_remove
}

reader() {
	sed -n 's/^fpstacks reader=\([0-9]*\).*/\1/p' "$W/fp.out"
}

# sum: the sum of the values of folded lines on stdin.
sum() {
	awk '{ s += $NF } END { print s + 0 }'
}

# offcpu_ns TID ARGS...: off-CPU time (S + D, ns) of thread TID in
# `report --json ARGS`.
offcpu_ns() {
	local t=$1
	shift
	"$BTR" report --json --top 0 "$@" "$W/fp.pb" |
		jq -e --argjson t "$t" '.threads[] | select(.tid == $t) |
			.off_cpu.S_ns + .off_cpu.D_ns'
}

# sampled_ns TID ARGS...: the thread's sampled off-CPU time in the JSON
# call sites of `report --json --pid TID ARGS`.
sampled_ns() {
	local t=$1
	shift
	"$BTR" report --json --pid "$t" "$@" "$W/fp.pb" |
		jq -e --argjson t "$t" '[.offcpu_stacks[] | select(.tid == $t) |
			.offcpu_ns] | add // 0'
}

@test "folded: every line is frames, a space and a positive integer, one line per distinct stack" {
	[ -s "$W/fp.folded" ]
	[ ! -s "$W/fp.folded.err" ]
	# frames never empty, a value > 0
	run grep -Evc '^[^; ][^;]*(;[^;]+)+ [1-9][0-9]*$' "$W/fp.folded"
	[ "$output" = 0 ]
	# exactly one "-" frame between the user and the kernel frames
	[ "$(awk -F';' '{ n = 0; sub(/ [0-9]+$/, "", $NF)
		for (i = 2; i <= NF; i++) n += $i == "-"
		if (n != 1) print }' "$W/fp.folded" | wc -l)" -eq 0 ]
	[ -z "$(sed 's/ [0-9]*$//' "$W/fp.folded" | sort | uniq -d)" ]
}

@test "folded: the workload's stack, root first: user frames, -, kernel frames down to the scheduler" {
	grep -E '^fpstacks;(.*;)?reader_main;outer_fn;middle_fn;inner_fn;-;(.*;)?[a-z_]*pipe_read;(.*;)?schedule;__schedule [0-9]+$' "$W/fp.folded"
	# no kernel frame before the separator, no user frame after it
	! grep -E ';inner_fn;.*;inner_fn;|__schedule;.*;-;' "$W/fp.folded" || false
}

@test "folded: the weights add up to the model's off-CPU time of those sleeps" {
	local t us total sampled n
	t=$(reader)
	[ -n "$t" ]
	us=$("$BTR" report --folded --pid "$t" "$W/fp.pb" | sum)
	n=$("$BTR" report --folded --pid "$t" "$W/fp.pb" | wc -l)
	total=$(offcpu_ns "$t")
	sampled=$(sampled_ns "$t")
	echo "reader $t: folded ${us} us in $n lines, JSON sampled ${sampled} ns, model S+D ${total} ns"
	# every sleep of the reader has its sample: the same ns as the model
	[ "$sampled" -eq "$total" ]
	[ "$total" -gt 0 ]
	# each line rounds its sum down to microseconds
	[ "$us" -le $((total / 1000)) ]
	[ "$us" -ge $((total / 1000 - n)) ]
	# the reader waits on its pipe for most of the time the main thread
	# pauses (a round's pause is 10 ms or more)
	[ "$us" -ge $((ROUNDS * 5000)) ]
}

@test "folded: --comm, --pid, --cpu and --from/--to filter as the report's model counts" {
	local t all half part0 part1 cpus last mid
	t=$(reader)
	"$BTR" report --folded --comm fpstacks "$W/fp.pb" >"$TMP/comm"
	[ -s "$TMP/comm" ]
	[ "$(grep -vc '^fpstacks;' "$TMP/comm")" -eq 0 ]
	grep -q '^fpstacks;.*reader_main;' "$TMP/comm"
	"$BTR" report --folded --pid "$t" "$W/fp.pb" >"$TMP/pid"
	[ "$(grep -vc 'reader_main;outer_fn;middle_fn;inner_fn;-;' "$TMP/pid")" -eq 0 ]
	run "$BTR" report --folded --comm no-such-thread "$W/fp.pb"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# --cpu: by the CPU the sleep began on; the CPUs' parts add up
	cpus=$(nproc)
	last=$((cpus - 1))
	all=$(sampled_ns "$t")
	part0=$(sampled_ns "$t" --cpu 0)
	part1=0
	[ "$cpus" -lt 2 ] || part1=$(sampled_ns "$t" --cpu "1-$last")
	echo "cpu 0: $part0, others: $part1, all: $all"
	[ $((part0 + part1)) -eq "$all" ]
	# --from/--to: the sleeps' parts inside a window that begins halfway
	# through the reader's sleeps, as the model counts them (a fixed
	# 50 ms missed them all where the workload started later than that
	# after the first event; trace_processor tells where they are)
	mid=$(tp_query "$W/fp.pb" "select ((s.a + s.b) / 2 - (select min(ts)
		from sched)) / 1000000 as mid from (select min(ts) as a, max(ts + dur) as b
		from thread_state join thread using (utid) where tid = $t and
		state = 'S') as s")
	[ "$mid" -gt 0 ] || fail "no sleep of the reader in trace_processor: $mid"
	half=$(sampled_ns "$t" --from "${mid}ms" --to 10s)
	echo "from ${mid}ms: $half of $all; model: $(offcpu_ns "$t" --from "${mid}ms" --to 10s)"
	[ "$half" -eq "$(offcpu_ns "$t" --from "${mid}ms" --to 10s)" ]
	[ "$half" -gt 0 ]
	[ "$half" -lt "$all" ]
}

@test "folded: options of the tables are refused with it (64)" {
	local o
	for o in --json "--sort cpu" "--top 3" "--by process"; do
		# shellcheck disable=SC2086
		run "$BTR" report --folded $o "$W/fp.pb"
		echo "$o: $status $output"
		[ "$status" -eq 64 ]
		[[ "$output" == *"--folded writes stacks, not the tables: not with ${o%% *}"* ]]
	done
}

@test "folded: a trace without call stacks is an error naming the file" {
	run --separate-stderr "$BTR" report --folded "$W/plain.pb"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "bpftrace-rec: error: $W/plain.pb: no call stacks in the trace (record it with --callstacks)" ]
	# and the report of it has no call sites
	run "$BTR" report "$W/plain.pb"
	[ "$status" -eq 0 ]
	! grep -q "Off-CPU call sites" <<<"$output" || false
	"$BTR" report --json "$W/plain.pb" | jq -e '.offcpu_stacks == null'
}

@test "folded: the report's call sites: the workload's frames, off-CPU time and count, text and JSON" {
	local t
	t=$(reader)
	# the workload's thread alone: on a PREEMPT_RT kernel the kernel's
	# threads (ktimers, rcuc, ksoftirqd) sleep longer, and the list of
	# call sites is of the threads that slept longest
	run "$BTR" report --pid "$t" "$W/fp.pb"
	[ "$status" -eq 0 ]
	echo "$output" | sed -n '/^Off-CPU call sites/,$p'
	grep -q '^Off-CPU call sites' <<<"$output"
	grep -Eq "^ *$t fpstacks +[0-9.]+(us|ms|s) x[0-9]+$" <<<"$output"
	grep -Eq '^ +[0-9.]+(us|ms|s) x[0-9]+ +[a-z_]*pipe_read < .* \| inner_fn < middle_fn$' <<<"$output"
	"$BTR" report --json --pid "$t" "$W/fp.pb" >"$TMP/r.json"
	jq -e --argjson t "$t" '.offcpu_stacks | map(select(.tid == $t)) | .[0] |
		.comm == "fpstacks" and .samples >= 5 and .offcpu_ns > 0 and
		(.stacks[0].stack | test("reader_main;outer_fn;middle_fn;inner_fn;-;")) and
		(.stacks[0].site | test("pipe_read .*[|] inner_fn < middle_fn$")) and
		.stacks[0].samples >= 5' "$TMP/r.json"
	# all the threads, in order of sampled off-CPU time
	"$BTR" report --json "$W/fp.pb" >"$TMP/all.json"
	jq -e '.offcpu_stacks | length > 1' "$TMP/all.json"
	jq -e '.offcpu_stacks | map(.offcpu_ns) | . == (sort | reverse)' "$TMP/all.json"
}

@test "folded: a PerfSample that cannot be decoded is an error naming the offset" {
	local off
	"$TOOLS/gentrace" -o "$TMP/bad.pb" <<<"bundle cpu=0 seq=2 switch=1000,2000,3000 waking=1500"
	off=$(stat -c %s "$TMP/bad.pb")
	# a packet whose perf_sample (field 66) holds a field of wire type 7
	printf '\x0a\x04\x92\x04\x01\x07' >>"$TMP/bad.pb"
	run --separate-stderr "$BTR" report --folded "$TMP/bad.pb"
	echo "$status $stderr"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$TMP/bad.pb"*"offset $off"*"PerfSample"* ]]
	run --separate-stderr "$BTR" report "$TMP/bad.pb"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"offset $off"* ]]
}

@test "folded: --help names --folded and its unit" {
	run "$BTR" report --help
	[ "$status" -eq 0 ]
	grep -q -- "--folded" <<<"$output"
	grep -q "microseconds" <<<"$output"
	grep -q "report --folded trace.pb | flamegraph.pl" <<<"$output"
}
