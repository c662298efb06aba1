#!/usr/bin/env bats
# bpftrace-rec sync with several inputs: machines, placement (snapshot
# path, manifest edge, REALTIME rendezvous, same clock, unrelatable),
# trace time, the perfetto_manifest and its errors, tar and zip archives.
# Synthetic scenarios are written for the trace generator
# (tests/tools/gentrace.c); archives are built with tests/tools/mkarchive.c.

load helpers

gen() {
	"$TOOLS/gentrace" -o "$TMP/$1" || fail "gentrace failed"
}

# The unknown packets of a trace as "TS [machine_id=N] fields=N".
unknown_lines() {
	"$BTR" dump "$1" | awk '$3 == "unknown_packet" { $2 = ""; $3 = ""; print }' | tr -s ' '
}

# Three traces: a (machine a, BOOTTIME 1000000 = REALTIME 9000000000),
# b (machine b, BOOTTIME 5000000 = REALTIME 9000300000), and c without
# any clock (no machine name).
three_traces() {
	gen a.pb <<-'EOF'
	sysinfo name=a
	snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000 REALTIME:9000000000
	packet seq=2 ts=1100000 field=1000 payload=a1
	packet seq=2 ts=1200000 field=1000 payload=a2
	EOF
	gen b.pb <<-'EOF'
	sysinfo name=b
	snapshot seq=1 BOOTTIME:5000000 MONOTONIC:4000000 REALTIME:9000300000
	packet seq=2 ts=5100000 field=1001 payload=b1
	EOF
	gen c.pb <<-'EOF'
	packet seq=3 ts=100 field=1002 payload=c1
	packet seq=3 ts=200 field=1002 payload=c2
	EOF
}

# manifest NAME: $TMP/NAME from stdin.
manifest() {
	cat >"$TMP/$1"
}

# The manifest that moves b by OFFSET and pins c to a's MONOTONIC.
offset_manifest() {
	manifest "$1" <<-EOF
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "a.pb"},
	  {"path": "b.pb", "clocks": {"clock": "BOOTTIME",
	    "sync_to": {"file": "a.pb", "clock": "BOOTTIME"}, "offset_ns": $2}},
	  {"path": "c.pb", "clocks": {"sync_to": {"file": "a.pb", "clock": "MONOTONIC"},
	    "offset_ns": 1000}}]}}
	EOF
}

@test "sync --help shows the merge options" {
	run "$BTR" sync --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"IN..."* ]]
	[[ "$output" == *"--manifest"* ]]
	[[ "$output" == *"--strict"* ]]
	[[ "$output" == *"--perf-clock"* ]]
	[[ "$output" == *"perfetto_manifest"* ]]
}

@test "merge usage errors exit 64" {
	three_traces
	run "$BTR" sync -o "$TMP/o.pb" - -
	[ "$status" -eq 64 ]
	[[ "$output" == *"standard input (-) given twice"* ]]
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/a.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"a.pb given twice"* ]]
	echo '{"perfetto_manifest": {"version": 1}}' >"$TMP/m.json"
	run "$BTR" sync --manifest "$TMP/m.json" --manifest "$TMP/m.json" -o "$TMP/o.pb" "$TMP/a.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"one --manifest only"* ]]
	run "$BTR" sync --perf-clock SUNDIAL -o "$TMP/o.pb" "$TMP/a.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid clock 'SUNDIAL'"* ]]
	run "$BTR" sync --perf-clock 70 -o "$TMP/o.pb" "$TMP/a.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"sequence-scoped"* ]]
	# a manifest alone has nothing to merge
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/m.json"
	[ "$status" -eq 64 ]
	[[ "$output" == *"no trace or perf input"* ]]
	# --manifest must be one
	run "$BTR" sync --manifest "$TMP/a.pb" -o "$TMP/o.pb" "$TMP/b.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"a.pb: not a perfetto_manifest"* ]]
	[ ! -e "$TMP/o.pb" ]
}

@test "inputs are recognised by content, not by name" {
	three_traces
	printf 'just some text\nthat is no trace\n' >"$TMP/notes.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/notes.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"notes.pb: not a Perfetto trace, a tar or zip archive, a perfetto_manifest or perf script text"* ]]
	cp "$TMP/b.pb" "$TMP/b.txt"
	gzip -c "$TMP/a.pb" >"$TMP/a.json"
	"$BTR" sync -q -o "$TMP/o1.pb" "$TMP/a.pb" "$TMP/b.pb"
	"$BTR" sync -q -o "$TMP/o2.pb" "$TMP/a.json" "$TMP/b.txt"
	cmp "$TMP/o1.pb" "$TMP/o2.pb"
	# a manifest by content, whatever its name, as an argument
	offset_manifest m.pb 0
	run "$BTR" sync -o "$TMP/o3.pb" "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	[ "$status" -eq 0 ]
	[ "$(unknown_lines "$TMP/o3.pb" | head -1)" = "501100 fields=1002" ]
}

