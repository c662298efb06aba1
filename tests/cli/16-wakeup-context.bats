#!/usr/bin/env bats
# Where each wakeup came from: every sched_waking carries the interrupt
# context of the task that woke (common_flags, trace_processor's
# irq_context). The kernel's own ftrace, recording beside bpftrace-rec in a
# private tracefs instance, is the ground truth: for the wakeups of the
# workload's threads (tests/tools/wakeups.c: a sleeper woken by its timer
# interrupt, two threads woken by each other through pipes), both must
# count the same wakeups from interrupts and from tasks.

load helpers

ROUNDS=200
# How far apart ftrace's and our stamps of one waking may be: 100 us; under
# emulation (kernel-check's guests, TCG) the two probes of one tracepoint
# were seen further apart, and a waking paired with none.
WINDOW=100000
[ -n "${BTR_EMULATED:-}" ] && WINDOW=2000000

setup_file() {
	tracefs_ensure
	file_scratch wake
	ftrace_start 8192 sched/sched_waking sched/sched_switch
	local rc=0
	"$BTR" -v -o "$W/trace.pb" -- "$TOOLS/wakeups" "$ROUNDS" \
		>"$W/cmd.out" 2>"$W/rec.err" || rc=$?
	ftrace_stop
	cat "$INST/trace" >"$W/ftrace.txt"
	ftrace_remove
	[ "$rc" -eq 0 ] || fail "record failed: $(cat "$W/rec.err")"
	"$BTR" dump "$W/trace.pb" >"$W/dump.txt" || fail "dump failed"
	"$BTR" dump --json "$W/trace.pb" >"$W/dump.json" || fail "dump --json failed"
}

teardown_file() {
	ftrace_remove
	file_scratch_remove
	tracefs_release
}

# tid ROLE: the workload's thread of that role.
tid() {
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$W/cmd.out"
}

# "TS IRQ CUR CHAIN MARK" lines, time order: wakings of tid $1 in ftrace (ns;
# IRQ 1 when the irq column of its flags says h, H, s or z; CUR the task
# it came in; CHAIN 0 when ftrace's own switches on that CPU had not put
# CUR on it: the kernel reported no switch into that context, 1 otherwise;
# MARK the irq column's own character)
ftrace_wakings() {
	awk -v pid="pid=$1" '
		# the flags column of the hardirq/softirq mark, from the header
		# (PREEMPT_RT kernels have one more column, need-resched-lazy)
		/^#.*=> / { col++; if (/hardirq\/softirq/) irqcol = col }
		/ sched_switch: / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^\[[0-9]+\]$/) c = $i
				if ($i ~ /^next_pid=/) { n = $i; sub(/.*=/, "", n); on[c] = n }
			}
			next
		}
		/ sched_waking: / {
			hit = 0
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^\[[0-9]+\]$/) {
					c = $i; flags = $(i + 1); ts = $(i + 2)
					cur = $(i - 1); sub(/.*-/, "", cur)
				}
				if ($i == pid) hit = 1
			}
			if (!hit) next
			sub(/:$/, "", ts); split(ts, t, ".")
			m = substr(flags, irqcol ? irqcol : 3, 1)
			printf "%d%06d000 %d %s %d %s\n", t[1], t[2],
				m ~ /[hHsz]/, cur, !(c in on) || on[c] == cur, m
		}' "$W/ftrace.txt" | sort -n
}

# ... and in our trace.
our_wakings() {
	awk -v pid="pid=$1" '$3 == "sched_waking" && $4 == pid {
		print $1, / irq_context=1/ ? 1 : 0 }' "$W/dump.txt" | sort -n
}

# Tasks the kernel switched in and never out, by ftrace: its own tracer
# sees no switch-out of them either (a sandbox's agent thread was seen to
# be one: while it ran, the kernel ran no BPF program, ftrace's probes it
# did), one per line. The same thread was also seen running with no switch
# into it in ftrace's record (the CHAIN of ftrace_wakings()): a waking in
# its interrupt that ftrace saw and no BPF program did. ftrace also misses
# some switches out of idle here, which breaks its chain in the workload's
# own threads: the chain excuses wakings in other tasks only.
unswitched() {
	awk '/ sched_switch: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^prev_pid=/) { sub(/.*=/, "", $i); out[$i] = 1 }
			if ($i ~ /^next_pid=/) { sub(/.*=/, "", $i); in_[$i] = 1 }
		}
	     }
	     END { for (p in in_) if (!(p in out) && p != 0) print p }' "$W/ftrace.txt"
}

