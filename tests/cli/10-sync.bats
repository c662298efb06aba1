#!/usr/bin/env bats
# bpftrace-rec sync: every timestamp onto one trace clock, packets sorted
# by time, payloads unchanged; drops counted under Perfetto's stat names.
# Scenarios are written as text for the trace generator (tests/tools/gentrace.c).

load helpers

# gen NAME: builds $TMP/NAME.pb from the description on stdin.
gen() {
	"$TOOLS/gentrace" -o "$TMP/$1.pb" || fail "gentrace failed"
}

# The unknown packets of a trace as "TS fields=N", timestamps as stored.
unknown_lines() {
	"$BTR" dump --raw-timestamps "$1" | awk '$3 == "unknown_packet" { print $1, $4 }'
}

# Packets on MONOTONIC, a global custom clock (200), a sequence-scoped
# clock (64 on sequence 5, by id and through TracePacketDefaults), BOOTTIME
# by default, one before any snapshot, one on clock 64 of a sequence that
# never had it, one on REALTIME after REALTIME jumped back.
mixed_trace() {
	gen mixed <<-'EOF'
	packet seq=2 clock=MONOTONIC ts=5000 field=1000 payload=early
	snapshot seq=1 primary=BOOTTIME BOOTTIME:10000 MONOTONIC:4000 REALTIME:1000000 200:500
	snapshot seq=5 BOOTTIME:10000 64:100
	packet seq=2 clock=MONOTONIC ts=4500 field=1001 payload=a
	packet seq=2 clock=MONOTONIC ts=3000 field=1003 payload=c
	packet seq=3 clock=200 ts=600 field=1004 payload=d
	packet seq=5 clock=64 ts=150 field=1005 payload=e
	defaults seq=5 clock=64
	packet seq=5 ts=160 field=1006 payload=f
	packet seq=6 clock=64 ts=150 field=1007 payload=g
	bundle cpu=0 seq=7 switch=12000,12010 waking=12005
	snapshot seq=1 BOOTTIME:20000 MONOTONIC:13000 REALTIME:1010000 200:10500
	packet seq=2 clock=MONOTONIC ts=13500 field=1002 payload=b
	packet seq=2 ts=15000 field=1008 payload=h
	snapshot seq=1 BOOTTIME:30000 MONOTONIC:23000 REALTIME:500000 200:20500
	packet seq=8 clock=REALTIME ts=500100 field=1009 payload=i
	packet seq=2 ts=35000 field=1010 payload=j
	packet seq=9 field=1011 payload=no-time
	EOF
}

# A trace of n packets of every kind, timestamps out of order.
big_trace() {
	awk -v n="$1" 'BEGIN {
		srand(7)
		print "snapshot seq=1 primary=BOOTTIME BOOTTIME:1000000 MONOTONIC:400000 REALTIME:90000000"
		for (i = 0; i < n; i++) {
			t = 1000000 + int(rand() * 5000000)
			if (i % 5 == 0)
				printf "bundle cpu=%d seq=%d switch=%d,%d,%d waking=%d events=%d\n", i % 4, 10 + i % 4, t, t + 10, t + 20, t + 5, t + 7
			else if (i % 5 == 1)
				printf "packet seq=2 clock=MONOTONIC ts=%d field=%d payload=p%d\n", t - 600000, 1000 + i % 7, i
			else if (i % 5 == 2)
				printf "packet seq=3 field=%d payload=untimed%d\n", 1000 + i % 7, i
			else
				printf "packet seq=4 ts=%d field=%d payload=x%d\n", t, 1000 + i % 7, i
			if (i % 500 == 499)
				printf "snapshot seq=1 BOOTTIME:%d MONOTONIC:%d REALTIME:%d\n", 1000000 + i * 1000, 400000 + i * 1000 - i, 90000000 + i * 1000
		}
	}' | gen big
}