@test "REALTIME rendezvous places a trace of another machine at its wall clock time" {
	three_traces
	run "$BTR" sync -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"a.pb (a): 4 packets read"* ]]
	[[ "$output" == *"b.pb (b): 3 packets read, 2 written"* ]]
	[[ "$output" == *"2 machines"*"on BOOTTIME of a"* ]]
	[[ "$output" != *warning* ]]
	# b's BOOTTIME 5100000 is REALTIME 9000400000: a's BOOTTIME 1400000
	diff -u - <(unknown_lines "$TMP/m.pb") <<-'EOF'
	1100000 fields=1000
	1200000 fields=1000
	1400000 machine_id=1 fields=1001
	EOF
	# one SystemInfo per machine, with its name; b's snapshot is left out
	[ "$("$BTR" dump "$TMP/m.pb" | grep -c 'system_info')" -eq 2 ]
	"$BTR" dump "$TMP/m.pb" | grep -q '^- - system_info .*machine_name=a$'
	"$BTR" dump "$TMP/m.pb" | grep -q '^- - system_info machine_id=1 .*machine_name=b$'
	[ "$("$BTR" dump "$TMP/m.pb" | grep -c 'clock_snapshot')" -eq 1 ]
	# nothing relates them but BOOTTIME: taken as equal
	gen b2.pb <<-'EOF'
	sysinfo name=b
	snapshot seq=1 BOOTTIME:5000000 MONOTONIC:4000000
	packet seq=2 ts=5100000 field=1001 payload=b1
	EOF
	"$BTR" sync -q -o "$TMP/m2.pb" "$TMP/a.pb" "$TMP/b2.pb"
	[ "$(unknown_lines "$TMP/m2.pb" | tail -1)" = "5100000 machine_id=1 fields=1001" ]
}

@test "two inputs of one machine: the second keeps its own clock snapshots" {
	three_traces
	gen a2.pb <<-'EOF'
	sysinfo name=a
	snapshot seq=1 BOOTTIME:2000000 MONOTONIC:100000
	packet seq=2 clock=MONOTONIC ts=200000 field=1003
	EOF
	gen a1.pb <<-'EOF'
	sysinfo name=a
	snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000
	packet seq=2 clock=MONOTONIC ts=600000 field=1004
	EOF
	run "$BTR" sync -o "$TMP/m.pb" "$TMP/a1.pb" "$TMP/a2.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 machines"* ]]
	diff -u - <(unknown_lines "$TMP/m.pb") <<-'EOF'
	1100000 fields=1004
	2100000 fields=1003
	EOF
	! "$BTR" dump "$TMP/m.pb" | grep -q machine_id=1 || false
}

@test "remote_clock_sync places a machine of a multi-machine trace" {
	gen relay.pb <<-'EOF'
	sysinfo name=host
	snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000
	packet seq=2 ts=1100000 field=1000
	rsync seq=1 machine=7 BOOTTIME:5000,MONOTONIC:4000>BOOTTIME:1000 BOOTTIME:5020,MONOTONIC:4020>BOOTTIME:1020
	sysinfo name=remote machine=7
	packet seq=3 ts=9000 machine=7 field=1001
	packet seq=3 clock=MONOTONIC ts=8000 machine=7 field=1002
	EOF
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/relay.pb"
	[ "$status" -eq 0 ]
	# the round trip says machine 7's BOOTTIME is the host's + 4010; its
	# MONOTONIC follows its own (client) snapshots
	diff -u - <(unknown_lines "$TMP/o.pb") <<-'EOF'
	4990 machine_id=7 fields=1001
	4990 machine_id=7 fields=1002
	1100000 fields=1000
	EOF
	# the remote_clock_sync itself is left out: the times are converted
	! "$BTR" dump "$TMP/o.pb" | grep -q remote_clock_sync || false
	# without it, the same BOOTTIME would have been assumed
	grep -v '^rsync' >"$TMP/norsync.txt" <<-'EOF'
	sysinfo name=host
	snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000
	rsync seq=1
	packet seq=3 ts=9000 machine=7 field=1001
	EOF
	"$TOOLS/gentrace" -o "$TMP/plain.pb" "$TMP/norsync.txt"
	"$BTR" sync -q -o "$TMP/p.pb" "$TMP/plain.pb"
	[ "$(unknown_lines "$TMP/p.pb")" = "9000 machine_id=7 fields=1001" ]
}

@test "a manifest offset_ns moves a file by exactly that amount" {
	three_traces
	for off in 0 5000 -5000 1000000; do
		offset_manifest "m$off.json" "$off"
		"$BTR" sync -q --manifest "$TMP/m$off.json" -o "$TMP/o$off.pb" \
			"$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
		unknown_lines "$TMP/o$off.pb" | awk '/fields=1001/ { print $1 }' >"$TMP/b$off"
	done
	# the manifest edge outranks REALTIME: b at its own BOOTTIME + offset
	[ "$(cat "$TMP/b0")" = 5100000 ]
	[ $(( $(cat "$TMP/b5000") - $(cat "$TMP/b0") )) -eq 5000 ]
	[ $(( $(cat "$TMP/b-5000") - $(cat "$TMP/b0") )) -eq -5000 ]
	[ $(( $(cat "$TMP/b1000000") - $(cat "$TMP/b0") )) -eq 1000000 ]
	# a did not move
	[ "$(unknown_lines "$TMP/o5000.pb" | awk '/fields=1000/ { print $1 }' | head -1)" = 1100000 ]
}

