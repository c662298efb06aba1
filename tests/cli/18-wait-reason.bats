#!/usr/bin/env bats
# Why threads wait: each switch-out into a sleep carries the kernel function
# the task blocked in and whether it waits for I/O (sched_blocked_reason,
# trace_processor's thread_state.blocked_function and io_wait). The
# workload (tests/tools/waits.c) sleeps in nanosleep, on an empty pipe, in
# FUTEX_WAIT, and fsyncs a file on an ext4 filesystem on a loop device made
# here; while its threads sleep it reads the kernel's own answer,
# /proc/PID/wchan, which the recorded functions must match.

load helpers

ROUNDS=5

setup_file() {
	need_root
	file_scratch wait
	ext4_scratch
	# S and D sleeps, tp_btf
	"$BTR" -q --blocked-reason all -o "$W/all.pb" -- \
		"$TOOLS/waits" "$ROUNDS" "$W/mnt" >"$W/all.out" 2>"$W/all.err" ||
		fail "record failed: $(cat "$W/all.err")"
	# the default: D sleeps only
	"$BTR" -q -o "$W/d.pb" -- "$TOOLS/waits" "$ROUNDS" "$W/mnt" \
		>"$W/d.out" 2>"$W/d.err" || fail "record failed: $(cat "$W/d.err")"
	# raw tracepoints
	"$BTR" -q --raw-tp --blocked-reason all -o "$W/raw.pb" -- \
		"$TOOLS/waits" "$ROUNDS" >"$W/raw.out" 2>"$W/raw.err" ||
		fail "record failed: $(cat "$W/raw.err")"
	dump_runs all d raw
}

teardown_file() {
	ext4_scratch_remove
	file_scratch_remove
}

# tid ROLE [RUN]: the workload's thread of that role in run RUN (all).
tid() {
	sed -n "s/^waits .* $1=\([0-9]*\).*/\1/p; s/^waits $1=\([0-9]*\).*/\1/p" "$W/${2:-all}.out"
}

# wchan ROLE [RUN]: what the kernel said that thread waited in.
wchan() {
	sed -n "s/^wchan .*$1=\([^ ]*\).*/\1/p" "$W/${2:-all}.out"
}

# blocked TID [RUN]: "FUNCTION IO_WAIT" of each blocked reason of TID.
blocked() {
	awk -v pid="pid=$1" '$3 == "sched_blocked_reason" && $4 == pid {
		f = "?"; io = "?"
		for (i = 5; i <= NF; i++) {
			if ($i ~ /^function=/) f = substr($i, 10)
			if ($i ~ /^io_wait=/) io = substr($i, 9)
		}
		print f, io }' "$W/${2:-all}.txt"
}

# check_role ROLE [RUN]: the thread's blocked reasons name the kernel's
# wchan at least once per round, without I/O wait.
check_role() {
	local t w n
	t=$(tid "$1" "${2:-all}")
	w=$(wchan "$1" "${2:-all}")
	echo "$1: tid $t, kernel wchan '$w'"
	blocked "$t" "${2:-all}" | sort | uniq -c
	[ -n "$t" ] && [ -n "$w" ]
	n=$(blocked "$t" "${2:-all}" | awk -v w="$w" '$1 == w' | wc -l)
	[ "$n" -ge "$ROUNDS" ]
	[ "$(blocked "$t" "${2:-all}" | awk -v w="$w" '$1 == w && $2 != 0' | wc -l)" -eq 0 ]
}

@test "blocked reason: nanosleep names the kernel's wchan (hrtimer_nanosleep here)" {
	check_role sleeper
	[[ "$(wchan sleeper)" == *nanosleep* ]]
}

@test "blocked reason: a pipe reader names the pipe read function" {
	check_role piper
	[[ "$(wchan piper)" == *pipe_read* ]]
}

@test "blocked reason: a futex waiter names the futex wait function" {
	check_role futexer
	[[ "$(wchan futexer)" == *futex* ]]
}

@test "blocked reason: fsync on ext4 blocks in D with io_wait=1" {
	local t
	t=$(tid syncer)
	[ -n "$t" ] && [ "$t" != 0 ]
	blocked "$t" | sort | uniq -c
	[ "$(blocked "$t" | awk '$1 != "?" && $2 == 1' | wc -l)" -ge 1 ]
	# ... and in the default recording too
	t=$(tid syncer d)
	blocked "$t" d | sort | uniq -c
	[ "$(blocked "$t" d | awk '$1 != "?" && $2 == 1' | wc -l)" -ge 1 ]
}