@test "sync --help shows usage and examples" {
	run "$BTR" sync --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: bpftrace-rec sync"* ]]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"--trace-clock"* ]]
	[[ "$output" == *"--memory-limit"* ]]
}

@test "sync usage errors exit 64" {
	mixed_trace
	run "$BTR" sync
	[ "$status" -eq 64 ]
	run "$BTR" sync "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"missing -o OUT"* ]]
	run "$BTR" sync -o "$TMP/o.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"missing input file"* ]]
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/mixed.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"one input file only"* ]]
	run "$BTR" sync --trace-clock SUNDIAL -o "$TMP/o.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid clock 'SUNDIAL'"* ]]
	run "$BTR" sync --trace-clock 64 -o "$TMP/o.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"sequence-scoped"* ]]
	run "$BTR" sync --memory-limit 1K -o "$TMP/o.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid memory limit '1K'"* ]]
	run "$BTR" sync --memory-limit lots -o "$TMP/o.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	run "$BTR" sync --no-such-option -o "$TMP/o.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[ ! -e "$TMP/o.pb" ]
	cp "$TMP/mixed.pb" "$TMP/keep.pb"
	run "$BTR" sync -o "$TMP/mixed.pb" "$TMP/mixed.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"is the input file"* ]]
	cmp "$TMP/mixed.pb" "$TMP/keep.pb"
}

@test "sync of a missing input fails naming it" {
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/nope.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/nope.pb: No such file or directory"* ]]
	[ ! -e "$TMP/o.pb" ]
}

@test "sync of a corrupt input names the offset and writes nothing" {
	gen good <<-'EOF'
	packet seq=1 ts=5
	EOF
	# a good record (6 bytes), then a record whose length runs past the end
	# of a following record's tag: invalid wire type in the middle
	{ cat "$TMP/good.pb"; printf '\x0f\x01'; cat "$TMP/good.pb"; } >"$TMP/bad.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/bad.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.pb: offset 6: "* ]]
	[ ! -e "$TMP/o.pb" ]
	# a packet whose timestamp is not a varint
	{ cat "$TMP/good.pb"; printf '\x0a\x05\x42\x03abc'; } >"$TMP/bad2.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/bad2.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad2.pb: offset 6: malformed TracePacket"* ]]
	[ ! -e "$TMP/o.pb" ]
	# a compact_sched array with a broken varint
	printf 'raw 0a070806220308028050000a\n' | gen bad3
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/bad3.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad3.pb: offset 0: malformed TracePacket"* ]]
	[ ! -e "$TMP/o.pb" ]
}

@test "sync of a torn last record warns and keeps the rest" {
	gen good <<-'EOF'
	packet seq=1 ts=5 field=1000 payload=x
	EOF
	{ cat "$TMP/good.pb"; printf '\x0a\x09\x08'; } >"$TMP/torn.pb"
	run "$BTR" sync -o "$TMP/o.pb" "$TMP/torn.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"torn.pb: offset 10: truncated record"* ]]
	# the packet, then sync's trailer
	diff <("$TOOLS/tracetimes" --hex "$TMP/good.pb") <("$TOOLS/tracetimes" --hex "$TMP/o.pb" | head -n 1)
	[ "$("$BTR" dump "$TMP/o.pb" | tail -n 1)" = "- - sync_info trace_clock=BOOTTIME" ]
}

