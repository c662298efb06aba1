#!/usr/bin/env bats
# User stacks where frame pointers are missing (--stack-slice): the C
# library of a Debian host has none, so the frame a user needs most (the
# function of theirs that made the call that blocked) is lost to a
# frame-pointer walk. The recorder copies a slice of the user stack at
# each sleep and unwinds it with the binaries' CFI (.eh_frame), joining
# the frame-pointer chain past the slice. Workloads built as
# distributions build (tests/workloads): libcwaits (frame pointers in the
# program, none in libc) waits in nanosleep(), read(), pthread_cond_wait()
# and fsync() from functions wait_in_X of its own; deepwait (no frame
# pointer anywhere) sleeps 21 frames of 256 bytes deep; shortlived forks 200
# children that each sleep once and exit at once; jitwait sleeps in code it
# generated into an anonymous executable mapping (a JIT's: no CFI).

load helpers

ROUNDS=5
# deepwait's recursive function as the compiler names it (gcc: a clone,
# descend.isra.0), an extended regular expression
DESCEND='descend(\.[a-z0-9.]+)?'
# The short-lived children that must have slept, of 200: all natively;
# under emulation (kernel-check's guests) a 2 ms timer may expire before
# its process sleeps
EMULATED_MIN=200
[ -n "${BTR_EMULATED:-}" ] && EMULATED_MIN=180

setup_file() {
	need_root
	file_scratch cfi
	ext4_scratch
	"$BTR" -v --callstacks -o "$W/cfi.pb" -- \
		"$TOOLS/libcwaits" "$ROUNDS" "$W/mnt" >"$W/cfi.out" 2>"$W/cfi.err" ||
		fail "record failed: $(tail -3 "$W/cfi.err")"
	# frame pointers alone
	"$BTR" --callstacks --stack-slice 0 -o "$W/fp.pb" -- \
		"$TOOLS/libcwaits" "$ROUNDS" >"$W/fp.out" 2>"$W/fp.err" ||
		fail "record failed: $(tail -3 "$W/fp.err")"
	# deeper than the default slice, then within a larger one
	"$BTR" --callstacks -o "$W/deep.pb" -- "$TOOLS/deepwait" 3 \
		>"$W/deep.out" 2>"$W/deep.err" || fail "record failed: $(tail -3 "$W/deep.err")"
	"$BTR" --callstacks --stack-slice 16K -o "$W/deep16.pb" -- "$TOOLS/deepwait" 3 \
		>"$W/deep16.out" 2>"$W/deep16.err" || fail "record failed: $(tail -3 "$W/deep16.err")"
	# code generated at run time
	"$BTR" -v --callstacks -o "$W/jit.pb" -- "$TOOLS/jitwait" 3 \
		>"$W/jit.out" 2>"$W/jit.err" || fail "record failed: $(tail -3 "$W/jit.err")"
	dump_runs cfi fp deep deep16 jit
}

teardown_file() {
	ext4_scratch_remove
	file_scratch_remove
}

# tid ROLE [RUN]: the thread of that role (libcwaits' main, sleep, pipe,
# futex, fsync; deepwait's tid).
tid() {
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$W/${2:-cfi}.out"
}

# user_stacks TID RUN: the user part of each sample of thread TID in a
# system call after its process exec'd the workload (before, it is the
# recorder's child),
# leaf first, with " ERROR" after it when the sample has an unwind error.
user_stacks() {
	local exec
	exec=$(awk -v p="pid=$1" '$3 == "sched_process_exec" && $4 == p { print $1 }' "$W/$2.txt")
	awk -v t="tid=$1" -v x="${exec:-0}" '$3 == "perf_sample" && $5 == t && $1 > x {
		s = ""; e = ""
		for (i = 6; i <= NF; i++) {
			if ($i ~ /^stack=/) s = substr($i, 7)
			if ($i ~ /^unwind_error=/) e = " " substr($i, 14)
		}
		# system calls only (a page fault, at a thread start say, is
		# a sleep of another kind)
		if (!sub(/.*entry_SYSCALL_64_after_hwframe,/, "", s))
			next
		print s e
	}' "$W/$2.txt"
}

