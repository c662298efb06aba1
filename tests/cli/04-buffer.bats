#!/usr/bin/env bats
# Loss accounting, the central buffer's fill policies, streaming, snapshots
# and a full disk: every stage that can lose data counts it.

load helpers

# Conservation per CPU; extra recorder options in $@.
check_conservation() {
	need_root
	# The reader is stopped while a load runs: its 4K rings overflow.
	"$BTR" -v --ringbuf-size 4K "$@" -o "$TMP/t.pb" 2>"$TMP/err" &
	local pid=$!
	wait_recording "$pid"
	kill -STOP "$pid"
	perf bench sched pipe -l 20000 >/dev/null
	kill -CONT "$pid"
	perf bench sched pipe -l 5000 >/dev/null
	kill -INT "$pid"
	wait "$pid"
	dump_trace "$TMP/t.pb"
	local dropped_total=0
	while read -r cpu runs readn dropped; do
		echo "cpu $cpu: runs $runs read $readn dropped $dropped"
		[ "$runs" -eq $((readn + dropped)) ]
		# what was read is in the trace, on that CPU
		local in_trace
		in_trace=$(awk -v c="$cpu" '$2 == c && $3 != "lost_events" && $3 != "ftrace_cpu_stats"' "$TMP/dump.txt" | wc -l)
		[ "$in_trace" -eq "$readn" ]
		# and the drops are in the trace's ftrace stats
		[ "$(stat_value "$TMP/t.pb" ftrace_cpu_dropped_events_end "$cpu")" -eq "$dropped" ]
		dropped_total=$((dropped_total + dropped))
	done < <(sed -n 's/.*cpu \([0-9]*\): \([0-9]*\) program runs, \([0-9]*\) records read, \([0-9]*\) dropped/\1 \2 \3 \4/p' "$TMP/err")
	# the rings were small enough to overflow, and the loss is flagged
	[ "$dropped_total" -gt 0 ]
	grep -q " lost_events" "$TMP/dump.txt"
	run "$BTR" stats --fail-on-loss "$TMP/t.pb"
	[ "$status" -eq 3 ]
	[[ "$output" == *ftrace_cpu_has_data_loss* ]]
}

@test "conservation: records + BPF drops = program runs, per CPU, with tiny rings" {
	check_conservation
}

@test "conservation with two reader threads" {
	check_conservation --readers 2
	grep -q "; 2 reader threads" "$TMP/err"
}

@test "ring policy: a tiny buffer keeps the newest events, all decodable" {
	record_cmd -q -b 256K -- sh -c "perf bench sched pipe -l 30000 >/dev/null; exec $TOOLS/pingpong 300"
	[ "$(stat_value "$TMP/trace.pb" traced_buf_chunks_overwritten)" -gt 0 ]
	protoc_decode "$TMP/trace.pb"
	dump_trace "$TMP/trace.pb"
	# every switch that survived has its comm resolved
	! awk '$3 == "sched_switch" && $0 !~ / next_comm=[^ ]+/' "$TMP/dump.txt" | grep -q . || false
	# the newest events, the ping-pong that ran last, are there; the
	# oldest, the initial process scan, is gone
	grep -q "sched_process_exit .*comm=pingpong-child" "$TMP/dump.txt"
	grep -q "next_comm=pingpong-parent" "$TMP/dump.txt"
	! grep -q " process pid=1 " "$TMP/dump.txt" || false
	run "$BTR" stats --fail-on-loss "$TMP/trace.pb"
	[ "$status" -eq 0 ]  # overwriting the oldest is what ring mode asks for
}

@test "discard policy: a tiny buffer keeps the oldest events" {
	record_cmd -q -b 64K --fill-policy discard -- perf bench sched pipe -l 5000
	[ "$(stat_value "$TMP/trace.pb" traced_buf_chunks_discarded)" -gt 0 ]
	[ "$(stat_value "$TMP/trace.pb" traced_buf_chunks_overwritten)" -eq 0 ]
	dump_trace "$TMP/trace.pb"
	# the initial process scan, first thing in the buffer, is there
	grep -q " process pid=1 " "$TMP/dump.txt"
	# and the benchmark's end is not
	! grep -q "sched_process_exit .*comm=perf" "$TMP/dump.txt" || false
}