@test "manifest attributes become the merged trace's TraceAttributes" {
	three_traces
	manifest m.json <<-'EOF'
	{"perfetto_manifest": {"version": 1,
	  "files": [{"path": "a.pb"}, {"path": "b.pb"}],
	  "attributes": {"bench.name": "startup", "bench.run": 42,
	                 "bench.neg": -7, "bench.empty": ""}}}
	EOF
	"$BTR" sync -q --manifest "$TMP/m.json" -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/b.pb"
	"$BTR" dump "$TMP/o.pb" >"$TMP/dump.txt"
	grep ' trace_attribute ' "$TMP/dump.txt" | cut -d' ' -f3- | sort >"$TMP/attrs"
	cat "$TMP/attrs"
	printf '%s\n' 'trace_attribute key=bench.empty value=' \
		'trace_attribute key=bench.name value=startup' \
		'trace_attribute key=bench.neg value=-7' \
		'trace_attribute key=bench.run value=42' >"$TMP/want"
	diff "$TMP/want" "$TMP/attrs"
	# integers are long_value, strings string_value, as the schema says
	protoc_decode "$TMP/o.pb"
	grep -q 'long_value: 42' "$TMP/decoded.txt"
	grep -q 'long_value: -7' "$TMP/decoded.txt"
	grep -q 'string_value: "startup"' "$TMP/decoded.txt"
	# without attributes, no such packet
	"$BTR" sync -q -o "$TMP/none.pb" "$TMP/a.pb" "$TMP/b.pb"
	"$BTR" dump "$TMP/none.pb" >"$TMP/none.txt"
	grep -q ' sysinfo\| system_info ' "$TMP/none.txt"
	! grep -q ' trace_attribute ' "$TMP/none.txt" || false
}

@test "sync_to ties a clockless file to a named clock of another file" {
	three_traces
	offset_manifest m.json 0
	run "$BTR" sync --manifest "$TMP/m.json" -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	[ "$status" -eq 0 ]
	# c's 100 is a's MONOTONIC 1100, a's BOOTTIME 501100; c is on a's
	# machine (it names none)
	diff -u - <(unknown_lines "$TMP/o.pb" | grep 1002) <<-'EOF'
	501100 fields=1002
	501200 fields=1002
	EOF
	# without the manifest it stays on its own timeline, at zero offset
	"$BTR" sync -q -o "$TMP/plain.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	[ "$(unknown_lines "$TMP/plain.pb" | head -1)" = "100 fields=1002" ]
	# pinned to the other file's own timeline, and onto a named machine
	manifest pin.json <<-'EOF'
	{"perfetto_manifest": {"version": 1, "files": [{"path": "a.pb"},
	  {"path": "c.pb", "machine": {"name": "logger"},
	   "clocks": {"sync_to": {"file": "a.pb", "clock": "REALTIME"}, "offset_ns": 9000000000}}]}}
	EOF
	"$BTR" sync -q --manifest "$TMP/pin.json" -o "$TMP/pin.pb" "$TMP/a.pb" "$TMP/c.pb"
	diff -u - <(unknown_lines "$TMP/pin.pb" | grep 1002) <<-'EOF'
	1000100 machine_id=1 fields=1002
	1000200 machine_id=1 fields=1002
	EOF
	"$BTR" dump "$TMP/pin.pb" | grep -q '^- - system_info machine_id=1 .*machine_name=logger$'
}

@test "trace_time picks the timeline" {
	three_traces
	manifest tt.json <<-'EOF'
	{"perfetto_manifest": {"version": 1,
	  "trace_time": {"clock": "MONOTONIC", "file": "b.pb"},
	  "files": [{"path": "b.pb"}]}}
	EOF
	run "$BTR" sync --manifest "$TMP/tt.json" -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/b.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"on MONOTONIC of b"* ]]
	# b is the host now; a's BOOTTIME 1100000 is REALTIME 9000100000,
	# b's MONOTONIC 3800000
	diff -u - <(unknown_lines "$TMP/o.pb") <<-'EOF'
	3800000 machine_id=1 fields=1000
	3900000 machine_id=1 fields=1000
	4100000 fields=1001
	EOF
	[ "$("$BTR" dump "$TMP/o.pb" | tail -1)" = "- - sync_info trace_clock=MONOTONIC" ]
	# without a manifest the first input claims trace time; the order of
	# the arguments decides
	"$BTR" sync -q -o "$TMP/ba.pb" "$TMP/b.pb" "$TMP/a.pb"
	[ "$(unknown_lines "$TMP/ba.pb" | head -1)" = "4800000 machine_id=1 fields=1000" ]
	# trace_time without file: the host (the first input's machine)
	manifest tt2.json <<-'EOF'
	{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "REALTIME"}}}
	EOF
	"$BTR" sync -q --manifest "$TMP/tt2.json" -o "$TMP/rt.pb" "$TMP/a.pb" "$TMP/b.pb"
	[ "$(unknown_lines "$TMP/rt.pb" | tail -1)" = "9000400000 machine_id=1 fields=1001" ]
}

