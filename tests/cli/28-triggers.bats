#!/usr/bin/env bats
# Triggers (--trigger): conditions the reader computes from the scheduler
# records (a long runnable wait, a long sleep, a crowded run queue) and
# named triggers sent by other processes, each acting as Perfetto's
# trigger modes do (a snapshot file and recording goes on, or stop), within
# a rate limit and a disk budget; what the trace holds of them is checked
# with trace_processor. The workload (tests/workloads/stall.c) calls libc
# as programs do and is built as distributions build.

load helpers

DELAY_MS=500
# The stall and the condition: 50 ms among runnable waits of about 1 ms,
# over 20 ms. Under emulation (kernel-check's guests, several TCG guests
# on the host's CPUs) a guest's vCPU is itself held off the host's CPU
# now and then for 20 ms or more, which a runnable thread of the guest
# waits out too (a 6.12-rt guest's sleeper once waited 27 ms so): there
# the stall is 400 ms and the condition 150 ms.
if [ -n "${BTR_EMULATED:-}" ]; then
	STALL_MS=400 LAT_MS=150
else
	STALL_MS=50 LAT_MS=20
fi
LAT="latency>${LAT_MS}ms,comm=sleeper"

# The thread-track slice trace_processor has of FILE's trigger marks:
# "tid start end name" per slice, by start.
tp_marks() {
	tp_query "$1" "select th.tid as tid, s.ts as ts, s.ts + s.dur as e,
		s.name as name from slice s join thread_track tt on s.track_id = tt.id
		join thread th using (utid) order by s.ts"
}

# "ts name" of each slice on trace_processor's Trace Triggers track.
tp_triggers() {
	tp_query "$1" "select s.ts as ts, s.name as name from slice s
		join track t on s.track_id = t.id where t.name = 'Trace Triggers'
		order by s.ts"
}

# The stall workload's line: sets STALL_TID, STALL_FROM, STALL_TO.
read_stall() {
	local line
	line=$(grep '^stall tid=' "$1") || fail "no stall line in $1"
	STALL_TID=$(sed 's/.*tid=\([0-9]*\).*/\1/' <<<"$line")
	STALL_FROM=$(sed 's/.*from=\([0-9]*\).*/\1/' <<<"$line")
	STALL_TO=$(sed 's/.*to=\([0-9]*\).*/\1/' <<<"$line")
}