# deepwait_sleeps DUMP: the user stacks of the deepwait processes (their
# exec's pid) in nanosleep, by their kernel stacks, counted (uniq -c).
deepwait_sleeps() {
	awk '$3 == "sched_process_exec" && /filename=.*\/deepwait$/ { p[$4] = 1 }
	     $3 == "perf_sample" { s[n++] = $0 }
	     END { for (i = 0; i < n; i++) { split(s[i], f, " "); if (f[4] in p) print s[i] } }' \
		"$1" | grep ",hrtimer_nanosleep," |
		sed 's/.*entry_SYSCALL_64_after_hwframe,//' | sort | uniq -c
}

@test "CFI stacks: each wait's stack holds the program's function that called libc, down to start_thread" {
	local role fn n
	if fallback_forced user-walk; then
		# no slice before 5.17: frame pointers alone, said so
		! grep -q "user stacks by CFI" "$W/cfi.err" || false
		grep -q "user stacks walked in BPF .*: no" "$W/cfi.err"
		return 0
	fi
	grep -q "user stacks by CFI from a 4096-byte slice" "$W/cfi.err"
	# (what the summary says of user stacks, for a failure)
	grep "user stacks" "$W/cfi.err"
	for role in sleep:nanosleep pipe:pipe_read futex:futex fsync:fsync; do
		fn=${role#*:}
		role=${role%%:*}
		user_stacks "$(tid "$role")" cfi >"$TMP/$role"
		echo "$role: $(sort "$TMP/$role" | uniq -c)"
		# every sleep of the waiting thread, in its wait (the fsync
		# thread also sleeps writing its file)
		# (a read or a futex wait need not block each round, under
		# emulation say; there, an fsync once caught only one of its
		# five rounds sleeping)
		n=$(grep -c ",wait_in_$fn,t_$role,[^,]" "$TMP/$role")
		[ "$n" -ge 2 ] || { [ -n "${BTR_EMULATED:-}" ] && [ "$n" -ge 1 ]; }
		# (but for the thread's end: libc's start_thread gives the
		# thread's stack back with madvise once the thread's function
		# returned, which can sleep on the mm's lock; a 6.12-rt guest
		# under emulation had one such, __madvise,start_thread,__clone3,
		# a 6.1-rt one start_thread,__clone3: the system call inlined)
		[ "$role" = fsync ] ||
			[ "$n" -eq "$(grep -Evc '^([^,]*,)?start_thread,' "$TMP/$role")" ]
		# with the libc function it called first, and no error
		! grep ",wait_in_$fn," "$TMP/$role" | grep -q " " || false
		! grep -q "^wait_in_$fn," "$TMP/$role" || false
	done
	# the main thread's system calls reach main, each one (it may also
	# sleep in a page fault, of the loader say, whose stack is another)
	user_stacks "$(tid main)" cfi >"$TMP/main"
	cat "$TMP/main"
	[ "$(grep -c ",wait_in_main,main,[^,]" "$TMP/main")" -ge "$ROUNDS" ]
	[ "$(grep -c "^clock_nanosleep,.*,main,[^,]" "$TMP/main")" -eq \
	  "$(grep -c "^clock_nanosleep," "$TMP/main")" ]
}

@test "CFI stacks: frame pointers alone lose the caller of a libc leaf (--stack-slice 0)" {
	local s
	user_stacks "$(tid sleep fp)" fp >"$TMP/sleep"
	cat "$TMP/sleep"
	[ "$(wc -l <"$TMP/sleep")" -ge "$ROUNDS" ]
	# the thread function is there, the function between it and libc not
	[ "$(grep -c ",t_sleep,[^,]" "$TMP/sleep")" -ge "$ROUNDS" ]
	! grep -q "wait_in_nanosleep" "$TMP/sleep" || false
	s=$("$BTR" --callstacks --stack-slice 0 -o "$TMP/x.pb" -d 100ms 2>&1)
	! grep -q "user stacks by CFI" <<<"$s" || false
}

# bats test_tags=file-clients
@test "CFI stacks: trace_processor's perf_sample stacks hold the new frames" {
	local t
	fallback_forced user-walk && return 0
	tp_stats_clean "$W/cfi.pb" mismatched_sched_switch_tids
	t=$(tid pipe)
	tp_samples "$W/cfi.pb" | awk -v t="$t" '$2 == t { print $3 }' >"$TMP/tp"
	cat "$TMP/tp"
	# (as in the first test: a read need not block each round, under
	# emulation say)
	[ "$(grep -c ",read,wait_in_pipe_read,t_pipe,[^,]" "$TMP/tp")" -ge 2 ]
	# the same stacks as the dump's, frame for frame
	user_stacks "$t" cfi | sed -E "s/(^|,)0x[0-9a-f]+/\1?/g" | sort >"$TMP/ours"
	# (system calls only, as user_stacks takes them: a 6.1 guest's pipe
	# thread once slept in a page fault at its start, __clone3 alone)
	sed -n 's/.*entry_SYSCALL_64_after_hwframe,//p' "$TMP/tp" | sort >"$TMP/theirs"
	diff "$TMP/ours" "$TMP/theirs"
}

@test "CFI stacks: a stack deeper than the slice is flagged and counted; a larger slice makes it whole" {
	local t n
	fallback_forced user-walk && return 0
	t=$(tid tid deep)
	# its sleeps in nanosleep (its loader may sleep too, on a slow disk)
	user_stacks "$t" deep | tee "$TMP/all" | grep "^clock_nanosleep," >"$TMP/deep" || true
	cat "$TMP/all"
	n=$(wc -l <"$TMP/deep")
	[ "$n" -ge 3 ]
	# 21 frames of 256 bytes do not fit in 4K: cut, flagged
	[ "$(grep -c "^clock_nanosleep,__nanosleep,wait_deep,descend.*,descend[^,]* MEMORY_INVALID$" "$TMP/deep")" -eq "$n" ]
	[ "$(stat_value "$W/deep.pb" perf_samples_user_stack_cut_by_slice)" -ge "$n" ]
	grep -q "user stacks by CFI from a 4096-byte slice: .* [1-9][0-9]* cut by the slice" "$W/deep.err"
	# within 16K: whole, to main
	t=$(tid tid deep16)
	user_stacks "$t" deep16 | grep "^clock_nanosleep," >"$TMP/deep16" || true
	# (printed with the descend frames counted)
	awk -F, '{ n = 0; s = ""; for (i = 1; i <= NF; i++) if ($i ~ /^descend/) n++; else s = s "," $i
		   print n " x descend:" s }' "$TMP/deep16"
	[ "$(wc -l <"$TMP/deep16")" -ge 3 ]
	local want="clock_nanosleep,__nanosleep,wait_deep"
	for ((n = 0; n <= 20; n++)); do want+=",$DESCEND"; done
	want+=",main,[^,]+,__libc_start_main,_start"
	[ "$(grep -Ecx "$want" "$TMP/deep16")" -eq "$(wc -l <"$TMP/deep16")" ]
}