# d.pb (machine d): only MONOTONIC and MONOTONIC_RAW, no relation to a's
# clocks; two events.
unrelatable_trace() {
	gen d.pb <<-'EOF'
	sysinfo name=d
	snapshot seq=1 primary=MONOTONIC MONOTONIC:7000 MONOTONIC_RAW:6000
	packet seq=2 ts=7100 field=1003 payload=d1
	packet seq=2 ts=7200 field=1003 payload=d2
	EOF
}

@test "an unrelatable file: events dropped and counted, a warning, --strict fails" {
	three_traces
	unrelatable_trace
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/d.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"warning: sync: $TMP/d.pb (d): its MONOTONIC has no relation to the trace clock (BOOTTIME of a)"* ]]
	[[ "$output" == *"clock_sync_unrelatable_clock_domains: 1"* ]]
	[[ "$output" == *"2 packets dropped"* ]]
	[[ "$output" == *"--strict"* ]]
	! unknown_lines "$TMP/o.pb" | grep -q 1003 || false
	[ "$(stat_value "$TMP/o.pb" clock_sync_unrelatable_clock_domains)" -eq 1 ]
	[ "$(stat_value "$TMP/o.pb" clock_sync_failure_undeferrable_packet_loss)" -eq 2 ]
	run "$BTR" sync --strict -o "$TMP/s.pb" "$TMP/a.pb" "$TMP/d.pb"
	[ "$status" -eq 3 ]
	[[ "$output" == *"error: sync: $TMP/d.pb (d): its MONOTONIC has no relation"* ]]
	cmp "$TMP/o.pb" "$TMP/s.pb"
	# --strict with everything placed
	run "$BTR" sync --strict -o "$TMP/s2.pb" "$TMP/a.pb" "$TMP/b.pb"
	[ "$status" -eq 0 ]
	# a manifest relation places it
	manifest rel.json <<-'EOF'
	{"perfetto_manifest": {"version": 1, "files": [{"path": "a.pb"},
	  {"path": "d.pb", "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "a.pb", "clock": "MONOTONIC"}}}]}}
	EOF
	run "$BTR" sync --strict --manifest "$TMP/rel.json" -o "$TMP/r.pb" "$TMP/a.pb" "$TMP/d.pb"
	[ "$status" -eq 0 ]
	[ "$(unknown_lines "$TMP/r.pb" | grep -c 1003)" -eq 2 ]
}

# trailer_rows FILE NAME: "value machine" of each `stats` row called NAME.
trailer_rows() {
	"$BTR" stats "$1" | awk -v n="$2" '$1 == n { print $5, $6 }'
}

@test "drops are counted on their machine: trailer, stats, re-sync" {
	three_traces
	unrelatable_trace
	# only d's events are dropped: every drop row is d's (machine 1)
	"$BTR" sync -q -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/d.pb" 2>/dev/null
	"$BTR" dump "$TMP/o.pb" | grep -q '^- - system_info machine_id=1 .*machine_name=d$'
	run "$BTR" stats "$TMP/o.pb"
	echo "$output"
	[[ "${lines[0]}" == *" value machine" ]]
	[ "$(trailer_rows "$TMP/o.pb" clock_sync_unrelatable_clock_domains)" = "1 1" ]
	[ "$(trailer_rows "$TMP/o.pb" clock_sync_failure_undeferrable_packet_loss)" = "2 1" ]
	[ "$(trailer_rows "$TMP/o.pb" clock_sync_failure_no_path)" = "2 1" ]
	"$BTR" stats --json "$TMP/o.pb" >"$TMP/o.json"
	jq -e 'map(select(.name == "clock_sync_failure_undeferrable_packet_loss"))
	       == [{"name": "clock_sync_failure_undeferrable_packet_loss", "idx": null,
	            "severity": "data_loss", "source": "analysis", "value": 2, "machine": 1}]' "$TMP/o.json"
	jq -e 'map(select(.name | startswith("clock_sync")) | select(.machine == null)) == []' "$TMP/o.json"
	# a re-sync keeps them on machine 1, unchanged
	"$BTR" sync -q -o "$TMP/again.pb" "$TMP/o.pb"
	cmp "$TMP/o.pb" "$TMP/again.pb"
	# a drop on the host as well: a row of its own, machine -
	gen a2.pb <<-'EOF'
	sysinfo name=a
	snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000 REALTIME:9000000000
	packet seq=2 ts=1100000 field=1000 payload=a1
	packet seq=2 clock=200 ts=1200000 field=1000 payload=a2
	EOF
	"$BTR" sync -q -o "$TMP/o2.pb" "$TMP/a2.pb" "$TMP/d.pb" 2>"$TMP/o2.err"
	[ "$(trailer_rows "$TMP/o2.pb" clock_sync_failure_undeferrable_packet_loss)" = "1 -
2 1" ]
	# stderr says the same, machine by machine
	cat "$TMP/o2.err"
	grep -qx 'bpftrace-rec: warning: sync: clock_sync_failure_undeferrable_packet_loss: 1 on a' "$TMP/o2.err"
	grep -qx 'bpftrace-rec: warning: sync: clock_sync_failure_undeferrable_packet_loss: 2 on d' "$TMP/o2.err"
	grep -qx 'bpftrace-rec: warning: sync: clock_sync_failure_unknown_source_clock: 1 on a' "$TMP/o2.err"
	[ "$(trailer_rows "$TMP/o2.pb" clock_sync_failure_unknown_source_clock)" = "1 -" ]
	[ "$(stat_value "$TMP/o2.pb" clock_sync_failure_undeferrable_packet_loss)" -eq 3 ]
	# dump names the machine of each count: NAME@ID
	"$BTR" dump "$TMP/o2.pb" | tail -1 | grep -q ' clock_sync_failure_undeferrable_packet_loss=1 .*clock_sync_failure_undeferrable_packet_loss@1=2'
	# one machine: no machine column, as ever
	"$BTR" sync -q -o "$TMP/one.pb" "$TMP/a2.pb" 2>"$TMP/one.err"
	grep -qx 'bpftrace-rec: warning: sync: clock_sync_failure_undeferrable_packet_loss: 1' "$TMP/one.err"
	run "$BTR" stats "$TMP/one.pb"
	[[ "${lines[0]}" == *" value" ]]
	[ "$(trailer_rows "$TMP/one.pb" clock_sync_failure_undeferrable_packet_loss)" = "1 " ]
	"$BTR" stats --json "$TMP/one.pb" | jq -e 'map(select(.machine != null)) == []'
}

@test "events moved before the start of trace time are dropped and counted" {
	three_traces
	offset_manifest m.json -5200000
	run "$BTR" sync --manifest "$TMP/m.json" -o "$TMP/o.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"trace_sorter_negative_timestamp_dropped: 1"* ]]
	! unknown_lines "$TMP/o.pb" | grep -q 1001 || false
}

# check_manifest_error JSON MESSAGE [INPUTS...]: exit 64 naming the field.
check_manifest_error() {
	local json=$1 msg=$2
	shift 2
	printf '%s\n' "$json" >"$TMP/bad.json"
	run "$BTR" sync --manifest "$TMP/bad.json" -o "$TMP/o.pb" "${@:-$TMP/a.pb}"
	echo "$output"
	[ "$status" -eq 64 ] || fail "status $status for $json"
	[[ "$output" == *"error: "*"bad.json: perfetto_manifest: "* ]] || [[ "$output" == *"error: perfetto_manifest: "* ]] ||
		fail "no perfetto_manifest prefix"
	[[ "$output" == *"$msg"* ]] || fail "no '$msg' for $json"
	[ ! -e "$TMP/o.pb" ]
}

@test "every manifest error is named and exits 64" {
	three_traces
	H='{"perfetto_manifest": {"version": 1, '
	check_manifest_error '{"perfetto_manifest": {"version": 2}}' \
		"unsupported version: 2. Only version 1 is supported"
	check_manifest_error '{"perfetto_manifest": {}}' "missing required field: version"
	check_manifest_error '{"perfetto_manifest": {"version": "1"}}' "version must be an integer"
	check_manifest_error '{"perfetto_manifest": {"version": 1' "invalid JSON"
	check_manifest_error '{"perfetto_manifest": 1}' "top-level perfetto_manifest key"
	check_manifest_error "$H"'"files": [{"path": "zz.pb"}]}}' \
		"files[0].path: no input is named 'zz.pb'"
	check_manifest_error "$H"'"files": [{"path": "a.pb", "machine": {"name": "x"}, "machines": []}]}}' \
		"files[0]: machine and machines are mutually exclusive"
	check_manifest_error "$H"'"files": [{"path": "a.pb", "machine": {"name": ""}}]}}' \
		"files[0].machine.name must be non-empty"
	check_manifest_error "$H"'"files": [{"path": "a.pb", "machines": [{"id": -3, "name": "x"}]}]}}' \
		"files[0].machines[0]: id must be in [0, 4294967295]"
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "a.pb"}]}}' \
		"files[1].path: 'a.pb' is listed twice"
	check_manifest_error "$H"'"files": [{"path": "a.pb", "clocks": {"sync_to": {"file": "b.pb"}}}, {"path": "b.pb", "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "a.pb", "clock": "BOOTTIME"}}}]}}' \
		"cycle: 'a.pb' is synced to itself through sync_to" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "a.pb", "clocks": {"sync_to": {"file": "a.pb"}}}]}}' \
		"files[0].clocks.sync_to: cycle"
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "b.pb", "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "a.pb"}, "offset_ns": -9223372036854775808}}]}}' \
		"files[1].clocks.offset_ns is out of range" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "b.pb", "clocks": {"sync_to": {"file": "a.pb"}, "offset_ns": "5"}}]}}' \
		"files[1].clocks.offset_ns must be an integer" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "b.pb", "clocks": {"sync_to": {"file": "a.pb"}}}]}}' \
		"files[0].clocks.sync_to.file names unknown file 'a.pb'" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "b.pb", "clocks": {"offset_ns": 1}}]}}' \
		"files[0].clocks: a sync_to block is required" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "b.pb", "clocks": {"sync_to": {"machine": "a"}}}]}}' \
		"a machine name alone is ambiguous, name the file too" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "b.pb", "clocks": {"clock": "SUNDIAL", "sync_to": {"file": "a.pb"}}}]}}' \
		"files[1].clocks.clock: unknown clock name: SUNDIAL" "$TMP/a.pb" "$TMP/b.pb"
	check_manifest_error "$H"'"trace_time": {"clock": "BOOTTIME", "machine": "a"}}}' \
		"trace_time.machine requires trace_time.file"
	check_manifest_error "$H"'"trace_time": {"clock": "TAI"}}}' \
		"trace_time.clock: unknown clock name: TAI"
	check_manifest_error "$H"'"attributes": {"run": [1]}}}' \
		"attributes: 'run' must be a string or an integer"
	check_manifest_error "$H"'"attributes": 3}}' \
		"attributes must be an object of string or integer values"
	# pinning a file with clock snapshots
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "b.pb", "clocks": {"sync_to": {"file": "a.pb", "clock": "BOOTTIME"}}}]}}' \
		"files[1].clocks: a clocks override without a source clock pins a clockless file" "$TMP/a.pb" "$TMP/b.pb"
	# what only the inputs can tell: several machines in one file
	gen multi.pb <<-'EOF'
	sysinfo name=x machine=5
	packet seq=2 ts=20 field=1005 machine=6
	packet seq=2 ts=20 field=1005
	EOF
	check_manifest_error "$H"'"files": [{"path": "multi.pb", "machine": {"name": "m"}}]}}' \
		"files[0].machine: 'multi.pb' holds data of 2 machines; name them with machines" "$TMP/multi.pb"
	check_manifest_error "$H"'"files": [{"path": "multi.pb", "machines": [{"id": 5, "name": "five"}]}]}}' \
		"files[0].machines: undeclared machine id 6 in 'multi.pb'" "$TMP/multi.pb"
	check_manifest_error "$H"'"files": [{"path": "a.pb"}, {"path": "multi.pb", "machines": [{"id": 5, "name": "v"}, {"id": 6, "name": "w"}]}], "trace_time": {"clock": "BOOTTIME", "file": "multi.pb", "machine": "zz"}}}' \
		"trace_time.machine: 'zz' is not a machine declared by file 'multi.pb'" "$TMP/a.pb" "$TMP/multi.pb"
	# the same basename twice
	mkdir -p "$TMP/d1" "$TMP/d2"
	cp "$TMP/a.pb" "$TMP/d1/x.pb"
	cp "$TMP/b.pb" "$TMP/d2/x.pb"
	check_manifest_error "$H"'"files": [{"path": "x.pb"}]}}' \
		"files[0].path: 'x.pb' names several inputs" "$TMP/d1/x.pb" "$TMP/d2/x.pb"
}