@test "latency>20ms: one 50 ms runnable wait among thousands of short ones writes exactly one snapshot, at the wait, with its aftermath" {
	need_root
	local cpu=$(($(nproc) - 1)) marks tids line start end trig n last named
	cd "$TMP"
	"$BTR" --trigger "$LAT" --trigger-delay ${DELAY_MS}ms \
		-o "$TMP/t.pb" -- "$TOOLS/stall" run "$cpu" "$STALL_MS" \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	read_stall "$TMP/cmd.out"
	# exactly one snapshot, the trigger's
	[ -s "$TMP/t.1.pb" ] || fail "no snapshot written"
	[ ! -e "$TMP/t.2.pb" ] || fail "more than one snapshot"
	[ "$(grep -c "trigger $LAT fired" "$TMP/rec.err")" = 1 ]
	[ "$(stat -c %a "$TMP/t.1.pb")" = 600 ]
	# the short waits fired nothing: the sleeper waited runnable thousands
	# of times, once for 50 ms, since it took its name (comm=: before, it
	# is "stall", and its first wait to run, as a new thread, may be long
	# too in a loaded guest)
	named=$("$BTR" dump "$TMP/t.pb" | awk -v p="pid=$STALL_TID" \
		'$3 == "task_rename" && $4 == p && $6 == "newcomm=sleeper" { print $1 }')
	[ -n "$named" ]
	n=$(tp_query "$TMP/t.pb" "select count(*) from thread_state ts join thread
		using (utid) where tid = $STALL_TID and state in ('R', 'R+')")
	echo "sleeper: $n runnable waits"
	[ "$n" -ge 500 ]
	tp_query "$TMP/t.pb" "select ts, dur, state from thread_state join thread
		using (utid) where tid = $STALL_TID and state in ('R', 'R+')
		and dur >= $((LAT_MS * 1000000))"
	[ "$(tp_query "$TMP/t.pb" "select count(*) from thread_state join thread
		using (utid) where tid = $STALL_TID and state in ('R', 'R+')
		and dur >= $((LAT_MS * 1000000)) and ts > $named")" = 1 ]
	# the mark: a slice on the sleeper's own track over its wait, which is
	# trace_processor's own runnable row of it
	marks=$(tp_marks "$TMP/t.1.pb")
	echo "marks: $marks"
	line=$(grep "^$STALL_TID," <<<"$marks")
	[ "$(wc -l <<<"$line")" = 1 ]
	IFS=, read -r _ start end _ <<<"$line"
	[ $((end - start)) -ge $(((STALL_MS - 5) * 1000000)) ] &&
		[ $((end - start)) -le $((STALL_MS * 4000000)) ]
	[ "$start" -ge $((STALL_FROM - 5000000)) ] && [ "$end" -ge "$STALL_TO" ]
	[ "$(tp_query "$TMP/t.1.pb" "select count(*) from thread_state join
		thread using (utid) where tid = $STALL_TID and state in ('R', 'R+')
		and ts = $start and ts + dur = $end")" = 1 ]
	# the Trigger packet: on the Trace Triggers track at the wait's end,
	# within the drain period (50 ms, and a pass)
	# (the trigger as received, and as the cause of this snapshot:
	# clone_snapshot_trigger, at the same time)
	trig=$(tp_triggers "$TMP/t.1.pb")
	echo "triggers: $trig"
	[ "$(wc -l <<<"$trig")" = 2 ] && [ "$(sort -u <<<"$trig" | wc -l)" = 1 ]
	IFS=, read -r n line <<<"$(head -1 <<<"$trig")"
	[ "$line" = "$LAT" ]
	[ "$n" -ge "$end" ] && [ "$n" -le $((end + 150000000)) ]
	[ "$(tp_query "$TMP/t.1.pb" "select value from stats
		where name = 'traced_clone_trigger_timestamp_ns'")" = "$n" ]
	# the snapshot holds the delay after the trigger too
	last=$(tp_query "$TMP/t.1.pb" "select max(ts) from sched")
	echo "trigger $n, last switch $last"
	[ "$last" -ge $((n + DELAY_MS * 900000)) ]
	# trace_processor names the trace's trigger; the config is echoed
	[ "$(tp_query "$TMP/t.1.pb" "select str_value from metadata
		where name = 'trace_trigger'")" = "$LAT" ]
	protoc_decode "$TMP/t.1.pb"
	grep -q "trigger_mode: CLONE_SNAPSHOT" "$TMP/decoded.txt"
	grep -q "stop_delay_ms: $DELAY_MS" "$TMP/decoded.txt"
	"$BTR" dump "$TMP/t.1.pb" >"$TMP/dump.txt"
	[ "$(grep -c "^$n - trigger name=${LAT%%,*},comm.*producer=bpftrace-rec" "$TMP/dump.txt")" = 1 ]
	grep -q "^$n - clone_snapshot_trigger name=${LAT%%,*},comm" "$TMP/dump.txt"
	grep -q "^$start - track_event type=begin .* ns=$((end - start)) " "$TMP/dump.txt"
	# report names the trigger and the thread
	"$BTR" report "$TMP/t.1.pb" >"$TMP/report.txt"
	grep -q "this snapshot was written for $LAT" "$TMP/report.txt"
	grep -q "thread $STALL_TID sleeper (pid [0-9]*): $LAT: runnable" "$TMP/report.txt"
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 1 ]
	[ "$(stat_value "$TMP/t.pb" triggers_suppressed)" = 0 ]
	tp_stats_clean "$TMP/t.1.pb" mismatched_sched_switch_tids
}