# Streaming keeps every event; extra recorder options in $@.
check_streaming() {
	need_root
	"$BTR" -v -b 1M --stream --file-write-period 200ms "$@" -o "$TMP/t.pb" -- \
		perf bench sched pipe -l 240000 >/dev/null 2>"$TMP/err"
	local size read_total
	size=$(stat -c %s "$TMP/t.pb")
	echo "file $size bytes"
	[ "$size" -gt $((5 * 1024 * 1024)) ]
	[ "$(stat_value "$TMP/t.pb" traced_buf_chunks_overwritten)" -eq 0 ]
	[ "$(stat_value "$TMP/t.pb" traced_buf_chunks_discarded)" -eq 0 ]
	read_total=$(sed -n 's/.*cpu [0-9]*: [0-9]* program runs, \([0-9]*\) records read.*/\1/p' "$TMP/err" | awk '{ n += $1 } END { print n }')
	dump_trace "$TMP/t.pb"
	echo "read $read_total, in trace $(count_sched_events)"
	[ "$(count_sched_events)" -eq "$read_total" ]
	run "$BTR" stats --fail-on-loss "$TMP/t.pb"
	[ "$status" -eq 0 ]
}

@test "streaming: a recording five times the buffer keeps every event" {
	check_streaming
}

@test "streaming with two reader threads keeps every event" {
	check_streaming --readers 2
	grep -q "; 2 reader threads" "$TMP/err"
}

@test "streaming: SIGKILL mid-recording leaves a decodable file" {
	need_root
	# threaded (-T): one process, whose pid the shell leaves behind
	"$BTR" -q --stream --file-write-period 100ms -o "$TMP/t.pb" -- \
		sh -c 'echo $$ >"$0"; exec perf bench sched pipe -T -l 2000000' \
		"$TMP/wl.pid" >/dev/null 2>&1 &
	local pid=$!
	wait_recording "$pid"
	sleep 1.5
	kill -KILL "$pid"
	wait "$pid" || true
	kill "$(cat "$TMP/wl.pid")" 2>/dev/null || true
	run "$BTR" dump "$TMP/t.pb"
	[ "$status" -eq 0 ] || fail "dump: $(tail -n 3 <<<"$output")"
	[ "$(grep -c ' sched_switch ' <<<"$output")" -gt 1000 ]
}

# Flight-recorder snapshots; extra recorder options in $@.
check_snapshots() {
	need_root
	"$BTR" -q "$@" -o "$TMP/t.pb" 2>"$TMP/err" &
	local pid=$!
	wait_recording "$pid"
	kill -USR1 "$pid"
	for _ in $(seq 50); do [ -s "$TMP/t.1.pb" ] && break; sleep 0.1; done
	sleep 0.5
	kill -USR1 "$pid"
	sleep 0.5
	kill -INT "$pid"
	wait "$pid"
	protoc_decode "$TMP/t.1.pb"
	grep -q compact_sched "$TMP/decoded.txt"
	grep -q trace_stats "$TMP/decoded.txt"
	protoc_decode "$TMP/t.2.pb"
	# the final file is complete: it has everything the snapshots had
	protoc_decode "$TMP/t.pb"
	grep -q "final_flush_outcome" "$TMP/decoded.txt"
	[ "$(stat -c %s "$TMP/t.pb")" -gt "$(stat -c %s "$TMP/t.1.pb")" ]
	[ "$(stat -c %a "$TMP/t.1.pb")" = 600 ]
}

@test "SIGUSR1 writes a snapshot while recording goes on" {
	check_snapshots
}

@test "SIGUSR1 snapshots with two reader threads" {
	check_snapshots --readers 2
	# the snapshot has the scheduler events the readers had read
	dump_trace "$TMP/t.1.pb"
	grep -q " sched_switch " "$TMP/dump.txt"
}