@test "two manifests are an error" {
	three_traces
	offset_manifest m1.json 0
	offset_manifest m2.json 0
	run "$BTR" sync --manifest "$TMP/m1.json" -o "$TMP/o.pb" "$TMP/m2.json" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"m2.json: multiple perfetto_manifest files (the first: $TMP/m1.json)"* ]]
	"$TOOLS/mkarchive" -f tar -o "$TMP/two.tar" m.json="$TMP/m1.json" a.pb="$TMP/a.pb" \
		n.json="$TMP/m2.json" b.pb="$TMP/b.pb" c.pb="$TMP/c.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/two.tar"
	[ "$status" -eq 64 ]
	[[ "$output" == *"two.tar:n.json: multiple perfetto_manifest files"* ]]
	[ ! -e "$TMP/o.pb" ]
}

@test "tar and zip archives with the manifest first, last or missing" {
	three_traces
	offset_manifest m.json 5000
	"$BTR" sync -q --manifest "$TMP/m.json" -o "$TMP/want.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	"$BTR" sync -q -o "$TMP/plain.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	members="a.pb=$TMP/a.pb b.pb=$TMP/b.pb c.pb=$TMP/c.pb"
	for f in tar tgz zip; do
		# shellcheck disable=SC2086
		"$TOOLS/mkarchive" -f $f -o "$TMP/first.$f" perfetto_manifest.json="$TMP/m.json" $members
		# shellcheck disable=SC2086
		"$TOOLS/mkarchive" -f $f -o "$TMP/last.$f" $members z_manifest.json="$TMP/m.json"
		# shellcheck disable=SC2086
		"$TOOLS/mkarchive" -f $f -o "$TMP/none.$f" $members
		for a in first last; do
			run "$BTR" sync -o "$TMP/$a.$f.pb" "$TMP/$a.$f"
			[ "$status" -eq 0 ]
			[[ "$output" == *"$a.$f:b.pb (b): 3 packets read"* ]]
			cmp "$TMP/want.pb" "$TMP/$a.$f.pb"
		done
		"$BTR" sync -q -o "$TMP/none.$f.pb" "$TMP/none.$f"
		cmp "$TMP/plain.pb" "$TMP/none.$f.pb"
	done
	# members are taken in name order, traces before other formats;
	# hidden ones and directories are skipped
	"$TOOLS/mkarchive" -f tar -o "$TMP/order.tar" ./z/c.pb="$TMP/c.pb" \
		.hidden.pb="$TMP/notes" b.pb="$TMP/b.pb" y/.git/x="$TMP/m.json" a.pb="$TMP/a.pb" 2>/dev/null ||
		{ printf 'junk\n' >"$TMP/notes"; "$TOOLS/mkarchive" -f tar -o "$TMP/order.tar" ./z/c.pb="$TMP/c.pb" \
		.hidden.pb="$TMP/notes" b.pb="$TMP/b.pb" y/.git/x="$TMP/m.json" a.pb="$TMP/a.pb"; }
	run "$BTR" sync -o "$TMP/order.pb" "$TMP/order.tar"
	[ "$status" -eq 0 ]
	[[ "$output" == *"on BOOTTIME of a"* ]]
	[[ "$output" != *hidden* ]]
	[[ "$output" == *"order.tar:z/c.pb"* ]]
	# the archive from standard input
	"$BTR" sync -q -o "$TMP/stdin.pb" - <"$TMP/first.zip"
	cmp "$TMP/want.pb" "$TMP/stdin.pb"
	# --manifest names archive members too
	"$BTR" sync -q --manifest "$TMP/m.json" -o "$TMP/none2.pb" "$TMP/none.tar"
	cmp "$TMP/want.pb" "$TMP/none2.pb"
}