@test "--trigger-mode stop with two reader threads: the trace ends after the delay, the trigger in it" {
	need_root
	local cpu=$(($(nproc) - 1)) trig end
	cd "$TMP"
	"$BTR" --readers 2 --trigger "$LAT" --trigger-mode stop \
		--trigger-delay 300ms -o "$TMP/t.pb" -- "$TOOLS/stall" run "$cpu" "$STALL_MS" \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	grep -q "; the recording stops$" "$TMP/rec.err"
	[ ! -e "$TMP/t.1.pb" ]
	trig=$(tp_triggers "$TMP/t.pb")
	[ "$(wc -l <<<"$trig")" = 1 ] # stop: no clone_snapshot_trigger
	# the mark on the waiting thread's track, as with one reader (with
	# reader threads its sequence was once refused: no mark)
	read_stall "$TMP/cmd.out"
	tp_marks "$TMP/t.pb" | grep -q "^$STALL_TID,[0-9]*,[0-9]*,$LAT: runnable"
	protoc_decode "$TMP/t.pb"
	grep -q "trigger_mode: STOP_TRACING" "$TMP/decoded.txt"
	# it stopped 300 ms after the trigger, before the workload's last 1.5 s
	end=$(tp_query "$TMP/t.pb" "select max(ts) from sched")
	[ "$end" -ge $(("${trig%%,*}" + 250000000)) ]
	[ "$end" -le $(("${trig%%,*}" + 1200000000)) ]
	"$BTR" stats --fail-on-loss "$TMP/t.pb" >/dev/null
}

@test "a condition read only as the recording ends fires into its trace; a snapshot not yet due is said to be in it" {
	need_root
	local cpu=$(($(nproc) - 1)) trig line start end
	# rings too large to wake the reader and a drain pass every 10 s: the
	# stall is read only by the last drain, once SIGINT has come (with
	# two reader threads, whose hits wait for both readers to be past)
	"$BTR" --readers 2 --trigger "$LAT" --ringbuf-size 64M \
		--drain-period 10s -o "$TMP/t.pb" 2>"$TMP/rec.err" &
	local pid=$!
	wait_recording "$pid"
	"$TOOLS/stall" run "$cpu" "$STALL_MS" >"$TMP/cmd.out"
	kill -INT "$pid"
	wait "$pid" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	read_stall "$TMP/cmd.out"
	[ "$(grep -c "trigger $LAT fired: .*; read as the recording ends, it is in its trace$" "$TMP/rec.err")" = 1 ]
	[ ! -e "$TMP/t.1.pb" ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 1 ]
	trig=$(tp_triggers "$TMP/t.pb")
	echo "triggers: $trig"
	[ "$(wc -l <<<"$trig")" = 1 ]
	[ "${trig#*,}" = "$LAT" ]
	# its mark over the wait
	line=$(tp_marks "$TMP/t.pb" | grep "^$STALL_TID,")
	IFS=, read -r _ start end _ <<<"$line"
	[ "$start" -ge $((STALL_FROM - 5000000)) ] && [ "$end" -ge "$STALL_TO" ]
	[ $((end - start)) -ge $(((STALL_MS - 5) * 1000000)) ]
	# a snapshot whose delay outlasts the recording: the trace holds it,
	# the log says so
	"$BTR" --trigger "$LAT" --trigger-delay 20s \
		-o "$TMP/u.pb" -- "$TOOLS/stall" run "$cpu" "$STALL_MS" \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	[ ! -e "$TMP/u.1.pb" ]
	grep -q "the recording ends before the snapshot of trigger $LAT was due (--trigger-delay): the trace holds it" "$TMP/rec.err"
	[ "$(wc -l <<<"$(tp_triggers "$TMP/u.pb")")" = 1 ]
}

