#!/usr/bin/env bats
# A kernel that hides its addresses (kernel.kptr_restrict=2: /proc/kallsyms
# shows zeros even to root) leaves blocked functions and kernel frames
# without names. The recorder says so once, records everything else (the
# blocked reasons keep io_wait, the call stacks their frames) and counts
# the nameless blocked reasons in the trace's stats; nothing is dropped.
# The setting is restored whatever happens.

load helpers

ROUNDS=10

setup_file() {
	need_root
	file_scratch kptr
	cat /proc/sys/kernel/kptr_restrict >"$W/kptr.old" ||
		fail "cannot read kernel.kptr_restrict"
	echo 2 >/proc/sys/kernel/kptr_restrict ||
		fail "cannot set kernel.kptr_restrict"
	local rc=0
	"$BTR" --blocked-reason all --callstacks=kernel -o "$W/trace.pb" -- \
		"$TOOLS/waits" "$ROUNDS" >"$W/cmd.out" 2>"$W/rec.err" || rc=$?
	cat "$W/kptr.old" >/proc/sys/kernel/kptr_restrict
	[ "$rc" -eq 0 ] || fail "record failed ($rc): $(cat "$W/rec.err")"
	"$BTR" dump "$W/trace.pb" >"$W/dump.txt" || fail "dump failed"
}

teardown_file() {
	[ -s "$W/kptr.old" ] && cat "$W/kptr.old" >/proc/sys/kernel/kptr_restrict
	file_scratch_remove
}

@test "kptr_restrict: the setting was restored" {
	[ "$(cat /proc/sys/kernel/kptr_restrict)" = "$(cat "$W/kptr.old")" ]
}

@test "kptr_restrict: the recorder says once that kernel functions have no names" {
	[ "$(grep -c "kernel functions cannot be symbolized: /proc/kallsyms shows no kernel addresses" "$W/rec.err")" -eq 1 ]
}

@test "kptr_restrict: blocked reasons are all there, without a function, and counted" {
	local n t
	n=$(grep -c " sched_blocked_reason " "$W/dump.txt")
	echo "$n blocked reasons"
	# each of the workload's three sleepers blocks ROUNDS times at least
	for t in sleeper piper futexer; do
		t=$(sed -n "s/^waits .*\b$t=\([0-9]*\).*/\1/p" "$W/cmd.out")
		[ -n "$t" ]
		[ "$(grep -c " sched_blocked_reason pid=$t function=? io_wait=0$" "$W/dump.txt")" -ge "$ROUNDS" ]
	done
	! grep " sched_blocked_reason " "$W/dump.txt" | grep -v " function=? " || false
	[ "$(stat_value "$W/trace.pb" sched_blocked_reason_events)" -eq "$n" ]
	[ "$(stat_value "$W/trace.pb" sched_blocked_reason_without_function)" -eq "$n" ]
}

@test "kptr_restrict: call stacks keep their frames, unnamed" {
	local n
	n=$(grep -c " perf_sample " "$W/dump.txt")
	echo "$n samples"
	[ "$n" -ge $((3 * ROUNDS)) ]
	[ "$(stat_value "$W/trace.pb" perf_samples)" -eq "$n" ]
	[ "$(stat_value "$W/trace.pb" perf_samples_without_stack)" -eq 0 ]
	# frames, as many as the stack had, and no name among them: dump
	# prints a frame without a name as its rel_pc
	! grep " perf_sample " "$W/dump.txt" | grep -Ev " stack=0x[0-9a-f]+(,0x[0-9a-f]+)+$" || false
}