@test "archive errors name the archive and the member" {
	three_traces
	"$TOOLS/mkarchive" -f tar -o "$TMP/inner.tar" a.pb="$TMP/a.pb"
	"$TOOLS/mkarchive" -f zip -o "$TMP/outer.zip" inner.tar="$TMP/inner.tar" b.pb="$TMP/b.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/outer.zip"
	[ "$status" -eq 1 ]
	[[ "$output" == *"outer.zip:inner.tar: an archive inside an archive is not supported"* ]]
	printf 'hello\n' >"$TMP/hello.txt"
	"$TOOLS/mkarchive" -f tar -o "$TMP/odd.tar" a.pb="$TMP/a.pb" hello.txt="$TMP/hello.txt"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/odd.tar"
	[ "$status" -eq 1 ]
	[[ "$output" == *"odd.tar:hello.txt: not a Perfetto trace"* ]]
	head -c 700 "$TMP/inner.tar" >"$TMP/cut.tar"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/cut.tar"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cut.tar"* ]]
	# a corrupt member trace: its offset, under the member's name
	{ cat "$TMP/a.pb"; printf '\x0f\x01'; cat "$TMP/a.pb"; } >"$TMP/bad.pb"
	"$TOOLS/mkarchive" -f zip -o "$TMP/badm.zip" bad.pb="$TMP/bad.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/badm.zip"
	[ "$status" -eq 1 ]
	[[ "$output" == *"badm.zip:bad.pb: offset "* ]]
	[ ! -e "$TMP/o.pb" ]
}

