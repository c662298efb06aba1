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

@test "report: declared CPUs past the last with events are not listed; a bundle out of time order is sorted" {
	"$TOOLS/gentrace" -o "$TMP/decl.pb" <<-'EOF2'
	sysinfo cpus=8
	bundle cpu=1 seq=2 switch=3000,1000,2000 waking=1500
	bundle cpu=0 seq=3 switch=1100,2100
	EOF2
	run "$BTR" report --json "$TMP/decl.pb"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.cpus == 2 and (.cpu_table | length) == 2 and
		.events == 6 and .start_ns == 1000 and .end_ns == 3000'
	run "$BTR" report "$TMP/decl.pb"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *": 2 CPUs, 6 events, "* ]]
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

@test "report: a compact time past INT64_MAX is left out and counted, the others kept" {
	# the converter passes compact arrays on the trace clock on unread;
	# the report leaves such a time out itself, as sync and dump do
	# (on BOOTTIME, the trace clock, as a snapshot says)
	"$TOOLS/gentrace" -o "$TMP/neg.pb" <<-'EOF2'
	snapshot seq=1 6:500 3:400
	bundle cpu=0 seq=2 switch=1000,2000,18446744073709551000,3000 waking=1500
	bundle cpu=1 seq=3 switch=1200,2500
	EOF2
	run "$BTR" report --json "$TMP/neg.pb"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.events == 6 and .end_ns == 3000 and .lower_bounds and
		(.losses | map(select(.name == "report_events_not_converted")) | .[0].value == 1)'
	run "$BTR" dump "$TMP/neg.pb"
	[ "$status" -eq 0 ]
	[[ "$output" != *18446744073709551000* ]]
}

@test "report: a malformed compact time array is an error naming its offset" {
	# a bundle of CPU 0 whose switch_timestamp array ends inside a varint
	"$TOOLS/gentrace" -o "$TMP/badc.pb" <<-'EOF2'
	snapshot seq=1 6:500 3:400
	bundle cpu=1 seq=3 switch=1000,2000 waking=1500
	raw 0a18080022140a0305ffff120201011a020506320200002a01615002
	EOF2
	run "$BTR" report "$TMP/badc.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/badc.pb: offset "*": malformed TracePacket: malformed compact_sched array"* ]]
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
	local tid fn cut
	# a sleep cut by a switch the kernel hid is not counted (as
	# trace_processor leaves it open): so many rounds may be missing
	cut=$(jq '[.losses[] | select(.name == "report_states_cut_by_mismatched_switch") | .value] | add // 0' <<<"$output")
	set -- $wchan
	for tid in $ids; do
		fn=$1
		shift
		# each waiter's sleeps: the function the kernel's wchan gave
		# first, every round counted, and most of its off-CPU time
		jq -e --argjson t "$tid" --arg fn "$fn" --argjson n "$((rounds - cut))" '
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

# A section of `report` text: the data rows (lines that start with a
# number) after the line that starts with $2, up to the next section.
section_rows() {
	awk -v h="$2" 'index($0, h) == 1 { s = 1; next } /^== Machine/ { s = 0 }
		s && /^ *[0-9]/' "$1"
}

# The per-machine figures of a report --json: one machine's object.
figures() {
	jq -S '{events, cpus, rows_total, threads, processes, cpu_table, wakers}'
}

