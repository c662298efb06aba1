#!/usr/bin/env bats
# Off-CPU call stacks (--callstacks): each sleeping (S or D) switch-out is
# followed by the kernel stack of the task going to sleep, written as a
# PerfSample (trace_processor's perf_sample and stack_profile_callsite
# tables, the UI's flame graph). The workload (tests/tools/waits.c) sleeps
# in nanosleep, on an empty pipe and in FUTEX_WAIT: their stacks must go
# through the kernel functions of those waits, under __schedule and
# schedule, and pair one to one with the sleeping switch-outs.

load helpers

ROUNDS=5

setup_file() {
	need_root
	file_scratch stacks
	"$BTR" --callstacks -o "$W/btf.pb" -- "$TOOLS/waits" "$ROUNDS" \
		>"$W/btf.out" 2>"$W/btf.err" || fail "record failed: $(cat "$W/btf.err")"
	"$BTR" --callstacks --raw-tp -o "$W/raw.pb" -- "$TOOLS/waits" "$ROUNDS" \
		>"$W/raw.out" 2>"$W/raw.err" || fail "record failed: $(cat "$W/raw.err")"
	# with blocked reasons of S sleeps too: one stack walk serves both
	"$BTR" --callstacks --blocked-reason all -o "$W/both.pb" -- "$TOOLS/waits" "$ROUNDS" \
		>"$W/both.out" 2>"$W/both.err" || fail "record failed: $(cat "$W/both.err")"
	local t
	for t in btf raw both; do
		"$BTR" dump "$W/$t.pb" >"$W/$t.txt" || fail "dump $t failed"
	done
}

teardown_file() {
	file_scratch_remove
}

# tid ROLE [RUN]: the workload's thread of that role.
tid() {
	sed -n "s/^waits .*$1=\([0-9]*\).*/\1/p" "$W/${2:-btf}.out"
}

# stacks TID [RUN]: the stack of each of that thread's samples, leaf first.
stacks() {
	awk -v t="tid=$1" '$3 == "perf_sample" && $5 == t {
		s = "-"
		for (i = 6; i <= NF; i++) if ($i ~ /^stack=/) s = substr($i, 7)
		print s }' "$W/${2:-btf}.txt"
}

# check_role ROLE FUNCTION [RUN]: at least one stack a round goes through
# FUNCTION, each of the thread's stacks starts in the scheduler.
check_role() {
	local t n
	t=$(tid "$1" "${3:-btf}")
	[ -n "$t" ]
	echo "$1: tid $t"
	stacks "$t" "${3:-btf}" | sort | uniq -c
	n=$(stacks "$t" "${3:-btf}" | grep -Ec "^__schedule,schedule,(.*,)?$2,")
	[ "$n" -ge "$ROUNDS" ]
	[ "$(stacks "$t" "${3:-btf}" | grep -vc "^__schedule,")" -eq 0 ]
}

@test "callstacks: nanosleep sleeps in do_nanosleep" {
	check_role sleeper do_nanosleep
	stacks "$(tid sleeper)" | grep -q ",hrtimer_nanosleep,"
}

@test "callstacks: a pipe reader sleeps in the pipe read function" {
	check_role piper '[a-z_]*pipe_read'
}

@test "callstacks: a futex waiter sleeps in the futex wait path" {
	check_role futexer 'futex_[a-z_]*wait[a-z_]*'
}

@test "callstacks: raw tracepoints give the same stacks" {
	check_role sleeper do_nanosleep raw
	check_role piper '[a-z_]*pipe_read' raw
	check_role futexer 'futex_[a-z_]*wait[a-z_]*' raw
}