@test "sequences of merged inputs never share an id; a re-sync is stable" {
	three_traces
	"$BTR" sync -q -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/c.pb"
	protoc_decode "$TMP/m.pb"
	# per packet: machine and sequence
	awk '/^packet {/ { m = 0; s = "" } /^  machine_id:/ { m = $2 }
	     /^  trusted_packet_sequence_id:/ { s = $2 }
	     /^}/ { if (s != "") print m, s }' "$TMP/decoded.txt" | sort -u >"$TMP/seqs"
	cat "$TMP/seqs"
	[ "$(awk '{ print $2 }' "$TMP/seqs" | sort | uniq -d | wc -l)" -eq 0 ]
	grep -qx '0 1' "$TMP/seqs"
	"$BTR" sync -q -o "$TMP/again.pb" "$TMP/m.pb"
	cmp "$TMP/m.pb" "$TMP/again.pb"
}

@test "dump and stats show machines" {
	three_traces
	gen d.pb <<-'EOF'
	sysinfo name=d
	snapshot seq=1 primary=MONOTONIC MONOTONIC:7000 MONOTONIC_RAW:6000
	packet seq=2 ts=7100 field=1003 payload=d1
	EOF
	"$BTR" sync -q -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb" "$TMP/d.pb" 2>/dev/null
	"$BTR" dump "$TMP/m.pb" >"$TMP/dump.txt"
	grep -q '^1400000 - unknown_packet machine_id=1 fields=1001$' "$TMP/dump.txt"
	grep -q '^- - system_info machine_id=2 .*machine_name=d$' "$TMP/dump.txt"
	"$BTR" dump --json "$TMP/m.pb" | jq -s -e 'map(select(.kind == "unknown_packet" and .machine_id == 1)) | length == 1' >/dev/null
	# the trailer's drops are stats rows
	run "$BTR" stats "$TMP/m.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"clock_sync_unrelatable_clock_domains"*"error"*"analysis"*" 1"* ]]
	[ "$(stat_value "$TMP/m.pb" clock_sync_failure_undeferrable_packet_loss)" -eq 1 ]
	run "$BTR" stats --fail-on-loss "$TMP/m.pb"
	[ "$status" -eq 3 ]
}