# bats test_tags=file-clients
@test "CFI stacks: --stack-slice takes 0 to 32K; other values exit 64; --help names it" {
	run "$BTR" --callstacks --stack-slice 40K -o "$TMP/x.pb" -- true
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid stack slice (0 to 32K) '40K'"* ]]
	run "$BTR" --callstacks --stack-slice lots -o "$TMP/x.pb" -- true
	[ "$status" -eq 64 ]
	run "$BTR" --help
	[[ "$output" == *"--stack-slice=SIZE"* ]]
}

@test "short-lived processes: frames of 200 processes gone at once are named, beside CPU hogs" {
	# each child forks, sleeps once in child_wait and exits: its maps are
	# gone before the reader could read them; the BPF side said where its
	# frames lie while it lived (and a fork has its parent's mappings)
	"$BTR" -v --callstacks -o "$TMP/sl.pb" -- sh -c "'$TOOLS/busyloop' 3 >/dev/null &
		'$TOOLS/busyloop' 3 >/dev/null & '$TOOLS/shortlived' 200; wait" \
		>"$TMP/sl.out" 2>"$TMP/sl.err" || fail "record failed: $(tail -3 "$TMP/sl.err")"
	grep "user stacks:" "$TMP/sl.err"
	"$BTR" dump "$TMP/sl.pb" >"$TMP/sl.txt"
	# the children's sleeps in nanosleep, by their kernel stacks (their
	# pids from the forks of the shortlived process): whatever their user
	# part, it must be whole and named
	awk '$3 == "sched_process_exec" && /filename=.*\/shortlived$/ { sub(/pid=/, "", $4); parent = $4 }
	     $3 == "sched_process_fork" { f[n++] = $0 }
	     $3 == "perf_sample" { s[m++] = $0 }
	     END {
		for (i = 0; i < n; i++) {
			split(f[i], a, " ")
			if (a[4] == "parent_pid=" parent) { c = a[6]; sub(/child_pid=/, "pid=", c); kid[c] = 1 }
		}
		for (i = 0; i < m; i++) { split(s[i], b, " "); if (b[4] in kid) print s[i] }
	     }' "$TMP/sl.txt" | grep ",hrtimer_nanosleep," |
		sed 's/.*entry_SYSCALL_64_after_hwframe,//' | sort | uniq -c | tee "$TMP/sl.stacks"
	if fallback_forced user-walk; then
		# before 5.17: /proc alone, a gone process's frames unknown
		grep -q "user stacks: .*, [1-9][0-9]* in no known mapping" "$TMP/sl.err"
		return 0
	fi
	# every child's sleep in nanosleep has its stack whole and named, but
	# for those whose mapping look-up in BPF failed (counted: the mmap
	# lock busy, or a PREEMPT_RT kernel); all 200 slept (under emulation a
	# child's timer may expire before it sleeps: nine in ten then)
	local whole failed
	whole=$(grep "^ *[0-9]* clock_nanosleep,__nanosleep,child_wait,main,[^,]*,__libc_start_main,_start$" "$TMP/sl.stacks" | awk '{ print $1 }')
	failed=$(sed -n 's/.*user stacks: \([0-9]*\) mapping look-ups in BPF failed.*/\1/p' "$TMP/sl.err")
	[ -n "$failed" ]
	[ "$(awk '{ n += $1 } END { print n }' "$TMP/sl.stacks")" -le "$((${whole:-0} + failed))" ]
	[ "$(awk '{ n += $1 } END { print n }' "$TMP/sl.stacks")" -ge "${EMULATED_MIN:-200}" ]
	if [ "$(cat /sys/kernel/realtime 2>/dev/null)" != 1 ] && [ -z "${BTR_EMULATED:-}" ]; then
		[ "${whole:-0}" -eq 200 ]
	fi
	grep -q "debug: user stacks: .* [1-9][0-9]* pcs placed by the mappings the BPF side saw" "$TMP/sl.err"
}