@test "mixed clocks come out on BOOTTIME with the expected timestamps" {
	mixed_trace
	run "$BTR" sync -o "$TMP/out.pb" "$TMP/mixed.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"18 packets read, 16 written"* ]]
	[[ "$output" == *"clock_sync_failure_unknown_source_clock: 1"* ]]
	[[ "$output" == *"clock_sync_failure_no_path: 1"* ]]
	[[ "$output" == *"clock_sync_failure_undeferrable_packet_loss: 2"* ]]
	[[ "$output" == *"2 packets dropped"* ]]
	diff -u - <(unknown_lines "$TMP/out.pb") <<-'EOF'
	9000 fields=1003
	10050 fields=1005
	10060 fields=1006
	10100 fields=1004
	10500 fields=1001
	11000 fields=1000
	15000 fields=1008
	20500 fields=1002
	35000 fields=1010
	- fields=1011
	EOF
	# the bundle kept its events, on BOOTTIME
	diff -u - <("$BTR" dump --raw-timestamps "$TMP/out.pb" | awk '$2 == 0 { print $1, $3 }') <<-'EOF'
	12000 sched_switch
	12005 sched_waking
	12010 sched_switch
	EOF
	# no packet names a clock any more, times never go back
	times_sorted "$TMP/out.pb"
	! grep -q ' clock$' "$TMP/times.txt" || false
	# the trailer remembers the clock and the drops, also after a re-sync
	[ "$("$BTR" dump "$TMP/out.pb" | tail -n 1)" = "- - sync_info trace_clock=BOOTTIME clock_sync_failure_unknown_source_clock=1 clock_sync_failure_no_path=1 clock_sync_failure_undeferrable_packet_loss=2" ]
	"$BTR" sync -q -o "$TMP/again.pb" "$TMP/out.pb"
	cmp "$TMP/out.pb" "$TMP/again.pb"
}

@test "--trace-clock REALTIME puts everything on REALTIME" {
	mixed_trace
	run "$BTR" sync --trace-clock REALTIME -o "$TMP/rt.pb" "$TMP/mixed.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"on REALTIME"* ]]
	# REALTIME going back is a trace clock going back: that snapshot is
	# rejected; packets on REALTIME itself need no conversion
	[[ "$output" == *"invalid_clock_snapshots: 1"* ]]
	[[ "$output" == *"clock_sync_failure_unknown_source_clock: 1"* ]]
	diff -u - <(unknown_lines "$TMP/rt.pb") <<-'EOF'
	500100 fields=1009
	999000 fields=1003
	1000050 fields=1005
	1000060 fields=1006
	1000100 fields=1004
	1000500 fields=1001
	1001000 fields=1000
	1005000 fields=1008
	1010500 fields=1002
	1025000 fields=1010
	- fields=1011
	EOF
	diff -u - <("$BTR" dump --raw-timestamps "$TMP/rt.pb" | awk '$2 == 0 { print $1, $3 }') <<-'EOF'
	1002000 sched_switch
	1002005 sched_waking
	1002010 sched_switch
	EOF
	# the snapshots now declare REALTIME as the trace clock, the trailer
	# says the bundles are on it: dump and a re-sync take them as they are
	[ "$("$BTR" dump --raw-timestamps "$TMP/rt.pb" | grep -c 'clock_snapshot primary=REALTIME')" -eq 4 ]
	"$BTR" dump "$TMP/rt.pb" | grep -q '^1002005 0 sched_waking '
	"$BTR" dump "$TMP/rt.pb" | grep -q '^1025000 - unknown_packet fields=1010$'
	"$BTR" sync -q -o "$TMP/rt2.pb" "$TMP/rt.pb" 2>/dev/null
	cmp "$TMP/rt.pb" "$TMP/rt2.pb"
	# by number too, and MONOTONIC
	"$BTR" sync -q --trace-clock 1 -o "$TMP/rt1.pb" "$TMP/mixed.pb"
	cmp "$TMP/rt.pb" "$TMP/rt1.pb"
	"$BTR" sync -q --trace-clock monotonic -o "$TMP/mono.pb" "$TMP/mixed.pb"
	[ "$(unknown_lines "$TMP/mono.pb" | head -3 | tr '\n' ' ')" = "3000 fields=1003 4050 fields=1005 4060 fields=1006 " ]
}