# A streaming write fails; extra recorder options in $@.
check_full_fs() {
	need_root
	mkdir "$TMP/small"
	mount -t tmpfs -o size=256k tmpfs "$TMP/small"
	local rc=0 dump_rc=0
	"$BTR" -q --stream --file-write-period 100ms "$@" -o "$TMP/small/t.pb" -- \
		perf bench sched pipe -l 100000 >/dev/null 2>"$TMP/err" || rc=$?
	"$BTR" dump "$TMP/small/t.pb" >"$TMP/dump.txt" 2>&1 || dump_rc=$?
	cp "$TMP/small/t.pb" "$TMP/copy.pb"
	umount "$TMP/small"
	cat "$TMP/err"
	[ "$rc" -eq 1 ]
	grep -q "$TMP/small/t.pb: No space left on device" "$TMP/err"
	[ "$dump_rc" -eq 0 ]
	[ "$(grep -c ' sched_switch ' "$TMP/dump.txt")" -gt 100 ]
	protoc_decode "$TMP/copy.pb" 
}

@test "a full file system: clear error, non-zero exit, what was written decodes" {
	check_full_fs
}

@test "a full file system with two reader threads: the same error and exit" {
	check_full_fs --readers 2
}

@test "a full file system at the final write (no --stream): exit 1, the file named, whole packets kept" {
	need_root
	mkdir "$TMP/small"
	mount -t tmpfs -o size=64k tmpfs "$TMP/small"
	local rc=0
	"$BTR" -q -o "$TMP/small/t.pb" -- perf bench sched pipe -l 50000 \
		>/dev/null 2>"$TMP/err" || rc=$?
	cp "$TMP/small/t.pb" "$TMP/copy.pb"
	umount "$TMP/small"
	cat "$TMP/err"
	[ "$rc" -eq 1 ]
	grep -q "$TMP/small/t.pb: No space left on device" "$TMP/err"
	# what fitted is whole packets: it decodes and holds events
	protoc_decode "$TMP/copy.pb"
	dump_trace "$TMP/copy.pb"
	[ "$(grep -c ' sched_switch ' "$TMP/dump.txt")" -gt 100 ]
}

@test "a file system full from the start: the header cannot be written, exit 1 at once, the file named and removed" {
	need_root
	mkdir "$TMP/small"
	mount -t tmpfs -o size=64k tmpfs "$TMP/small"
	dd if=/dev/zero of="$TMP/small/fill" bs=4k 2>/dev/null || true
	local rc=0 left t0=$SECONDS took
	timeout 60 "$BTR" -q -o "$TMP/small/t.pb" -- sleep 30 >/dev/null 2>"$TMP/err" || rc=$?
	took=$((SECONDS - t0))
	left=$(ls "$TMP/small")
	umount "$TMP/small"
	cat "$TMP/err"
	# not after the 30 s command: at the start
	[ "$took" -lt 20 ] || fail "exited after $took s"
	[ "$rc" -eq 1 ]
	grep -q "$TMP/small/t.pb: No space left on device" "$TMP/err"
	[ "$left" = fill ] || fail "left: $left"
}

@test "a snapshot that cannot be written is reported and removed; recording goes on" {
	need_root
	mkdir "$TMP/small"
	mount -t tmpfs -o size=64k tmpfs "$TMP/small"
	local rc=0
	# -o - puts snapshots in the working directory: the small tmpfs
	(cd "$TMP/small" && "$BTR" -o - -- sh -c \
		'perf bench sched pipe -l 50000 >/dev/null; kill -USR1 $PPID; sleep 1' \
		>"$TMP/t.pb" 2>"$TMP/err") || rc=$?
	local left
	left=$(ls -A "$TMP/small")
	umount "$TMP/small"
	cat "$TMP/err"
	[ "$rc" -eq 0 ]
	grep -q "snapshot trace.1.pb: No space left on device" "$TMP/err"
	[ -z "$left" ]
	# the recording itself is complete
	protoc_decode "$TMP/t.pb"
	grep -q "final_flush_outcome" "$TMP/decoded.txt"
	dump_trace "$TMP/t.pb"
	[ "$(grep -c ' sched_switch ' "$TMP/dump.txt")" -gt 50000 ]
}

@test "stats: usage errors and a missing file" {
	run "$BTR" stats
	[ "$status" -eq 64 ]
	run "$BTR" stats "$TMP/none.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/none.pb"* ]]
}