@test "short-lived processes: programs exec'd one after another, each gone at once, are named and unwound" {
	fallback_forced user-walk && return 0
	"$BTR" -v --callstacks -o "$TMP/ex.pb" -- sh -c "'$TOOLS/busyloop' 2 >/dev/null &
		for i in \$(seq 40); do '$TOOLS/deepwait' 1 2; done >/dev/null; wait" \
		>"$TMP/ex.out" 2>"$TMP/ex.err" || fail "record failed: $(tail -3 "$TMP/ex.err")"
	grep "user stacks" "$TMP/ex.err"
	"$BTR" dump "$TMP/ex.pb" >"$TMP/ex.txt"
	deepwait_sleeps "$TMP/ex.txt" | tee "$TMP/ex.stacks"
	# whole and named, but for the processes whose mapping look-up in BPF
	# failed (counted: the mmap lock busy, or a PREEMPT_RT kernel) and
	# whose maps were gone
	local whole failed
	whole=$(grep -E "^ *[0-9]+ clock_nanosleep,__nanosleep,wait_deep,$DESCEND,$DESCEND,$DESCEND,main,[^,]+,__libc_start_main,_start$" "$TMP/ex.stacks" | awk '{ print $1 }')
	failed=$(sed -n 's/.*user stacks: \([0-9]*\) mapping look-ups in BPF failed.*/\1/p' "$TMP/ex.err")
	[ -n "$failed" ]
	[ "$(awk '{ n += $1 } END { print n }' "$TMP/ex.stacks")" -le "$((${whole:-0} + failed))" ]
	[ "$(awk '{ n += $1 } END { print n }' "$TMP/ex.stacks")" -ge $((40 * ${EMULATED_MIN:-200} / 200)) ]
	if [ "$(cat /sys/kernel/realtime 2>/dev/null)" != 1 ] && [ -z "${BTR_EMULATED:-}" ]; then
		[ "${whole:-0}" -eq 40 ]
	fi
}

