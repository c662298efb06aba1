#!/usr/bin/env bats
# `report` on bounded and bad input: the loss header, empty and truncated
# traces, gzip, --json against the text, and every usage error.

load helpers

# A trace whose CPU 0 lost events between its two bundles.
lost_trace() {
	"$TOOLS/gentrace" -o "$TMP/lost.pb" <<-'EOF2'
	bundle cpu=0 seq=2 switch=1000,2000,3000,4000 waking=1500
	bundle cpu=0 seq=2 switch=5000,6000 lost
	EOF2
}

@test "report: lost events come first, and the figures are lower bounds" {
	lost_trace
	run "$BTR" report "$TMP/lost.pb"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "LOSSES: the trace lost events; every figure below is a lower bound (>=)." ]
	[ "${lines[2]}" = "  ftrace_cpu_has_data_loss[0] = 1" ]
	echo "$output" | grep -q '^ *TID .* >= *CPU '
	run "$BTR" report --json "$TMP/lost.pb"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.lower_bounds == true and
		(.losses | map(.name) | index("ftrace_cpu_has_data_loss")) != null'
}

@test "report: a trace without loss says so" {
	"$TOOLS/gentrace" -o "$TMP/t.pb" <<<"bundle cpu=0 seq=2 switch=1000,2000,3000 waking=1500"
	run "$BTR" report "$TMP/t.pb"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "Losses: none recorded." ]
}

@test "report: an event at the largest time ends (the merge once looped)" {
	"$TOOLS/gentrace" -o "$TMP/max.pb" <<-'EOF2'
	bundle cpu=0 seq=2 switch=1000,2000
	bundle cpu=1 seq=3 switch=9223372036854775807
	EOF2
	run timeout 20 "$BTR" report --json "$TMP/max.pb"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.events == 3'
}

@test "report: an empty trace is an error with a clear message" {
	: >"$TMP/empty.pb"
	run "$BTR" report "$TMP/empty.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/empty.pb: offset 0: empty file, not a trace"* ]]
	# a trace without scheduler events
	"$TOOLS/gentrace" -o "$TMP/none.pb" <<<"sysinfo name=x"
	run "$BTR" report "$TMP/none.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/none.pb: no scheduler events in the trace"* ]]
	run "$BTR" report "$TMP/missing.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/missing.pb"* ]]
}

@test "report: a truncated trace names the offset and exits 1" {
	record_cmd -q -- "$TOOLS/pingpong" 200
	local size
	size=$(stat -c %s "$TMP/trace.pb")
	head -c $((size - 7)) "$TMP/trace.pb" >"$TMP/cut.pb"
	run "$BTR" report "$TMP/cut.pb"
	echo "$output" | tail -3
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/cut.pb: offset "*"(the report covers the trace before it)"* ]]
	# garbage in the middle: an error naming the file and offset
	{ head -c 200 "$TMP/trace.pb"; printf '\x0a\x05\xff\xff\xff\xff\xff'; } >"$TMP/bad.pb"
	run "$BTR" report "$TMP/bad.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/bad.pb"*"offset"* ]]
}