# "MATCHED DIFFERENT MISSING IRQ HIDDEN UNPAIRED": ftrace's wakings of tid $1
# paired with ours (the first unpaired one within WINDOW ns, both stamp
# BOOTTIME), how many pairs disagree on the context, how many of ftrace's
# have no pair (a BPF program does not run while it is already running on
# the CPU: a waking in an interrupt that came during it is not recorded),
# how many of ftrace's are from an interrupt, and how many of the missing
# ones came in the context of a task the kernel never reported switched
# out (unswitched()) or switched in (ftrace's CHAIN), and how many of ours
# have no pair (the two probes' stamps of one waking further apart than
# WINDOW: a missing one then is no waking lost). Each missing one is
# printed.
compare() {
	ftrace_wakings "$1" >"$W/ft.$1"
	our_wakings "$1" >"$W/ours.$1"
	unswitched >"$W/unswitched"
	awk -v win="$WINDOW" -v own="$(tid sleeper) $(tid reader) $(tid writer)" '
	     BEGIN { lo = 0; n = 0; split(own, o); for (i in o) mine[o[i]] = 1 }
	     FILENAME == ARGV[1] { hid[$1] = 1; next }
	     FILENAME == ARGV[2] { ts[n] = $1; irq[n] = $2; n++; next }
	     {
		ft_irq += $2
		for (i = lo; i < n; i++) {
			if (used[i] || ts[i] < $1 - win) { if (i == lo) lo++; continue }
			if (ts[i] > $1 + win) break
			used[i] = 1; matched++; diff += irq[i] != $2; found = 1; break
		}
		if (!found) {
			missing++
			unin = !$4 && $3 != 0 && !($3 in mine)
			hidden += ($3 in hid) || unin
			printf "missing: ftrace waking at %s, irq %d, task %s%s%s\n", $1, $2, $3,
				$3 in hid ? " (never switched out)" : "",
				unin ? " (not switched in by ftrace)" : "" >"/dev/stderr"
		}
		found = 0
	     }
	     END { print matched + 0, diff + 0, missing + 0, ft_irq + 0, hidden + 0,
		n - matched }' \
		"$W/unswitched" "$W/ours.$1" "$W/ft.$1"
}

# The wakings the recording says it missed: the kernel's BPF recursion
# misses (all programs together) and the events the recorder lost.
accounted() {
	local misses lost
	misses=$(sed -n 's/.*BPF recursion misses: \([0-9]*\), over .*/\1/p' "$W/rec.err")
	lost=$(sed -n 's/.* recorded [0-9]* events (.*), lost \([0-9]*\);.*/\1/p' "$W/rec.err")
	echo "recursion misses: $misses, events lost: $lost" >&2
	[ -n "$misses" ] && [ -n "$lost" ] || return 1
	echo $((misses + lost))
}

@test "wakeup context: the workload ran, both recorders saw its wakeups" {
	local matched diff missing irq hidden unpaired misses
	[ -n "$(tid sleeper)" ]
	[ -n "$(tid reader)" ]
	read -r matched diff missing irq hidden unpaired < <(compare "$(tid sleeper)")
	echo "sleeper: $matched matched ($diff disagree), $missing missing ($hidden in a task the kernel reported no switch of), ftrace: $irq from interrupts; $unpaired of ours unpaired"
	# nanosleep's wakeups come from the timer interrupt
	[ "$irq" -ge $((ROUNDS * 9 / 10)) ]
	# the ones we miss came while a program already ran on their CPU: the
	# kernel counts them (recursion misses, all programs together); or
	# the ring had no room: the recorder counts them (lost); or the kernel
	# ran no BPF program in the task it came in (hidden); or it is one of
	# ours stamped too far from ftrace's to pair (a 6.1-rt guest under
	# emulation had one missing, with no miss and no loss; it did not
	# print then whether one of ours was unpaired)
	misses=$(accounted)
	[ "$missing" -le $((misses + hidden + unpaired)) ]
}

