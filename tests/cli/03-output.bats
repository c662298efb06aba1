#!/usr/bin/env bats
# The output file: permissions, ownership, unwritable paths, stdout, and
# stopping by signal or by the traced command.

load helpers

@test "the trace is mode 0600 and belongs to the sudo user" {
	need_root
	chmod 755 "$TMP"
	SUDO_UID=65534 SUDO_GID=65534 "$BTR" -q -d 0.3 -o "$TMP/t.pb"
	[ "$(stat -c %a "$TMP/t.pb")" = 600 ]
	[ "$(stat -c %u:%g "$TMP/t.pb")" = 65534:65534 ]
}

@test "an existing file is replaced and set to 0600" {
	need_root
	echo old >"$TMP/t.pb"
	chmod 644 "$TMP/t.pb"
	"$BTR" -q -d 0.3 -o "$TMP/t.pb"
	[ "$(stat -c %a "$TMP/t.pb")" = 600 ]
	[ "$(head -c1 "$TMP/t.pb" | od -An -tx1 | tr -d ' ')" = "0a" ]
}

@test "an unwritable output path fails with the path in the message" {
	need_root
	run "$BTR" -q -d 0.3 -o "$TMP/no/such/dir/t.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/no/such/dir/t.pb"* ]]
}

@test "a symlink planted at the output path is not followed" {
	need_root
	ln -s "$TMP/victim" "$TMP/t.pb"
	run "$BTR" -q -d 0.3 -o "$TMP/t.pb"
	[ "$status" -eq 1 ]
	[ ! -e "$TMP/victim" ]
}

@test "-o - writes the trace to stdout" {
	need_root
	"$BTR" -q -d 0.3 -o - >"$TMP/out.pb"
	dump_trace "$TMP/out.pb"
	grep -q " clock_snapshot " "$TMP/dump.txt"
}

@test "SIGINT stops the recording with exit 0 and a complete trace" {
	need_root
	"$BTR" -o "$TMP/t.pb" 2>"$TMP/err" &
	local pid=$!
	wait_recording "$pid"
	kill -INT "$pid"
	wait "$pid"
	grep -q "recorded .* events" "$TMP/err"
	protoc_decode "$TMP/t.pb"
	grep -q "trace_stats" "$TMP/decoded.txt"
}

@test "SIGTERM stops the recording with exit 0" {
	need_root
	"$BTR" -q -o "$TMP/t.pb" &
	local pid=$!
	wait_recording "$pid"
	kill -TERM "$pid"
	wait "$pid"
	protoc_decode "$TMP/t.pb"
}

@test "recording stops when the command exits and exits with its status" {
	need_root
	run "$BTR" -o "$TMP/t.pb" -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	[[ "$output" == *"command exited with status 7"* ]]
	protoc_decode "$TMP/t.pb"
	run "$BTR" -q -o "$TMP/t.pb" -- true
	[ "$status" -eq 0 ]
}

@test "a command killed by a signal makes the recorder exit 128+N, trace complete" {
	need_root
	run "$BTR" -o "$TMP/t.pb" -- sh -c 'kill -KILL $$'
	[ "$status" -eq 137 ]
	[[ "$output" == *"command exited with status 137"* ]]
	run "$BTR" -q -o "$TMP/t.pb" -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	protoc_decode "$TMP/t.pb"
	grep -q "final_flush_outcome" "$TMP/decoded.txt"
}

@test "a command that cannot run fails and leaves no trace" {
	need_root
	run "$BTR" -o "$TMP/t.pb" -- /no/such/program
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot run '/no/such/program'"* ]]
	[ ! -e "$TMP/t.pb" ]
}

# -d 1s; extra recorder options in $@.
check_duration() {
	need_root
	local t0 t1
	t0=$(date +%s%N)
	"$BTR" -q -d 1s "$@" -o "$TMP/t.pb"
	t1=$(date +%s%N)
	[ $(( (t1 - t0) / 1000000 )) -ge 1000 ]
	[ $(( (t1 - t0) / 1000000 )) -lt 5000 ]
}

@test "-d stops after the duration" {
	check_duration
}