@test "blocked>300ms on an fsync-heavy thread fires for the long D sleep only, D> as well, the fsyncs fire nothing" {
	need_root
	file_scratch triggers
	ext4_scratch
	local marks line start end
	cd "$W/mnt"
	"$BTR" --trigger 'blocked>300ms,comm=dwaiter' --trigger 'D>300ms' \
		--trigger 'blocked>300ms,comm=fsyncer' --trigger-delay 200ms \
		-o "$TMP/t.pb" -- "$TOOLS/stall" dwait 600 \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || { cd /; ext4_scratch_remove; file_scratch_remove; fail "record failed: $(cat "$TMP/rec.err")"; }
	cd /
	ext4_scratch_remove
	file_scratch_remove
	cat "$TMP/rec.err"
	read_stall "$TMP/cmd.out"
	# the fsyncer slept in D many times, each short
	[ "$(tp_query "$TMP/t.pb" "select count(*) from thread_state join thread
		using (utid) where thread.name = 'fsyncer' and state = 'D'")" -ge 20 ]
	grep -q "trigger blocked>300ms,comm=dwaiter fired: tid $STALL_TID (dwaiter, .*) blocked (D) " "$TMP/rec.err"
	grep -q "trigger D>300ms fired: tid $STALL_TID (dwaiter, " "$TMP/rec.err"
	! grep -q "comm=fsyncer fired" "$TMP/rec.err" || fail "a short fsync fired"
	[ "$(grep -c "comm=dwaiter fired" "$TMP/rec.err")" = 1 ]
	marks=$(tp_marks "$TMP/t.1.pb")
	echo "marks: $marks"
	line=$(grep "^$STALL_TID,.*blocked>300ms,comm=dwaiter" <<<"$marks")
	IFS=, read -r _ start end _ <<<"$line"
	[ $((end - start)) -ge 590000000 ] && [ $((end - start)) -le 900000000 ]
	# trace_processor's D row of the vfork wait is the mark's interval
	[ "$(tp_query "$TMP/t.1.pb" "select count(*) from thread_state join thread
		using (utid) where tid = $STALL_TID and state = 'D' and ts = $start
		and ts + dur = $end")" = 1 ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" -ge 2 ]
}

@test "runqueue>2: five busy threads on one CPU fire it once for that CPU; pid= and cgroup= narrow it" {
	need_root
	local cpu=$(($(nproc) - 1)) i cg
	# the busy threads' cgroup is this shell's (cgroup v2)
	cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ -n "$cg" ] || fail "no cgroup v2 path in /proc/self/cgroup"
	"$BTR" --trigger 'runqueue>2,comm=btr-busyloop' --trigger-delay 200ms \
		--trigger "runqueue>2,comm=btr-busyloop,cgroup=$cg" \
		--trigger 'runqueue>2,comm=btr-busyloop,cgroup=/no-such.slice' \
		--trigger 'runqueue>2,comm=btr-busyloop,pid=1' -v \
		-o "$TMP/t.pb" -- bash -c "for i in 1 2 3 4 5; do taskset -c $cpu '$TOOLS/busyloop' 1 & done; wait" \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	grep -q "trigger runqueue>2,comm=btr-busyloop fired: tid [0-9]* (btr-busyloop, .*) [3-9] threads waiting on CPU $cpu," "$TMP/rec.err"
	grep -q "trigger runqueue>2,comm=btr-busyloop,cgroup=$cg fired: tid [0-9]* (btr-busyloop, " "$TMP/rec.err"
	! grep -q "no-such.slice fired\|pid=1 fired" "$TMP/rec.err" || fail "a filter let a thread through"
	# the two left out were held and filtered, by /proc
	grep -q "debug: [1-9][0-9]* trigger conditions held for threads their pid= or cgroup= left out" "$TMP/rec.err"
	[ -s "$TMP/t.1.pb" ]
	# an instant on the thread that made it three
	[ "$(tp_query "$TMP/t.1.pb" "select count(*) from slice s join thread_track tt
		on s.track_id = tt.id join thread using (utid) where thread.name =
		'btr-busyloop' and s.dur = 0 and s.name like 'runqueue>2%threads waiting on CPU $cpu'")" -ge 1 ]
}