@test "--file-write-period or --max-file-size without --stream is a usage error" {
	run "$BTR" --file-write-period 1s
	[ "$status" -eq 64 ]
	run "$BTR" --max-file-size 1M -o "$TMP/t.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"need --stream"* ]]
	[ ! -e "$TMP/t.pb" ]
	run "$BTR" --fill-policy sometimes
	[ "$status" -eq 64 ]
	run "$BTR" -b 1K
	[ "$status" -eq 64 ]
}

@test "--max-file-size stops the recording at the limit with whole packets" {
	need_root
	run "$BTR" --stream --file-write-period 100ms --max-file-size 300K \
		-o "$TMP/t.pb" -- perf bench sched pipe -l 200000
	[ "$status" -eq 0 ]
	[[ "$output" == *"max-file-size"* ]]
	local size
	size=$(stat -c %s "$TMP/t.pb")
	[ "$size" -le $((300 * 1024)) ]
	[ "$size" -gt $((100 * 1024)) ]
	protoc_decode "$TMP/t.pb"
}

# Two SIGINTs in a row, 10 ms apart (the second may come before the
# final write began: the file holds its header from the start); extra
# recorder options in $@.
check_second_sigint() {
	need_root
	"$BTR" -b 256M "$@" -o "$TMP/t.pb" 2>"$TMP/err" -- \
		sh -c 'echo $$ >"$0"; exec perf bench sched pipe -T -l 3000000' \
		"$TMP/wl.pid" >/dev/null &
	local pid=$! rc=0 t0 t1
	wait_recording "$pid"
	sleep 2
	kill -INT "$pid"
	sleep 0.01
	kill -INT "$pid" 2>/dev/null || true
	t0=$(date +%s%N)
	wait "$pid" || rc=$?
	t1=$(date +%s%N)
	kill "$(cat "$TMP/wl.pid")" 2>/dev/null || true
	echo "exit $rc after $(( (t1 - t0) / 1000000 )) ms"
	[ $(( (t1 - t0) / 1000000 )) -lt 2000 ]
	if [ "$rc" -eq 130 ]; then
		grep -q "interrupted twice" "$TMP/err"
	else
		[ "$rc" -eq 0 ]
	fi
	run "$BTR" dump "$TMP/t.pb"
	[ "$status" -eq 0 ] || fail "dump: $(tail -n 3 <<<"$output")"
}

@test "a second SIGINT exits promptly with a decodable file" {
	check_second_sigint
}

@test "a second SIGINT with two reader threads: prompt, decodable" {
	check_second_sigint --readers 2
}

@test "two SIGINTs before recording began: no file left, or a trace, never an empty file" {
	need_root
	local rc=0
	"$BTR" -o "$TMP/t.pb" -- sleep 10 2>"$TMP/err" &
	local pid=$!
	# apart, or the two may come as one
	sleep 0.05
	kill -INT "$pid"
	sleep 0.01
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	cat "$TMP/err"
	[ "$rc" = 130 ]
	if grep -q "before recording began: no trace written" "$TMP/err"; then
		[ ! -e "$TMP/t.pb" ] || fail "the empty file was left"
	else
		grep -q "interrupted twice: exiting with what is written" "$TMP/err"
		run "$BTR" dump "$TMP/t.pb"
		[ "$status" -eq 0 ] || fail "dump: $(tail -n 3 <<<"$output")"
	fi
}

@test "the status line on a terminal counts drops while recording" {
	need_root
	# 4K rings for 2.5 s under a pipe benchmark drop; `script` gives a
	# terminal
	timeout 4 perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
	local load=$!
	script -qec "\"$BTR\" --ringbuf-size 4K -d 2.5s -o \"$TMP/t.pb\"" \
		"$TMP/tty.txt" >/dev/null 2>&1 || fail "recording failed: $(tail -c 500 "$TMP/tty.txt")"
	kill "$load" 2>/dev/null || true
	wait "$load" || true
	tr '\r' '\n' <"$TMP/tty.txt" >"$TMP/lines.txt"
	# a status line (a second in) with a non-zero count, then the summary
	grep -aE '[0-9.]+s +[0-9]+ events +[0-9]+/s +[1-9][0-9]* dropped' "$TMP/lines.txt" ||
		fail "no status line with drops: $(grep -a dropped "$TMP/lines.txt")"
	grep -aE 'lost [1-9][0-9]*;' "$TMP/lines.txt"
}