@test "report: --json is valid and has the figures of the text; gzip input" {
	record_cmd -q -- "$TOOLS/pingpong" 500
	gzip -k "$TMP/trace.pb"
	"$BTR" report --json --top 0 "$TMP/trace.pb.gz" >"$TMP/r.json"
	jq -e '.threads | length > 0' "$TMP/r.json"
	jq -r '.threads[] | "\(.tid) \(.switches_voluntary) \(.switches_involuntary) \(.latency.count)"' \
		"$TMP/r.json" | sort -n >"$TMP/json.fig"
	"$BTR" report --top 0 "$TMP/trace.pb" |
		awk '/^Threads/ { t = 1; getline; next } /^$/ { t = 0 } t { print $1, $6, $7, $8 }' |
		sort -n >"$TMP/text.fig"
	diff "$TMP/json.fig" "$TMP/text.fig"
	# --by process: as many threads as rows of the thread table
	"$BTR" report --json --by process --top 0 "$TMP/trace.pb" >"$TMP/p.json"
	[ "$(jq '[.processes[].threads] | add' "$TMP/p.json")" = "$(jq '.threads | length' "$TMP/r.json")" ]
	# filters: --pid keeps the pingpong threads only
	local p
	p=$(awk '/role=parent/ { sub("pid=", "", $2); print $2 }' "$TMP/cmd.out")
	"$BTR" report --json --pid "$p" "$TMP/trace.pb" | jq -e --argjson p "$p" '.threads | length == 1 and .[0].tid == $p'
	"$BTR" report --json --cpu 0 --from 0 --to 10s --sort wait "$TMP/trace.pb" | jq -e '.cpu_table | length == 1'
}

@test "report: usage errors exit 64" {
	run "$BTR" report
	[ "$status" -eq 64 ]
	[[ "$output" == *"missing FILE"* ]]
	for args in "--sort fast x.pb" "--by cpu x.pb" "--top -1 x.pb" "--pid 0 x.pb" \
		"--pid a,b x.pb" "--cpu 9999 x.pb" "--cpu x x.pb" "--from 1x x.pb" \
		"--from 2s --to 1s x.pb" "a.pb b.pb" "--bogus x.pb"; do
		# shellcheck disable=SC2086
		run "$BTR" report $args
		echo "$args -> $status: $output"
		[ "$status" -eq 64 ]
	done
	run "$BTR" report --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"scheduling latency"* ]]
}

@test "report: off-CPU time by blocked function, as the kernel's wchan names it" {
	need_root
	local rounds=20
	record_cmd -q --blocked-reason all -- "$TOOLS/waits" "$rounds"
	cat "$TMP/cmd.out"
	local ids wchan
	ids=$(sed -n 's/^waits sleeper=\([0-9]*\) piper=\([0-9]*\) futexer=\([0-9]*\).*/\1 \2 \3/p' "$TMP/cmd.out")
	wchan=$(sed -n 's/^wchan sleeper=\([^ ]*\) piper=\([^ ]*\) futexer=\([^ ]*\).*/\1 \2 \3/p' "$TMP/cmd.out")
	[ -n "$ids" ] && [ -n "$wchan" ]
	run "$BTR" report --json --top 0 --pid "$(tr ' ' , <<<"$ids")" "$TMP/trace.pb"
	[ "$status" -eq 0 ]
	local tid fn
	set -- $wchan
	for tid in $ids; do
		fn=$1
		shift
		# each waiter's sleeps: the function the kernel's wchan gave
		# first, every round counted, and most of its off-CPU time
		jq -e --argjson t "$tid" --arg fn "$fn" --argjson n "$rounds" '
			.threads[] | select(.tid == $t) |
			.blocked_in[0].function == $fn and .blocked_in[0].count >= $n and
			.blocked_in[0].off_cpu_ns <= .off_cpu.S_ns + .off_cpu.D_ns and
			.blocked_in[0].off_cpu_ns * 10 >= (.off_cpu.S_ns + .off_cpu.D_ns) * 8' <<<"$output" ||
			fail "tid $tid: wchan $fn, report: $(jq -c --argjson t "$tid" '.threads[] | select(.tid == $t)' <<<"$output")"
	done
	# the text shows the same, in its own section
	run "$BTR" report --top 0 --pid "$(tr ' ' , <<<"$ids")" "$TMP/trace.pb"
	[ "$status" -eq 0 ]
	set -- $ids $wchan
	echo "$output" | sed -n '/^Blocked in/,/^$/p' | grep -Eq "^ *$1 .* $4 "
	echo "$output" | sed -n '/^Blocked in/,/^$/p' | grep -Eq "^ *$2 .* $5 "
}