# record_gone NAME FALLBACK SCRIPT: sh -c SCRIPT recorded with --callstacks
# and FALLBACK forced (none: none), a drain pass every 2 s (its processes
# are gone before their maps can be read), into $TMP/NAME.pb (.out, .err);
# shows what the summary says of user stacks, checks it says no look-up
# is made where FALLBACK forbids it.
record_gone() {
	local fb=$2
	[ "$fb" = none ] && fb=
	BTR_FALLBACK=$fb "$BTR" -v --callstacks --drain-period 2s -o "$TMP/$1.pb" -- \
		sh -c "$3" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		fail "record failed: $(tail -3 "$TMP/$1.err")"
	echo "--fallback $2"
	grep "user stacks" "$TMP/$1.err"
	[ -z "$fb" ] ||
		grep -q "mapping look-ups in BPF (bpf_find_vma) (since 5.17): no, forced by --fallback" "$TMP/$1.err"
}

@test "short-lived processes: where no mapping look-up in BPF can be made, the libraries come from the mmap()s' arguments (--fallback find-vma)" {
	fallback_forced user-walk && return 0
	# a drain pass every 2 s: each deepwait is gone before the reader
	# could read its maps, and no look-up is made (as where the mmap
	# lock is busy, or at a switch on PREEMPT_RT): its C library is known
	# only from the mmap() that mapped it, recorded from the call's
	# arguments (without them, 1 of 20 stacks was whole, the others a
	# bare libc address); by the tp_btf program and by the raw one
	local fb whole all
	for fb in find-vma find-vma,raw-tp; do
		record_gone fv "$fb" "for i in \$(seq 20); do '$TOOLS/deepwait' 1 2; done >/dev/null"
		"$BTR" dump "$TMP/fv.pb" >"$TMP/fv.txt"
		deepwait_sleeps "$TMP/fv.txt" | tee "$TMP/fv.stacks"
		whole=$(grep -E "^ *[0-9]+ clock_nanosleep,__nanosleep,wait_deep,$DESCEND,$DESCEND,$DESCEND,main,[^,]+,__libc_start_main,_start$" "$TMP/fv.stacks" | awk '{ print $1 }')
		all=$(awk '{ n += $1 } END { print n + 0 }' "$TMP/fv.stacks")
		[ "$all" -ge $((20 * ${EMULATED_MIN:-200} / 200)) ]
		[ "$((${whole:-0} * 10))" -ge "$((all * 9))" ]
	done
}