@test "-d with two reader threads: stops after the duration, complete trace" {
	check_duration --readers 2
	protoc_decode "$TMP/t.pb"
	grep -q "final_flush_outcome" "$TMP/decoded.txt"
	dump_trace "$TMP/t.pb"
	grep -q " sched_switch " "$TMP/dump.txt"
}

# CapEff of the recorder while it records (after the start-up).
recording_caps() {
	"$BTR" -q -d 3 -o "$TMP/t.pb" &
	local pid=$!
	wait_recording "$pid"
	grep -E '^(CapEff|CapBnd|NoNewPrivs):' "/proc/$pid/status" >"$TMP/caps"
	wait "$pid"
}

@test "after start-up the recorder holds no capability" {
	need_root
	recording_caps
	cat "$TMP/caps"
	grep -q "CapEff:	0000000000000000" "$TMP/caps"
	grep -q "CapBnd:	0000000000000000" "$TMP/caps"
	grep -q "NoNewPrivs:	1" "$TMP/caps"
	# and the recording still completed, clock snapshots included
	dump_trace "$TMP/t.pb"
	[ "$(grep -c ' clock_snapshot ' "$TMP/dump.txt")" -ge 3 ]
}

@test "under sudo it keeps only CAP_CHOWN, for snapshot files" {
	need_root
	SUDO_UID=65534 SUDO_GID=65534 recording_caps
	grep -q "CapEff:	0000000000000001" "$TMP/caps"
}

@test "a file someone else planted at the output path is not overwritten" {
	need_root
	chmod 1777 "$TMP"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo mine > '$TMP/t.pb'"
	run "$BTR" -q -d 0.3 -o "$TMP/t.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/t.pb"* ]]
	[ "$(cat "$TMP/t.pb")" = mine ]
}

@test "a FIFO or directory at the output path is refused" {
	need_root
	mkfifo "$TMP/fifo"
	run timeout 10 "$BTR" -q -d 0.3 -o "$TMP/fifo"
	[ "$status" -eq 1 ]
	mkdir "$TMP/dir"
	run timeout 10 "$BTR" -q -d 0.3 -o "$TMP/dir"
	[ "$status" -eq 1 ]
}

@test "a full standard output fails every command, with a message" {
	need_root
	record_cmd -q -d 0.3s
	local cmd
	for cmd in "dump" "dump --json" "stats" "stats --json"; do
		run bash -c "\"$BTR\" $cmd \"$TMP/trace.pb\" >/dev/full"
		[ "$status" -eq 1 ] || fail "$cmd: exit $status"
		[[ "$output" == *"standard output: write error"* ]] || fail "$cmd: $output"
	done
	run bash -c "\"$BTR\" sync -q -o - \"$TMP/trace.pb\" >/dev/full"
	[ "$status" -eq 1 ]
	[[ "$output" == *"write error: No space left on device"* ]]
	run bash -c "\"$BTR\" -q -d 0.3s -o - >/dev/full"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stdout: No space left on device"* ]]
}

@test "sync to a path that cannot be created fails, naming it, and writes nothing" {
	record_cmd -q -d 0.3s
	run "$BTR" sync -q -o "$TMP/missing/out.pb" "$TMP/trace.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/missing/out.pb: No such file or directory"* ]]
	[ ! -e "$TMP/missing" ]
}

@test "sync onto a full file system fails and leaves no cut output" {
	need_root
	record_cmd -q -- perf bench sched pipe -l 20000
	[ "$(stat -c %s "$TMP/trace.pb")" -gt 131072 ]
	mkdir "$TMP/small"
	mount -t tmpfs -o size=64k tmpfs "$TMP/small"
	local rc=0
	"$BTR" sync -q -o "$TMP/small/out.pb" "$TMP/trace.pb" 2>"$TMP/err" || rc=$?
	ls -A "$TMP/small" >"$TMP/left.txt"
	umount "$TMP/small"
	cat "$TMP/err"
	[ "$rc" -eq 1 ]
	grep -q "$TMP/small/out.pb: write error: No space left on device" "$TMP/err"
	[ ! -s "$TMP/left.txt" ]
}