@test "two recordings of this machine merge at their wall clock positions" {
	need_root
	# each recording runs clockpair (its wall clock reading) and lasts
	# half a second
	"$BTR" -q -d 1 --machine-name alpha -o "$TMP/a.pb" -- \
		sh -c "'$TOOLS/clockpair'; sleep 0.5" >"$TMP/a.clk" || fail "record a failed"
	sleep 2
	"$BTR" -q -d 1 --machine-name beta -o "$TMP/b.pb" -- \
		sh -c "'$TOOLS/clockpair'; sleep 0.5" >"$TMP/b.clk" || fail "record b failed"
	run "$BTR" sync -o "$TMP/m.pb" "$TMP/a.pb" "$TMP/b.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"2 machines"*"on BOOTTIME of alpha"* ]]
	[[ "$output" != *warning* ]]
	read -r boot_a real_a <"$TMP/a.clk"
	read -r boot_b real_b <"$TMP/b.clk"
	# the exec of each clockpair, in its own file and merged
	exec_at() { "$BTR" dump "$1" | awk '$3 == "sched_process_exec" && /clockpair/ { print $1 }'; }
	xa=$(exec_at "$TMP/a.pb")
	yb=$(exec_at "$TMP/b.pb")
	merged=$(exec_at "$TMP/m.pb" | tr '\n' ' ')
	read -r ma mb <<<"$merged"
	[ -n "$xa" ]
	[ -n "$yb" ]
	[ -n "$mb" ]
	# their wall clock gap, from each file's own REALTIME reading
	want=$(( (real_b + yb - boot_b) - (real_a + xa - boot_a) ))
	got=$(( mb - ma ))
	echo "wall gap $want, merged gap $got"
	[ "$want" -gt 2000000000 ]
	[ $(( got - want )) -lt 1000000 ]
	[ $(( want - got )) -lt 1000000 ]
	# both machines, each with its name; beta's events carry machine_id=1
	"$BTR" dump "$TMP/m.pb" >"$TMP/dump.txt"
	grep -q 'system_info .*machine_name=alpha' "$TMP/dump.txt"
	grep -q 'system_info machine_id=1 .*machine_name=beta' "$TMP/dump.txt"
	[ "$(awk '$3 == "sched_switch" && / machine_id=1 /' "$TMP/dump.txt" | wc -l)" -gt 10 ]
	[ "$(awk '$3 == "sched_switch" && !/ machine_id=1 /' "$TMP/dump.txt" | wc -l)" -gt 10 ]
	# per machine stats rows
	run "$BTR" stats "$TMP/m.pb"
	[[ "$output" == *" machine"* ]]
	[ "$("$BTR" stats --json "$TMP/m.pb" | jq '[.[] | select(.name == "traced_buf_buffer_size")] | length')" -eq 2 ]
	[ "$("$BTR" stats --json "$TMP/m.pb" | jq '[.[] | select(.machine == 1)] | length')" -gt 3 ]
	protoc_decode "$TMP/m.pb"
	# trace_processor: two machines by name, each one's threads, CPUs
	# and stats its own, every thread's figures those of its recording
	# alone, and the report's section of each machine equal to them
	tp_stats_clean "$TMP/m.pb" mismatched_sched_switch_tids
	[ "$(tp_query "$TMP/m.pb" "select id, name from machine order by id" | tr '\n' ' ')" = "0,alpha 1,beta " ]
	[ "$(tp_query "$TMP/m.pb" "select count(distinct machine_id) from cpu")" = 2 ]
	[ "$(tp_query "$TMP/m.pb" "select count(*) from stats where name =
		'traced_buf_buffer_size' and machine_id = 1")" = 1 ]
	"$BTR" report --json --top 0 "$TMP/m.pb" >"$TMP/m.json"
	local k f
	for k in 0 1; do
		f=$([ "$k" = 0 ] && echo a || echo b)
		tp_threads "$TMP/$f.pb" | sort -n >"$TMP/$f.tp"
		tp_threads "$TMP/m.pb" "$k" | sort -n >"$TMP/m$k.tp"
		[ "$(wc -l <"$TMP/m$k.tp")" -ge 5 ]
		diff -u "$TMP/$f.tp" "$TMP/m$k.tp"
		jq ".machines[$k]" "$TMP/m.json" >"$TMP/m$k.json"
		report_threads "$TMP/m$k.json" | diff -u "$TMP/m$k.tp" -
	done
}