# pairs RUN: "SAMPLES SLEEPS BAD": samples, sleeping (S or D) switch-outs,
# and samples that do not come right after their task's sleeping
# switch-out on their CPU (a CPU's first switch in the file has no known
# prev_pid, dump prints ?: only its state is checked). The samples are on
# a sequence of their own: dump's lines are put in time order first.
pairs() {
	sort -s -n -k1,1 "$W/$1.txt" | awk '
		$3 == "sched_switch" {
			last[$2] = $0
			if ($0 ~ / prev_state=[12]\(/) sleeps++
			next
		}
		$3 == "perf_sample" {
			n++
			t = substr($5, 5)
			if (last[$2] !~ (" prev_pid=(" t "|\\?) ") || last[$2] !~ / prev_state=[12]\(/) {
				bad++; print "not after a sleeping switch-out: " $0 " / " last[$2] > "/dev/stderr"
			}
			last[$2] = ""
		}
		END { print n + 0, sleeps + 0, bad + 0 }'
}

@test "callstacks: one sample per sleeping switch-out, right after it" {
	local n s bad run
	for run in btf raw; do
		read -r n s bad < <(pairs "$run")
		echo "$run: $n samples, $s sleeping switch-outs, $bad misplaced"
		[ "$n" -ge $((3 * ROUNDS)) ]
		[ "$n" -eq "$s" ]
		[ "$bad" -eq 0 ]
	done
}

@test "callstacks: loss counters in the summary, stats and dump agree" {
	local n trunc fail line
	n=$(grep -c " perf_sample " "$W/btf.txt")
	trunc=$(grep " perf_sample " "$W/btf.txt" | grep -c "unwind_error=MAX_FRAMES_EXCEEDED" || true)
	fail=$(grep " perf_sample " "$W/btf.txt" | grep -vc " stack=" || true)
	line=$(grep "call stacks:" "$W/btf.err")
	echo "$line"
	[ "$line" = "bpftrace-rec: call stacks: $n samples, $trunc truncated at 64 frames, $fail could not be taken" ]
	[ "$(stat_value "$W/btf.pb" perf_samples)" -eq "$n" ]
	[ "$(stat_value "$W/btf.pb" perf_samples_stack_truncated)" -eq "$trunc" ]
	[ "$(stat_value "$W/btf.pb" perf_samples_without_stack)" -eq "$fail" ]
	# samples with a stack = sleeping switch-outs minus the counted failures
	read -r _ s _ < <(pairs btf)
	[ "$(grep " perf_sample " "$W/btf.txt" | grep -c " stack=__schedule,")" -eq $((s - fail)) ]
}

@test "callstacks: dump --json, and protoc decodes every packet with no unknown field" {
	local n t
	n=$(grep -c " perf_sample " "$W/btf.txt")
	"$BTR" dump --json "$W/btf.pb" >"$W/btf.json"
	[ "$(jq -c 'select(.kind == "perf_sample")' "$W/btf.json" | wc -l)" -eq "$n" ]
	t=$(tid sleeper)
	[ "$(jq -r "select(.kind == \"perf_sample\" and .tid == $t) | .stack | join(\",\")" "$W/btf.json")" = \
	  "$(stacks "$t")" ]
	protoc_decode "$W/btf.pb"
	grep -q "perf_sample {" "$TMP/decoded.txt"
	grep -q 'name: "sched/sched_switch"' "$TMP/decoded.txt"
	grep -q 'str: "/kernel"' "$TMP/decoded.txt"
	grep -q "cpu_mode: MODE_KERNEL" "$TMP/decoded.txt"
	! grep -qE "^ *[0-9]+: " "$TMP/decoded.txt" || false
}

@test "callstacks: sync keeps the stacks (interned per sequence, converted times)" {
	"$BTR" sync -q -o "$TMP/merged.pb" "$W/btf.pb" "$W/raw.pb"
	"$BTR" dump "$TMP/merged.pb" >"$TMP/merged.txt"
	local want got
	want=$(cat "$W/btf.txt" "$W/raw.txt" | awk '$3 == "perf_sample" { $1 = ""; print }' | sed 's/ callstack_iid=[0-9]*//' | sort)
	got=$(awk '$3 == "perf_sample" { $1 = ""; print }' "$TMP/merged.txt" | sed 's/ machine_id=[0-9]*//; s/ callstack_iid=[0-9]*//' | sort)
	[ -n "$want" ]
	[ "$got" = "$want" ]
	[ "$(grep " perf_sample " "$TMP/merged.txt" | grep -c "stack=?")" -eq 0 ]
}

@test "callstacks: off by default" {
	record_cmd -q -- "$TOOLS/waits" 2
	dump_trace "$TMP/trace.pb"
	! grep -q " perf_sample " "$TMP/dump.txt" || false
	! "$BTR" stats --json "$TMP/trace.pb" | jq -e '.[] | select(.name == "perf_samples")' || false
}

@test "callstacks: with --blocked-reason all, each blocked function is in its sample's stack" {
	# A blocked reason and the sample of the same switch-out are next to
	# each other among their CPU's blocked reasons and samples (in either
	# order: dump places the reason by its bundle's time).
	local r
	r=$(sort -s -n -k1,1 "$W/both.txt" | awk '
		$3 == "sched_blocked_reason" {
			f = ""; for (i = 5; i <= NF; i++) if ($i ~ /^function=/) f = substr($i, 10)
			k = $2 SUBSEP (++m[$2]); kind[k] = "B"; id[k] = substr($4, 5); val[k] = f; line[k] = $0
		}
		$3 == "perf_sample" {
			st = ""; for (i = 6; i <= NF; i++) if ($i ~ /^stack=/) st = "," substr($i, 7) ","
			k = $2 SUBSEP (++m[$2]); kind[k] = "S"; id[k] = substr($5, 5); val[k] = st
		}
		function pairs(b, s) {
			return kind[s] == "S" && !used[s] && id[s] == id[b] && val[b] != "" &&
			       index(val[s], "," val[b] ",") > 0
		}
		END {
			for (c in m) for (j = 1; j <= m[c]; j++) {
				b = c SUBSEP j
				if (kind[b] != "B") continue
				n++
				if (pairs(b, c SUBSEP (j - 1))) used[c SUBSEP (j - 1)] = 1
				else if (pairs(b, c SUBSEP (j + 1))) used[c SUBSEP (j + 1)] = 1
				else { bad++; print "not in its stack: " line[b] > "/dev/stderr" }
			}
			print n + 0, bad + 0
		}')
	echo "blocked reasons, misplaced: $r"
	read -r n bad <<<"$r"
	[ "$n" -ge $((3 * ROUNDS)) ]
	[ "$bad" -eq 0 ]
}