@test "runqueue>2 with two reader threads: five busy threads on one CPU fire it for that CPU, watched in time order" {
	need_root
	[ "$(nproc)" -ge 2 ] || fail "two reader threads need 2 CPUs or more; this host has $(nproc)"
	local cpu=$(($(nproc) - 1))
	"$BTR" --readers 2 --trigger 'runqueue>2,comm=btr-busyloop' --trigger-delay 200ms -v \
		-o "$TMP/t.pb" -- bash -c "for i in 1 2 3 4 5; do taskset -c $cpu '$TOOLS/busyloop' 1 & done; wait" \
		>"$TMP/cmd.out" 2>"$TMP/rec.err" || fail "record failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
	grep -q "2 reader threads" "$TMP/rec.err"
	grep -q "trigger runqueue>2,comm=btr-busyloop fired: tid [0-9]* (btr-busyloop, .*) [3-9] threads waiting on CPU $cpu," "$TMP/rec.err"
	# every record watched in time order (the readers' notes merged by
	# the main thread): none late, none lost
	! grep -q "watched for trigger conditions out of time order" "$TMP/rec.err" || false
	[ "$(stat_value "$TMP/t.pb" trigger_records_inexact)" = 0 ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" -ge 1 ]
	[ "$(tp_query "$TMP/t.1.pb" "select count(*) from slice s join thread_track tt
		on s.track_id = tt.id join thread using (utid) where thread.name =
		'btr-busyloop' and s.dur = 0 and s.name like 'runqueue>2%threads waiting on CPU $cpu'")" -ge 1 ]
}

# Starts a recorder with a named trigger on a socket in $TMP; extra
# options in $@; its pid in REC. stop_recorder ends it (-d only keeps a
# failed test from hanging: a guest with three on two CPUs took over 20 s
# for the storm's 30 triggers).
start_named() {
	chmod 755 "$TMP"
	"$BTR" --trigger name:deploy --trigger-socket "$TMP/trig.sock" \
		--trigger-delay 0 -d 120s -o "$TMP/t.pb" "$@" 2>"$TMP/rec.err" 3>&- &
	REC=$!
	wait_recording "$REC"
	local _
	for _ in $(seq 100); do
		[ -S "$TMP/trig.sock" ] && return 0
		sleep 0.1
	done
	fail "no socket at $TMP/trig.sock"
}

# Waits (up to 10 s) for FILE to hold a line with TEXT.
wait_line() {
	local _
	for _ in $(seq 100); do
		grep -qF "$2" "$1" && return 0
		sleep 0.1
	done
	fail "no line with '$2' in $1: $(cat "$1")"
}

stop_recorder() {
	kill -INT "$REC"
	wait "$REC" || fail "recorder failed: $(cat "$TMP/rec.err")"
	cat "$TMP/rec.err"
}

# bats test_tags=reader-only
@test "named trigger: root's is taken; an unprivileged user's is refused unless allowed" {
	need_root
	start_named
	[ "$(stat -c %a "$TMP/trig.sock")" = 600 ]
	run_as_nobody -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"Permission denied"*"--trigger-allow"* ]]
	run "$BTR" trigger --trigger-socket "$TMP/trig.sock" nosuch
	[ "$status" = 1 ]
	[[ "$output" == *"no --trigger name:NAME of that name"* ]]
	# clients that misbehave get an answer and hold nothing up: one that
	# sends nothing, one that sends a line longer than any name
	run "$TOOLS/sockpoke" "$TMP/trig.sock"
	[ "$status" = 0 ] && [ "$output" = "refused: no trigger name received" ]
	run "$TOOLS/sockpoke" "$TMP/trig.sock" "$(printf 'x%.0s' $(seq 300))"
	[ "$status" = 0 ] && [[ "$output" == "refused: this recorder has no"* ]]
	"$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	sleep 0.5
	stop_recorder
	[ -s "$TMP/t.1.pb" ]
	[ ! -e "$TMP/trig.sock" ] || fail "socket left behind"
	[ "$(tp_triggers "$TMP/t.1.pb" | cut -d, -f2 | sort -u)" = deploy ]
	[ "$(tp_query "$TMP/t.1.pb" "select count(*) from slice s join args a using (arg_set_id)
		where s.name = 'deploy' and a.key = 'producer_name' and a.string_value like 'bpftrace-rec (pid %)'")" = 2 ]

	# allowed by name: nobody's is taken, with its uid; daemon's list
	# refuses nobody at the recorder, which counts it
	rm -f "$TMP"/t*.pb
	start_named --trigger-allow nobody
	[ "$(stat -c %a "$TMP/trig.sock")" = 666 ]
	run_as_nobody -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	echo "$output"
	[ "$status" = 0 ]
	sleep 0.5
	stop_recorder
	[ "$(tp_query "$TMP/t.1.pb" "select a.int_value from slice s join args a using (arg_set_id)
		where s.name = 'deploy' and a.key = 'trusted_producer_uid'" | sort -u)" = 65534 ]
	rm -f "$TMP"/t*.pb
	start_named --trigger-allow daemon
	run_as_nobody -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"refused: uid 65534 may not trigger this recorder"* ]]
	# a client slow to send (its send held 0.5 s by strace, as a client
	# under emulation once was) finds the connection closed (EPIPE): it
	# reads the answer all the same
	run_as_nobody -- strace -f -qq -o /dev/null -e trace=sendto \
		-e inject=sendto:delay_enter=500000 \
		"$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	echo "$output"
	[ "$status" = 1 ]
	[[ "$output" == *"refused: uid 65534 may not trigger this recorder"* ]]
	stop_recorder
	[ ! -e "$TMP/t.1.pb" ]
	[ "$(stat_value "$TMP/t.pb" triggers_refused)" = 2 ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 0 ]

	# allowed by a group: nobody with daemon among its supplementary
	# groups (as they were when it connected) is taken, without refused
	rm -f "$TMP"/t*.pb
	local daemon_gid
	daemon_gid=$(getent group daemon | cut -d: -f3)
	start_named --trigger-allow @daemon
	run_as_nobody -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	[ "$status" = 1 ]
	run_as_nobody --groups="$daemon_gid" -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	echo "$output"
	[ "$status" = 0 ]
	sleep 0.5
	stop_recorder
	[ "$(stat_value "$TMP/t.pb" triggers_refused)" = 1 ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 1 ]
}