@test "primary_trace_clock decides the trace clock and the default clock" {
	gen prim <<-'EOF'
	snapshot seq=1 primary=MONOTONIC BOOTTIME:10000 MONOTONIC:4000
	packet seq=2 ts=4100 field=1000
	packet seq=2 clock=BOOTTIME ts=10200 field=1001
	EOF
	run "$BTR" sync -o "$TMP/out.pb" "$TMP/prim.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"on MONOTONIC"* ]]
	diff -u - <(unknown_lines "$TMP/out.pb") <<-'EOF'
	4100 fields=1000
	4200 fields=1001
	EOF
	# the output syncs again to itself
	"$BTR" sync -q -o "$TMP/again.pb" "$TMP/out.pb"
	cmp "$TMP/out.pb" "$TMP/again.pb"
}

@test "timestamps that cannot be converted are dropped and counted" {
	gen drops <<-'EOF'
	snapshot seq=1 BOOTTIME:1000 MONOTONIC:4000
	snapshot seq=1 250:10 251:20
	packet seq=2 clock=MONOTONIC ts=4500 field=1000
	packet seq=2 clock=MONOTONIC ts=100 field=1001
	packet seq=2 clock=250 ts=50 field=1002
	packet seq=2 clock=300 ts=50 field=1003
	packet seq=0 clock=70 ts=50 field=1004
	EOF
	run "$BTR" sync -o "$TMP/out.pb" "$TMP/drops.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"trace_sorter_negative_timestamp_dropped: 1"* ]]
	[[ "$output" == *"clock_sync_failure_no_path: 1"* ]]
	[[ "$output" == *"clock_sync_failure_unknown_source_clock: 2"* ]]
	[[ "$output" == *"clock_sync_failure_undeferrable_packet_loss: 4"* ]]
	diff -u - <(unknown_lines "$TMP/out.pb") <<-'EOF'
	1500 fields=1000
	EOF
	# onto MONOTONIC, the bundle events before MONOTONIC's 0 go alone
	gen early <<-'EOF'
	snapshot seq=1 BOOTTIME:10000 MONOTONIC:1000
	bundle cpu=1 seq=3 switch=5000,9500,10000 events=8000,12000 prev_end=4000
	EOF
	run "$BTR" sync --trace-clock MONOTONIC -o "$TMP/mono.pb" "$TMP/early.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"2 events dropped from ftrace bundles"* ]]
	[[ "$output" == *"1 previous_bundle_end_timestamp fields dropped"* ]]
	[[ "$output" == *"trace_sorter_negative_timestamp_dropped: 3"* ]]
	[[ "$output" == *"2 packets read, 2 written"* ]]
	diff -u - <("$BTR" dump --raw-timestamps "$TMP/mono.pb" |
		awk '$2 == 1 { for (i = 4; i <= NF; i++) if ($i ~ /^(next_)?pid=/) { print $1, $3, $i; break } }') <<-'EOF'
	500 sched_switch next_pid=101
	1000 sched_switch next_pid=102
	3000 sched_process_free pid=301
	EOF
	# a trace clock no snapshot has
	run "$BTR" sync --trace-clock PERF -o "$TMP/perf.pb" "$TMP/drops.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"clock_sync_failure_unknown_target_clock: "* ]]
}

@test "an unknown packet type survives byte for byte" {
	gen unk <<-'EOF'
	snapshot seq=1 BOOTTIME:10000 MONOTONIC:4000
	unknown seq=3 field=5000 bytes=0a030102031001f80101
	packet seq=4 clock=MONOTONIC ts=4500 field=5001 bytes=ffee00 raw=d0b80201ddb80211223344
	EOF
	"$BTR" sync -q -o "$TMP/out.pb" "$TMP/unk.pb"
	# the untimed one: the same bytes
	"$TOOLS/tracetimes" --hex "$TMP/unk.pb" | sed -n 2p >"$TMP/want.hex"
	"$TOOLS/tracetimes" --hex "$TMP/out.pb" | grep -qxf "$TMP/want.hex"
	# the timed one: the same but its time on BOOTTIME and no clock id
	printf 'packet seq=4 ts=10500 field=5001 bytes=ffee00 raw=d0b80201ddb80211223344\n' | gen want
	"$TOOLS/tracetimes" --hex "$TMP/want.pb" >"$TMP/want2.hex"
	"$TOOLS/tracetimes" --hex "$TMP/out.pb" | grep -qxf "$TMP/want2.hex"
	[ "$("$TOOLS/tracetimes" --hex "$TMP/out.pb" | wc -l)" -eq 4 ] # + trailer
}