# tp_blocked TID [RUN]: trace_processor's "STATE,FUNCTION,IO_WAIT,COUNT"
# of TID's sleeping thread_state rows, by state, function and io_wait.
tp_blocked() {
	tp_query "$W/${2:-all}.pb" "select state, ifnull(blocked_function, '-'),
		ifnull(io_wait, '-'), count(*) from thread_state join thread
		using (utid) where tid = $1 and state in ('S', 'D')
		group by 1, 2, 3 order by 1, 2, 3"
}

# bats test_tags=file-clients
@test "blocked reason: trace_processor's thread_state has each function and io_wait; report equals it" {
	local r t w n run
	for run in all d raw; do
		tp_stats_clean "$W/$run.pb" mismatched_sched_switch_tids
	done
	for r in sleeper piper futexer; do
		t=$(tid "$r")
		w=$(wchan "$r")
		tp_blocked "$t" | tee "$TMP/$r.tp"
		# the S sleeps, each round, in the function the kernel names
		n=$(awk -F, -v w="$w" '$1 == "S" && $2 == w { n += $4 } END { print n + 0 }' "$TMP/$r.tp")
		[ "$n" -ge "$ROUNDS" ]
		# no I/O wait in any of its sleeps
		[ "$(awk -F, '$3 == 1' "$TMP/$r.tp" | wc -l)" -eq 0 ]
		# in raw tracepoints' recording too
		tp_blocked "$(tid "$r" raw)" raw | awk -F, -v w="$w" -v r="$ROUNDS" \
			'$1 == "S" && $2 == w { n += $4 } END { exit !(n >= r) }'
	done
	# the syncer waits in D for its disk, io_wait 1, in both recordings
	for run in all d; do
		tp_blocked "$(tid syncer "$run")" "$run" | tee "$TMP/syncer.tp"
		awk -F, '$1 == "D" && $2 != "-" && $3 == 1 { n++ } END { exit !n }' "$TMP/syncer.tp"
	done
	# the default recording leaves S sleeps without a function
	[ "$(tp_blocked "$(tid sleeper d)" d | awk -F, '$1 == "S" && $2 != "-"' | wc -l)" -eq 0 ]
	for run in all d raw; do
		report_equals_tp "$W/$run.pb"
	done
}

@test "blocked reason: --blocked-reason all takes each sleep's function from the thread's kernel-stack cache" {
	# --kstack-check (a test hook): each function from the cache is
	# checked against a walk's
	"$BTR" -v --kstack-check --blocked-reason all -o "$W/cache.pb" -- \
		"$TOOLS/waits" $((2 * ROUNDS)) >"$W/cache.out" 2>"$W/cache.err" ||
		fail "record failed: $(tail -3 "$W/cache.err")"
	"$BTR" dump "$W/cache.pb" >"$W/cache.txt"
	local hits misses wrong
	read -r hits misses wrong < <(sed -n 's/.*blocked functions: kernel stacks \([0-9]*\) from the thread.s cache, \([0-9]*\) walked (cache missed), \([0-9]*\) differ.*/\1 \2 \3/p' "$W/cache.err")
	echo "kernel stacks: $hits from the cache, $misses walked, $wrong wrong"
	[ -n "$hits" ] && [ -n "$misses" ] && [ "$wrong" = 0 ]
	if fallback_forced kstack-cache; then
		[ "$hits" -eq 0 ] && [ "$misses" -eq 0 ]
	else
		# the workload's sleeps (three threads and main, each where it slept
		# before): all but the first ones of each thread hit the cache
		grep -q "kernel: .*cache.*: yes" "$W/cache.err"
		[ "$hits" -ge $((6 * ROUNDS)) ]
	fi
	# and the functions are the kernel's wchan, as the walk gives them
	check_role sleeper cache
	check_role piper cache
	check_role futexer cache
}

# Every blocked reason comes right after its task's switch-out, on the
# same CPU, in a sleeping state: S or D (all), D only (d). A CPU's first
# switch in the file has no known prev_pid (dump prints ?): only its state
# is checked.
follows_switch() {
	awk -v states="$2" '
		$3 == "sched_switch" { last[$2] = $0; next }
		$3 == "sched_blocked_reason" {
			n++
			split(last[$2], f, " ")
			ok = 0
			for (i = 4; i in f; i++)
				if (f[i] == "prev_pid=" substr($4, 5) || f[i] == "prev_pid=?") ok = 1
			st = last[$2]; sub(/.* prev_state=[0-9]+\(/, "", st); sub(/\).*/, "", st)
			if (!ok || index(states, st) == 0) { bad++; print "not after a switch-out in " states ": " $0 " / " last[$2] }
		}
		{ if ($3 != "sched_switch") last[$2] = $0 }
		END { print n + 0, bad + 0 }' "$W/$1.txt" | tail -1
}