# jit_frames PB START: the rel_pcs of the frames trace_processor has in the
# mapping from START (hex) to START + 4096, one a line, rising.
jit_frames() {
	tp_query "$1" "select distinct f.rel_pc from stack_profile_frame f
		join stack_profile_mapping m on m.id = f.mapping
		where m.start = $((16#$2)) and m.end = $((16#$2 + 4096))
		order by 1"
}

@test "JIT stacks: a wait in code generated at run time is cut there, flagged UNWIND_INFO and counted, its frames in the anonymous mapping" {
	fallback_forced user-walk && return 0
	local t start n min=3
	[ -n "${BTR_EMULATED:-}" ] && min=2
	t=$(tid tid jit)
	start=$(sed -n 's/.* code=\([0-9a-f]*\)-.*/\1/p' "$W/jit.out")
	user_stacks "$t" jit >"$TMP/jit"
	sort "$TMP/jit" | uniq -c
	grep "user stacks" "$W/jit.err"
	# through libc: its frames, then the generated code's (the return
	# address, 0x10 into the mapping), the stack cut there; a system
	# call of its own: the generated code alone (0x47)
	[ "$(grep -cx "clock_nanosleep,__nanosleep,0x10 UNWIND_INFO" "$TMP/jit")" -ge "$min" ]
	[ "$(grep -cx "0x47 UNWIND_INFO" "$TMP/jit")" -ge "$min" ]
	# none of those written as whole (the loader's system calls before
	# main are other stacks)
	grep -E "(^|,)0x(10|47)( |$)" "$TMP/jit" >"$TMP/jit.gen"
	[ "$(grep -c " UNWIND_INFO$" "$TMP/jit.gen")" -eq "$(wc -l <"$TMP/jit.gen")" ]
	n=$(sed -n 's/.* \([0-9]*\) stopped at a frame without CFI.*/\1/p' "$W/jit.err")
	[ "${n:-0}" -ge "$(wc -l <"$TMP/jit.gen")" ]
	# trace_processor: each sample flagged; the two frames in the
	# mapping's own bounds
	[ "$(tp_query "$W/jit.pb" "select count(*) from perf_sample join thread
		using (utid) where tid = $t and unwind_error = 'unwind_info'")" -ge $((2 * min)) ]
	[ "$(jit_frames "$W/jit.pb" "$start" | paste -sd' ')" = "16 71" ]
}

@test "JIT stacks of processes gone before their maps are read: the anonymous mapping comes from the BPF side, looked up or from the mmap()'s arguments (--fallback find-vma)" {
	fallback_forced user-walk && return 0
	local fb start placed found
	# (an anonymous mapping's vm_pgoff is its start's page: taken as its
	# file offset, its frames' rel_pc were their addresses)
	for fb in none find-vma find-vma,raw-tp; do
		record_gone jv "$fb" "for i in \$(seq 5); do '$TOOLS/jitwait' 1; done"
		placed=$(sed -n 's/.* \([0-9]*\) pcs placed by the mappings the BPF side saw.*/\1/p' "$TMP/jv.err")
		[ "${placed:-0}" -gt 0 ]
		# each process's generated code: both frames, in its own
		# mapping (ASLR puts each elsewhere), known from the mmap()
		found=0
		for start in $(sed -n 's/.* code=\([0-9a-f]*\)-.*/\1/p' "$TMP/jv.out"); do
			[ "$(jit_frames "$TMP/jv.pb" "$start" | paste -sd' ')" = "16 71" ] &&
				found=$((found + 1))
		done
		echo "$found of 5 processes' generated code placed"
		[ "$found" -ge $((5 * ${EMULATED_MIN:-200} / 200)) ]
	done
}