# bats test_tags=reader-only
@test "named trigger: a trickling client and a flood of refused ones hold nothing up; a repeat while due is taken as merged" {
	need_root
	local t0 ms i lines
	# a client that sends its line a byte every 90 ms (60 bytes: 5.4 s)
	# is given 100 ms in all, not 100 ms a byte
	start_named --trigger-allow daemon --trigger-delay 2s
	t0=$(date +%s%N)
	run "$TOOLS/sockpoke" -d 90 "$TMP/trig.sock" "$(printf 'd%.0s' $(seq 60))"
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "$output after $ms ms"
	[ "$status" = 0 ] && [ "$output" = "refused: no trigger name received" ]
	[ "$ms" -lt 3000 ] || fail "the trickle held the recorder for $ms ms"
	# 20 senders not allowed: each refused and counted, their lines
	# logged at most every 10 s (each answered before its line is read:
	# a client slower than that, as under emulation, still gets it)
	for i in $(seq 20); do
		run_as_nobody -- "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
		echo "$i: $output"
		[ "$status" = 1 ]
		[[ "$output" == *"refused: uid 65534 may not trigger this recorder"* ]]
	done
	# the same trigger twice within its delay: both taken, one action
	"$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	"$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
	sleep 2.5
	stop_recorder
	cat "$TMP/rec.err"
	lines=$(grep -c 'refused: not allowed' "$TMP/rec.err")
	[ "$lines" -ge 1 ] && [ "$lines" -le 3 ]
	[ "$(stat_value "$TMP/t.pb" triggers_refused)" = 20 ]
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 1 ]
	[ "$(stat_value "$TMP/t.pb" triggers_merged)" = 1 ]
	[ "$(stat_value "$TMP/t.pb" triggers_suppressed)" = 0 ]
	[ "$(grep -c '^bpftrace-rec: snapshot written to ' "$TMP/rec.err")" = 1 ]
}

# bats test_tags=reader-only
@test "named trigger: a recorder that takes no connection leaves its client an error, and a new recorder its socket" {
	need_root
	local pid t0 s
	# bounded, and off bats' descriptor: a failed check leaves no hang
	timeout 60 "$TOOLS/sockpoke" -l "$TMP/full.sock" >"$TMP/listen.out" 3>&- &
	pid=$!
	for _ in $(seq 50); do
		[ -s "$TMP/listen.out" ] && break
		sleep 0.1
	done
	[ "$(cat "$TMP/listen.out")" = listening ]
	t0=$SECONDS
	run timeout 30 "$BTR" trigger --trigger-socket "$TMP/full.sock" deploy
	s=$((SECONDS - t0))
	echo "$status after $s s: $output"
	[ "$status" = 1 ]
	[[ "$output" == *"took no connection in 10 s"* ]]
	[ "$s" -lt 20 ]
	# a recorder given that socket's path finds it live: an error, the
	# socket left in place
	run timeout 30 "$BTR" --trigger name:deploy --trigger-socket "$TMP/full.sock" \
		-d 1s -o "$TMP/x.pb"
	echo "$status: $output"
	[ "$status" != 0 ] && [ "$status" != 124 ]
	[[ "$output" == *"another recorder listens on it"* ]]
	[ -S "$TMP/full.sock" ]
	kill "$pid"
	wait "$pid" || true
}