@test "blocked reason: each follows its task's sleeping switch-out; the default takes D only" {
	read -r n bad < <(follows_switch all SD)
	echo "all: $n blocked reasons, $bad misplaced"
	[ "$n" -ge $((3 * ROUNDS)) ]
	[ "$bad" -eq 0 ]
	read -r n bad < <(follows_switch d D)
	echo "d: $n blocked reasons, $bad misplaced"
	[ "$n" -ge 1 ]
	[ "$bad" -eq 0 ]
	# none of the workload's S sleeps in the default recording (its
	# threads may wait in D elsewhere: the mmap lock, under ASan often)
	local r
	for r in sleeper piper futexer; do
		blocked "$(tid "$r" d)" d
		[ -n "$(wchan "$r" d)" ]
		[ "$(blocked "$(tid "$r" d)" d | awk -v w="$(wchan "$r" d)" '$1 == w' | wc -l)" -eq 0 ]
	done
}

@test "blocked reason: raw tracepoints name the same functions" {
	check_role sleeper raw
	check_role piper raw
	check_role futexer raw
}

# bats test_tags=file-clients
@test "blocked reason: dump --json, stats and protoc agree with the text dump" {
	local n t
	n=$(grep -c " sched_blocked_reason " "$W/all.txt")
	t=$(tid sleeper)
	"$BTR" dump --json "$W/all.pb" >"$W/all.json"
	[ "$(jq -c 'select(.kind == "sched_blocked_reason")' "$W/all.json" | wc -l)" -eq "$n" ]
	[ "$(jq -r "select(.kind == \"sched_blocked_reason\" and .pid == $t) | \"\(.function) \(.io_wait)\"" "$W/all.json" | sort)" = \
	  "$(blocked "$t" | sort)" ]
	[ "$(stat_value "$W/all.pb" sched_blocked_reason_events)" -eq "$n" ]
	[ "$(stat_value "$W/all.pb" sched_blocked_reason_without_function)" -eq \
	  "$(grep " sched_blocked_reason " "$W/all.txt" | grep -vc " function=[a-z_A-Z]")" ]
	# every packet parses with our schema, the new fields known by name
	protoc_decode "$W/all.pb"
	grep -q "sched_blocked_reason {" "$TMP/decoded.txt"
	grep -q "kernel_symbols {" "$TMP/decoded.txt"
	! grep -qE "^ *(18|26): " "$TMP/decoded.txt" || false
}

# bats test_tags=file-clients
@test "blocked reason: sync keeps the functions (interned names, converted times)" {
	"$BTR" sync -q -o "$TMP/merged.pb" "$W/all.pb" "$W/raw.pb"
	"$BTR" dump "$TMP/merged.pb" >"$TMP/merged.txt"
	local want got
	want=$(kind_lines sched_blocked_reason 2 "$W/all.txt" "$W/raw.txt")
	got=$(kind_lines sched_blocked_reason 2 "$TMP/merged.txt")
	[ -n "$want" ]
	[ "$got" = "$want" ]
	# and they still follow their switch-outs on the timeline of sync
	# (one input: dump follows each CPU's running task across the whole
	# file, and two recordings share CPU numbers)
	"$BTR" sync -q -o "$TMP/one.pb" "$W/all.pb"
	"$BTR" dump "$TMP/one.pb" >"$W/one.txt"
	read -r n bad < <(follows_switch one SD)
	[ "$n" -eq "$(grep -c " sched_blocked_reason " "$W/all.txt")" ]
	[ "$bad" -eq 0 ]
}

@test "blocked reason: --blocked-reason none records none; a bad value is a usage error" {
	record_cmd -q --blocked-reason none -- "$TOOLS/waits" 2
	dump_trace "$TMP/trace.pb"
	! grep -q " sched_blocked_reason " "$TMP/dump.txt" || false
	run "$BTR" --blocked-reason sometimes -o "$TMP/x.pb" -- true
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid blocked reason (d, all or none) 'sometimes'"* ]]
}