@test "TracePacketDefaults keep their other fields and lose their clock" {
	gen defs <<-'EOF'
	snapshot seq=1 BOOTTIME:10000 MONOTONIC:4000
	defaults seq=5 clock=MONOTONIC extra=track-defaults cleared
	packet seq=5 ts=4100 field=1000
	packet seq=5 ts=4100 field=1001 cleared
	EOF
	"$BTR" sync -q -o "$TMP/out.pb" "$TMP/defs.pb"
	protoc --decode_raw <"$TMP/out.pb" >"$TMP/raw.txt"
	grep -q 'track-defaults' "$TMP/raw.txt"
	! grep -q '^  58:' "$TMP/raw.txt" || false
	! grep -q '^    58:' "$TMP/raw.txt" || false
	# the first packet used the default clock; the clear forgot it
	diff -u - <(unknown_lines "$TMP/out.pb") <<-'EOF'
	4100 fields=1001
	10100 fields=1000
	EOF
}

@test "incremental and scaled clocks follow their snapshots in file order" {
	gen inc <<-'EOF'
	packet seq=5 clock=64 ts=3 field=1000
	snapshot seq=5 BOOTTIME:10000 64:1000:inc
	packet seq=5 clock=64 ts=10 field=1001
	packet seq=5 clock=64 ts=5 field=1002
	snapshot seq=5 BOOTTIME:20000 64:2000:inc
	packet seq=5 clock=64 ts=7 field=1003
	snapshot seq=6 BOOTTIME:30000 65:5:u1000
	packet seq=6 clock=65 ts=7 field=1004
	EOF
	"$BTR" sync -q -o "$TMP/out.pb" "$TMP/inc.pb"
	diff -u - <(unknown_lines "$TMP/out.pb") <<-'EOF'
	10003 fields=1000
	10010 fields=1001
	10015 fields=1002
	20007 fields=1003
	32000 fields=1004
	EOF
}

@test "ftrace bundles on MONO_RAW and GLOBAL clocks come out on BOOTTIME" {
	gen fclk <<-'EOF'
	snapshot seq=1 BOOTTIME:10000 MONOTONIC_RAW:7000
	bundle cpu=0 seq=3 fclock=mono_raw switch=7100,7200 prev_end=7050
	bundle cpu=1 seq=4 fclock=global ftrace_ts=500 boot_ts=20500 switch=400,450
	EOF
	"$BTR" sync -q -o "$TMP/out.pb" "$TMP/fclk.pb"
	diff -u - <("$BTR" dump --raw-timestamps "$TMP/out.pb" | awk '$2 ~ /^[0-9]$/ { print $1, $2 }') <<-'EOF'
	10100 0
	10200 0
	20400 1
	20450 1
	EOF
	protoc --decode_raw <"$TMP/out.pb" >"$TMP/raw.txt"
	grep -q '10: 10050' "$TMP/raw.txt"
	! grep -q '^    5: ' "$TMP/raw.txt" || false
}

@test "gzip input gives the same output" {
	mixed_trace
	"$BTR" sync -q -o "$TMP/plain.pb" "$TMP/mixed.pb" 2>/dev/null
	gzip -c "$TMP/mixed.pb" >"$TMP/mixed.pb.gz"
	"$BTR" sync -q -o "$TMP/gz.pb" "$TMP/mixed.pb.gz" 2>/dev/null
	cmp "$TMP/plain.pb" "$TMP/gz.pb"
	# and from standard input, plain or gzip
	gzip -c "$TMP/mixed.pb" | "$BTR" sync -q -o "$TMP/stdin.pb" - 2>/dev/null
	cmp "$TMP/plain.pb" "$TMP/stdin.pb"
	"$BTR" sync -q -o - "$TMP/mixed.pb" 2>/dev/null >"$TMP/stdout.pb"
	cmp "$TMP/plain.pb" "$TMP/stdout.pb"
}