# bats test_tags=reader-only
@test "--trigger-disk removes the triggers' old snapshots, never one SIGUSR1 asked for" {
	need_root
	local n
	start_named --trigger-disk 1K
	# two snapshots asked for, then two triggers: the first trigger's is
	# removed for the second's, the asked-for ones are left
	for n in 1 2; do
		kill -USR1 "$REC"
		wait_line "$TMP/rec.err" "snapshot written to $TMP/t.$n.pb"
	done
	for n in 3 4; do
		"$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy
		wait_line "$TMP/rec.err" "snapshot written to $TMP/t.$n.pb"
	done
	stop_recorder
	ls -la "$TMP"
	[ -s "$TMP/t.1.pb" ] && [ -s "$TMP/t.2.pb" ] && [ -s "$TMP/t.4.pb" ]
	[ ! -e "$TMP/t.3.pb" ]
	[ "$(stat_value "$TMP/t.pb" trigger_snapshots_removed)" = 1 ]
}

# disk_budget_held N BYTES, after the triggers' snapshots t.1.pb to t.N.pb
# under --trigger-disk BYTES: the files kept fit the budget but the
# newest, which is kept; the removed ones are counted.
disk_budget_held() {
	local n=$1 budget=$2 kept size
	kept=$(ls "$TMP"/t.[0-9]*.pb | wc -l)
	size=$(cat "$TMP"/t.[0-9]*.pb | wc -c)
	echo "kept $kept files, $size bytes"
	[ -e "$TMP/t.$n.pb" ] || fail "the newest snapshot, t.$n.pb, was removed"
	[ "$size" -le "$budget" ] || [ "$kept" = 1 ] ||
		fail "$kept snapshots kept, $size bytes: over the budget of $budget"
	[ "$(stat_value "$TMP/t.pb" trigger_snapshots_removed)" = $((n - kept)) ] ||
		fail "trigger_snapshots_removed is not $((n - kept))"
}

# bats test_tags=reader-only
@test "a trigger storm: the rate limit and the disk budget hold, nothing else is lost" {
	need_root
	local i ok=0 refused=0 written
	start_named --trigger-max 5/1h --trigger-disk 1M -b 4M
	for i in $(seq 30); do
		if "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy 2>>"$TMP/cli.err"; then
			ok=$((ok + 1))
		else
			refused=$((refused + 1))
		fi
	done
	stop_recorder
	echo "taken $ok, refused $refused"
	[ "$ok" = 5 ] && [ "$refused" = 25 ]
	[ "$(grep -c 'refused: suppressed by --trigger-max' "$TMP/cli.err")" = 25 ]
	written=$(grep -c '^bpftrace-rec: snapshot written to ' "$TMP/rec.err")
	[ "$written" = 5 ]
	disk_budget_held 5 $((1 << 20))
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 5 ]
	[ "$(stat_value "$TMP/t.pb" triggers_suppressed)" = 25 ]
	# conservation: every record read, none lost, in the final trace
	"$BTR" stats --fail-on-loss "$TMP/t.pb" >/dev/null
	tp_stats_clean "$TMP/t.pb" mismatched_sched_switch_tids
}

# bats test_tags=reader-only
@test "--trigger-max none: a storm past the default 10 all acts, none suppressed; the disk budget still holds" {
	need_root
	local n
	# a budget of a few snapshots (tens of K each: the buffer so far)
	start_named --trigger-max none --trigger-disk 256K -b 4M
	# one at a time, each after the last one's snapshot: a trigger sent
	# while an action is due would join it, and act as one with it
	for n in $(seq 15); do
		timeout 10 "$BTR" trigger --trigger-socket "$TMP/trig.sock" deploy \
			2>>"$TMP/cli.err" 3>&- || fail "trigger $n refused: $(cat "$TMP/cli.err")"
		wait_line "$TMP/rec.err" "snapshot written to $TMP/t.$n.pb"
	done
	stop_recorder
	[ "$(grep -c '^bpftrace-rec: snapshot written to ' "$TMP/rec.err")" = 15 ]
	! grep -q 'suppressed by --trigger-max [0-9]' "$TMP/rec.err"
	[ "$(stat_value "$TMP/t.pb" triggers_fired)" = 15 ]
	[ "$(stat_value "$TMP/t.pb" triggers_suppressed)" = 0 ]
	disk_budget_held 15 $((256 << 10))
}