@test "wakeup context: a timer interrupt's wakeups are marked, as ftrace marks them" {
	local s
	s=$(tid sleeper)
	read -r matched diff missing irq _ _ < <(compare "$s")
	echo "sleeper: $matched matched ($diff disagree), $missing missing"
	[ "$matched" -ge $((ROUNDS * 9 / 10)) ]
	[ "$diff" -eq 0 ]
	# hard irq, in the flags themselves; on PREEMPT_RT the timer softirq,
	# served in a thread (tests/cli/25-preempt-rt.bats)
	local flags=$HARDIRQ_FLAGS
	[ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && flags=$SOFTIRQ_FLAGS
	[ "$(grep -Ec " sched_waking pid=$s .*common_flags=($flags) " "$W/dump.txt")" -ge $((ROUNDS * 9 / 10)) ]
}

@test "wakeup context: a task's wakeups are not marked" {
	local t matched diff missing irq hidden unpaired misses
	misses=$(accounted)
	for t in "$(tid reader)" "$(tid writer)"; do
		read -r matched diff missing irq hidden unpaired < <(compare "$t")
		echo "tid $t: $matched matched ($diff disagree), $missing missing, ftrace: $irq from interrupts; $unpaired of ours unpaired"
		[ "$matched" -gt $((ROUNDS / 4)) ]
		[ "$diff" -eq 0 ]
		# missed as the first test says (a 6.1-rt guest under
		# emulation had one, not in a hidden task)
		[ "$missing" -le $((misses + hidden + unpaired)) ]
		# ftrace's few from an interrupt (an unrelated load's), no more
		[ "$irq" -le 2 ]
		[ "$(awk '$2 == 1' "$W/ours.$t" | wc -l)" -le "$irq" ]
	done
}

# bats test_tags=file-clients
@test "wakeup context: dump --json carries it too" {
	local s
	s=$(tid sleeper)
	our_wakings "$s" >"$W/ours.$s"
	[ "$(jq -c "select(.kind == \"sched_waking\" and .pid == $s and .irq_context == 1)" "$W/dump.json" | wc -l)" -eq \
	  "$(awk '$2 == 1' "$W/ours.$s" | wc -l)" ]
}

# bats test_tags=file-clients
@test "wakeup context: trace_processor's irq_context; the report lists interrupt wakers apart from threads" {
	local s r n kind other
	s=$(tid sleeper)
	r=$(tid reader)
	tp_stats_clean "$W/trace.pb" mismatched_sched_switch_tids
	# the sleeper's R states that ended by running, by irq_context, as
	# trace_processor sets it from the wakings' common_flags
	n=$(tp_query "$W/trace.pb" "with st as (select ts, dur, state, irq_context,
		lead(state) over (order by ts) as nxt from thread_state
		join thread using (utid) where tid = $s)
		select count(*) from st where state = 'R' and irq_context = 1
		and dur >= 0 and nxt = 'Running'")
	echo "sleeper: $n latencies after an interrupt's waking (trace_processor)"
	[ "$n" -ge $((ROUNDS * 9 / 10)) ]
	# the reader's and writer's: as many as ftrace says came from an
	# interrupt (none, or a few an unrelated load's interrupt made)
	local ft_irq
	ft_irq=$({ ftrace_wakings "$r"; ftrace_wakings "$(tid writer)"; } | awk '$2 == 1' | wc -l)
	[ "$(tp_query "$W/trace.pb" "select count(*) from thread_state join thread
		using (utid) where tid in ($r, $(tid writer)) and irq_context = 1")" -le "$ft_irq" ]
	# report: the same count, as the interrupt (hard; on PREEMPT_RT the
	# timer softirq), not as the task it interrupted. A few may come from
	# the other kind (a softirq's waking was seen once on a 6.18 guest):
	# no more of those than ftrace marks so (s: softirq only; h, H: hard)
	local nh ns ft_other
	kind=hard other=soft
	[ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && kind=soft other=hard
	ft_other=$(ftrace_wakings "$s" | awk -v o="$other" '$2 == 1 &&
		(o == "soft") == ($5 == "s")' | wc -l)
	"$BTR" report --json --pid "$s" "$W/trace.pb" >"$W/rs.json"
	jq -c '.wakers' "$W/rs.json"
	[ "$(jq ".wakers[0].tid" "$W/rs.json")" = "$s" ]
	nh=$(jq ".wakers[0].woken_by_irq.hard" "$W/rs.json")
	ns=$(jq ".wakers[0].woken_by_irq.soft" "$W/rs.json")
	echo "report: hard $nh soft $ns; ftrace's $other: $ft_other"
	[ $((nh + ns)) -eq "$n" ]
	[ "$(jq ".wakers[0].woken_by_irq.$other" "$W/rs.json")" -le "$ft_other" ]
	[ "$(jq ".wakers[0].woken_by_irq.$kind" "$W/rs.json")" -ge $((n * 9 / 10)) ]
	# the text: the same counts (one kind omitted when none)
	"$BTR" report --pid "$s" "$W/trace.pb" | tee "$W/rs.txt"
	local want=" interrupts:"
	[ "$nh" -gt 0 ] && want="$want hard irq x$nh"
	[ "$nh" -gt 0 ] && [ "$ns" -gt 0 ] && want="$want,"
	[ "$ns" -gt 0 ] && want="$want softirq x$ns"
	grep -Fq "$want" "$W/rs.txt"
	grep -Eq "^ *$s .*woken by.* interrupts: .*\$" "$W/rs.txt"
	# the reader: woken by the writer, a task, never an interrupt
	"$BTR" report --json --pid "$r" "$W/trace.pb" >"$W/rr.json"
	jq -c '.wakers' "$W/rr.json"
	[ "$(jq ".wakers[0].woken_by[0].tid" "$W/rr.json")" = "$(tid writer)" ]
	[ "$(jq '.wakers[0].woken_by_irq.hard + .wakers[0].woken_by_irq.soft' "$W/rr.json")" -eq 0 ]
}