@test "a memory limit that forces several runs gives the same output" {
	big_trace 3000
	run "$BTR" sync -o "$TMP/mem.pb" "$TMP/big.pb"
	[ "$status" -eq 0 ]
	[[ "$output" != *"runs on disk"* ]]
	run "$BTR" sync --memory-limit 16K -o "$TMP/disk.pb" "$TMP/big.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" =~ sorted\ in\ ([0-9]+)\ runs\ on\ disk ]]
	[ "${BASH_REMATCH[1]}" -ge 4 ]
	cmp "$TMP/mem.pb" "$TMP/disk.pb"
	TMPDIR="$TMP" "$BTR" sync -q --memory-limit 64K -o "$TMP/disk2.pb" "$TMP/big.pb"
	cmp "$TMP/mem.pb" "$TMP/disk2.pb"
	# the temporary files are gone
	[ "$(find "$TMP" -name 'bpftrace-rec-sort*' | wc -l)" -eq 0 ]
	times_sorted "$TMP/mem.pb"
}

@test "dump shows timestamps in the trace clock" {
	mixed_trace
	run "$BTR" dump "$TMP/mixed.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"10500 - unknown_packet fields=1001"* ]]
	[[ "$output" == *"11000 - unknown_packet fields=1000"* ]]
	[[ "$output" == *"2 packets and 0 events not shown"* ]]
	[[ "$output" == *"clock_sync_failure_no_path: 1"* ]]
	run "$BTR" dump --raw-timestamps "$TMP/mixed.pb"
	[[ "$output" == *"4500 - unknown_packet fields=1001"* ]]
	run sh -c "cat '$TMP/mixed.pb' | '$BTR' dump -"
	[ "$status" -eq 0 ]
	[[ "$output" == *"10500 - unknown_packet fields=1001"* ]]
}

@test "a recorded trace synced keeps every event, in order" {
	record_cmd -d 1 -- "$TOOLS/pingpong" 300
	run "$BTR" sync -o "$TMP/synced.pb" "$TMP/trace.pb"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" =~ ([0-9]+)\ packets\ read,\ ([0-9]+)\ written ]]
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
	[[ "$output" != *"warning"* ]]
	"$BTR" dump "$TMP/trace.pb" >"$TMP/in.txt"
	"$BTR" dump "$TMP/synced.pb" >"$TMP/out.txt"
	[ "$(wc -l <"$TMP/in.txt")" -gt 1000 ]
	# the same events (and sync's trailer)...
	[ "$(tail -n 1 "$TMP/out.txt")" = "- - sync_info trace_clock=BOOTTIME" ]
	diff <(sort "$TMP/in.txt") <(head -n -1 "$TMP/out.txt" | sort)
	# ...in the same order on each CPU
	for cpu in $(awk '$2 ~ /^[0-9]+$/ { print $2 }' "$TMP/in.txt" | sort -u); do
		diff <(awk -v c="$cpu" '$2 == c' "$TMP/in.txt") <(awk -v c="$cpu" '$2 == c' "$TMP/out.txt")
	done
	# packets sorted by time, no clock ids left, and it syncs to itself
	times_sorted "$TMP/synced.pb"
	! grep -q ' clock$' "$TMP/times.txt" || false
	"$BTR" sync -q -o "$TMP/again.pb" "$TMP/synced.pb"
	cmp "$TMP/synced.pb" "$TMP/again.pb"
	protoc_decode "$TMP/synced.pb"
}