# bats test_tags=reader-only
@test "a trigger's snapshot on a full disk is removed, recording goes on, the next trigger is taken" {
	need_root
	local out=$TMP/small
	mkdir "$out"
	mount -t tmpfs -o size=64k tmpfs "$out"
	chmod 755 "$TMP"
	# a snapshot of a busy minute cannot fit; the final write fails too
	"$BTR" --trigger name:deploy --trigger-socket "$TMP/trig.sock" \
		--trigger-delay 0 -o "$out/t.pb" -- sh -c "
		'$TOOLS/pingpong' 20000 >/dev/null
		'$BTR' trigger --trigger-socket '$TMP/trig.sock' deploy
		sleep 0.5
		'$BTR' trigger --trigger-socket '$TMP/trig.sock' deploy
		sleep 0.5" 2>"$TMP/rec.err" || rc=$?
	ls -la "$out" >"$TMP/ls.txt"
	umount "$out"
	cat "$TMP/rec.err" "$TMP/ls.txt"
	# both triggers taken, both snapshots failed and removed, no torn file
	[ "$(grep -c 'trigger name:deploy fired' "$TMP/rec.err")" = 2 ]
	[ "$(grep -c 'No space left on device (the incomplete file is removed; recording goes on)' "$TMP/rec.err")" = 2 ]
	! grep -q 't\.[0-9]*\.pb' "$TMP/ls.txt" || fail "a torn snapshot was left"
	# the final write failed too and says so
	[ "${rc:-0}" = 1 ]
	grep -q "$out/t.pb: No space left on device" "$TMP/rec.err"
}

# bats test_tags=reader-only
@test "bad trigger expressions exit 64 naming the bad part" {
	local spec want
	while IFS='|' read -r spec want; do
		run "$BTR" --trigger "$spec" -d 1s -o "$TMP/x.pb"
		echo "$spec: $status: $output"
		[ "$status" = 64 ]
		[[ "$output" == *"$want"* ]]
	done <<'EOF'
latncy>20ms|unknown condition 'latncy'
latency>20xs|bad time '20xs'
latency20ms|'latency20ms' is no condition
latency>20ms,com=x|unknown term 'com='
latency>20ms,comm=averyveryverylongname|comm 'averyveryverylongname'
runqueue>0|bad thread count '0'
blocked>1s,pid=abc|bad pid 'abc'
D>1s,cgroup=system.slice|bad cgroup 'system.slice'
name:|bad trigger name ''
name:a/b|bad trigger name 'a/b'
latency>20ms,pid=1,pid=2|'pid=' given twice
EOF
	run "$BTR" --trigger name:deploy --trigger name:deploy -d 1s -o "$TMP/x.pb"
	[ "$status" = 64 ]
	[[ "$output" == *"--trigger 'name:deploy' given twice"* ]]
	run "$BTR" --trigger-delay 1s -d 1s -o "$TMP/x.pb"
	[ "$status" = 64 ]
	[[ "$output" == *"need --trigger"* ]]
	while IFS='|' read -r spec want; do
		run "$BTR" --trigger 'latency>1ms' --trigger-max "$spec" -d 1s -o "$TMP/x.pb"
		echo "--trigger-max $spec: $status: $output"
		[ "$status" = 64 ]
		[[ "$output" == *"invalid --trigger-max '$spec': $want"* ]]
	done <<'EOF'
5|neither N/TIME (e.g. 10/1h) nor none
0/1h|N '0' is not from 1 to 1000000 (none: no limit)
x/1h|N 'x' is not from 1 to 1000000
5/0|TIME '0' is not a time over 0
5/1x|TIME '1x' is not a time over 0
NONE|neither N/TIME
EOF
	[ ! -e "$TMP/x.pb" ]
	run "$BTR" trigger
	[ "$status" = 64 ]
	run "$BTR" trigger --trigger-socket "$TMP/none.sock" deploy
	[ "$status" = 1 ]
	[[ "$output" == *"no recorder with --trigger name:NAME listens there"* ]]
}