@test "report: a synced trace of two machines has one section a machine, each as its input alone" {
	"$TOOLS/gentrace" -o "$TMP/a.pb" <<-'EOF2'
	sysinfo name=alpha
	snapshot seq=1 BOOTTIME:1000000 REALTIME:9000000000
	bundle cpu=0 seq=2 switch=1100000,1200000,1300000,1400000 waking=1150000,1350000
	bundle cpu=1 seq=3 switch=1110000,1250000,1390000 waking=1120000
	bundle cpu=0 seq=2 switch=1500000,1530000,1610000,1700000,1800000 waking=1550000
	bundle cpu=1 seq=3 switch=1520000,1640000,1790000
	EOF2
	"$TOOLS/gentrace" -o "$TMP/b.pb" <<-'EOF2'
	sysinfo name=beta
	snapshot seq=1 BOOTTIME:5000000 REALTIME:9000300000
	bundle cpu=0 seq=2 switch=5100000,5200000,5300000 waking=5250000
	bundle cpu=1 seq=3 switch=5110000,5220000 waking=5150000
	bundle cpu=0 seq=2 switch=5400000,5470000,5520000,5600000
	bundle cpu=1 seq=3 switch=5410000,5590000,5650000 waking=5600000
	EOF2
	"$BTR" sync -q -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb"
	# beta's events sit between alpha's on the merged timeline
	run "$BTR" report --top 0 "$TMP/m.pb"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Trace $TMP/m.pb, 2 machines: 4 CPUs, 34 events, "* ]]
	[ "$(echo "$output" | grep -c '^== Machine')" -eq 2 ]
	echo "$output" | grep -q '^== Machine 0 (alpha): 2 CPUs, 19 events, '
	echo "$output" | grep -q '^== Machine 1 (beta): 2 CPUs, 15 events, '
	echo "$output" >"$TMP/m.txt"
	local k f
	for k in 0 1; do
		f=$([ "$k" = 0 ] && echo a || echo b)
		"$BTR" report --top 0 "$TMP/$f.pb" >"$TMP/$f.txt"
		section_rows "$TMP/m.txt" "== Machine $k " >"$TMP/m$k.rows"
		section_rows "$TMP/$f.txt" "Threads (" >"$TMP/$f.rows"
		[ "$(wc -l <"$TMP/$f.rows")" -ge 7 ]
		diff -u "$TMP/$f.rows" "$TMP/m$k.rows"
		# the same in JSON, by thread and by process
		"$BTR" report --json --top 0 "$TMP/$f.pb" | figures >"$TMP/$f.json"
		"$BTR" report --json --top 0 "$TMP/m.pb" |
			jq ".machines[$k]" | figures >"$TMP/m$k.json"
		diff -u "$TMP/$f.json" "$TMP/m$k.json"
		jq -e '.threads | map(select(.latency.count > 0)) | length > 0' "$TMP/$f.json"
		"$BTR" report --json --by process "$TMP/$f.pb" | figures >"$TMP/$f.json"
		"$BTR" report --json --by process "$TMP/m.pb" |
			jq ".machines[$k]" | figures >"$TMP/m$k.json"
		diff -u "$TMP/$f.json" "$TMP/m$k.json"
	done
	"$BTR" report --json "$TMP/m.pb" |
		jq -e '[.machines[].machine] == ["alpha", "beta"] and
			[.machines[].machine_id] == [0, 1]'
}

# The counts of a report --json machine: events, CPUs, rows, and per thread
# and CPU the figures that are counts (times may move by a clock
# conversion's rounding across snapshots).
counts() {
	jq -S '{events, cpus, rows_total,
		threads: [.threads[] | {tid, pid, comm, switches_voluntary,
			switches_involuntary, latency: .latency.count}],
		cpu_table: [.cpu_table[] | {cpu, switches, migrations_in}],
		wakers}'
}

@test "report: two recordings synced as two machines, each section as its recording alone" {
	need_root
	"$BTR" -q --machine-name alpha -o "$TMP/a.pb" -- "$TOOLS/pingpong" 300 \
		>/dev/null 2>"$TMP/rec.err" || fail "record a: $(cat "$TMP/rec.err")"
	"$BTR" -q --machine-name beta -o "$TMP/b.pb" -- "$TOOLS/pingpong" 300 \
		>/dev/null 2>"$TMP/rec.err" || fail "record b: $(cat "$TMP/rec.err")"
	"$BTR" sync -q -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb"
	"$BTR" report --json --top 0 "$TMP/m.pb" >"$TMP/m.json"
	jq -e '[.machines[].machine] == ["alpha", "beta"]' "$TMP/m.json"
	local k f
	for k in 0 1; do
		f=$([ "$k" = 0 ] && echo a || echo b)
		"$BTR" report --json --top 0 "$TMP/$f.pb" | counts >"$TMP/$f.counts"
		jq ".machines[$k]" "$TMP/m.json" | counts >"$TMP/m$k.counts"
		diff -u "$TMP/$f.counts" "$TMP/m$k.counts"
		# the pingpong pair woke each other hundreds of times
		jq -e '[.threads[] | select(.comm | startswith("pingpong")) |
			select(.latency >= 250)] | length >= 2' "$TMP/$f.counts"
		jq -e '.wakers | length > 0' "$TMP/$f.counts"
	done
}
