# Shared helpers of the CLI tests: the binary under test ($BTR_BIN), the
# test tools ($BTR_TOOLS), a scratch directory per test, and checks that
# fail (never skip) when a test cannot run its BPF part.

BTR=${BTR_BIN:?set BTR_BIN to the bpftrace-rec binary}
TOOLS=${BTR_TOOLS:?set BTR_TOOLS to the test tools directory}
PROTOS_DIR=$(cd "$(dirname "$BATS_TEST_FILENAME")/../../protos" && pwd)

setup() {
	TMP=$(mktemp -d /tmp/btr-test.XXXXXX)
}

teardown() {
	rm -rf "$TMP"
}

# A scratch directory shared by the tests of one file ($W, exported), made
# in setup_file: file_scratch NAME; file_scratch_remove in teardown_file
# removes it, or keeps it with BTR_KEEP set.
file_scratch() {
	W=$(mktemp -d "/tmp/btr-$1.XXXXXX")
	export W
}

file_scratch_remove() {
	[ -n "${W:-}" ] || return 0
	[ -n "${BTR_KEEP:-}" ] && echo "# kept in $W" >&3 || rm -rf "$W"
}

fail() {
	echo "$@" >&2
	return 1
}

# An ext4 filesystem on a loop device at $W/mnt (in file_scratch's $W),
# where fsync() waits for the disk in D (tmpfs has none to wait for);
# ext4_scratch_remove unmounts it.
ext4_scratch() {
	truncate -s 64M "$W/ext4.img"
	mkfs.ext4 -q -F "$W/ext4.img" || fail "mkfs.ext4 failed"
	mkdir "$W/mnt"
	mount -o loop "$W/ext4.img" "$W/mnt" || fail "cannot mount ext4 on a loop device"
}

ext4_scratch_remove() {
	umount "$W/mnt" 2>/dev/null || true
}

# Whether this run forces the recorder's older path of feature $1
# (BTR_FALLBACK, which the recorder reads as --fallback's default:
# scripts/kernel/run-tests.sh's fallback pass sets it to "all"). A test
# whose figures differ on the older path asserts that path instead.
fallback_forced() {
	[[ ",${BTR_FALLBACK:-}," == *",$1,"* || ",${BTR_FALLBACK:-}," == *",all,"* ]]
}

# Recording tests need root to load BPF programs: fail, do not skip.
need_root() {
	[ "$(id -u)" = 0 ] || fail "this test records with BPF and must run as root"
}

# Records COMMAND... into $TMP/trace.pb; output of the command in
# $TMP/cmd.out, recorder's stderr in $TMP/rec.err.
record_cmd() {
	need_root
	"$BTR" -o "$TMP/trace.pb" "$@" >"$TMP/cmd.out" 2>"$TMP/rec.err" ||
		fail "record failed: $(cat "$TMP/rec.err")"
}

# dump_runs RUN...: the dump of each $W/RUN.pb into $W/RUN.txt.
dump_runs() {
	local t
	for t in "$@"; do
		"$BTR" dump "$W/$t.pb" >"$W/$t.txt" || fail "dump $t failed"
	done
}

# dump of $1 into $TMP/dump.txt
dump_trace() {
	"$BTR" dump "$1" >"$TMP/dump.txt" 2>"$TMP/dump.err" ||
		fail "dump failed: $(cat "$TMP/dump.err")"
}

# Decodes a trace with protoc against our protos: every packet must parse.
protoc_decode() {
	protoc --decode=perfetto.protos.Trace -I"$PROTOS_DIR" \
		"$PROTOS_DIR/perfetto/trace.proto" <"$1" >"$TMP/decoded.txt"
}

# A stat's value from `bpftrace-rec stats --json`: stat_value FILE NAME [IDX]
# (summed over machines). Fails when stats fails or has no such row, so that
# a renamed or missing stat cannot pass as 0.
stat_value() {
	local json
	json=$("$BTR" stats --json "$1") || fail "stats $1 failed"
	jq -er --arg n "$2" --argjson i "${3:-0}" \
		'[.[] | select(.name == $n and (.idx == $i or .idx == null)) | .value]
		 | if length == 0 then error("no stat row \($n)") else add end' <<<"$json"
}

# Fails unless the timestamps tracetimes reads from FILE never go back
# (packets without one, "-", are skipped).
times_sorted() {
	"$TOOLS/tracetimes" "$1" >"$TMP/times.txt" || fail "tracetimes $1 failed"
	[ -s "$TMP/times.txt" ]
	awk '$2 != "-" { if ($2 < last) exit 1; last = $2 }' "$TMP/times.txt"
}

# Number of scheduler event lines in $TMP/dump.txt.
count_sched_events() {
	awk '$2 ~ /^[0-9]+$/ && $3 != "lost_events" && $3 != "ftrace_cpu_stats"' "$TMP/dump.txt" | wc -l
}

# Runs COMMAND... as nobody (uid/gid 65534, no groups unless given) in bats' `run`, with
# $BTR replaced by a copy nobody can execute: the clone under test may live
# in a 0700 home (/root), where nobody cannot reach the built binary.
# Extra setpriv options go before `--`: run_as_nobody [OPTS...] -- CMD...
run_as_nobody() {
	local opts=() arg copy="$TMP/nobody-bin/bpftrace-rec"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	chmod 755 "$TMP"
	if [ ! -x "$copy" ]; then
		install -d -m 0755 "$TMP/nobody-bin"
		install -m 0755 "$BTR" "$copy"
	fi
	local cmd=()
	for arg in "$@"; do
		if [ "$arg" = "$BTR" ]; then cmd+=("$copy"); else cmd+=("$arg"); fi
	done
	# no groups, unless the options give some (--groups=LIST)
	local clear=--clear-groups
	for arg in "${opts[@]}"; do [[ $arg == --groups* ]] && clear=; done
	run setpriv --reuid=65534 --regid=65534 ${clear:+"$clear"} "${opts[@]}" "${cmd[@]}"
}

# tracefs at $TRACEFS, mounted when it is not (a fresh machine has it
# unmounted); tracefs_release unmounts it again if tracefs_ensure mounted it.
# Call them from setup_file and teardown_file.
TRACEFS=/sys/kernel/tracing
tracefs_ensure() {
	need_root
	if [ ! -d "$TRACEFS/instances" ]; then
		mount -t tracefs nodev "$TRACEFS" ||
			fail "tracefs is not mounted and cannot be mounted on $TRACEFS"
		BTR_TRACEFS_MOUNTED=$TRACEFS
		export BTR_TRACEFS_MOUNTED
	fi
	[ -d "$TRACEFS/instances" ] || fail "no tracefs instances under $TRACEFS"
}

# A private ftrace instance ($INST) recording tracepoints EVENT... on the
# boot clock with KB per CPU: ftrace_start KB EVENT...; ftrace_stop stops
# it (its text stays readable in $INST/trace); ftrace_remove removes it.
ftrace_start() {
	local kb=$1 ev
	shift
	INST=$TRACEFS/instances/btr-test-$$
	export INST
	mkdir "$INST" || fail "cannot create $INST"
	echo 0 >"$INST/tracing_on"
	echo boot >"$INST/trace_clock" || fail "no boot trace_clock"
	echo "$kb" >"$INST/buffer_size_kb" || fail "cannot size the ftrace buffer"
	for ev in "$@"; do
		echo 1 >"$INST/events/$ev/enable" || fail "cannot enable $ev"
	done
	echo 1 >"$INST/tracing_on"
}

ftrace_stop() {
	echo 0 >"$INST/tracing_on"
}

ftrace_remove() {
	[ -n "${INST:-}" ] && [ -d "$INST" ] || return 0
	echo 0 >"$INST/tracing_on"
	rmdir "$INST"
}

tracefs_release() {
	[ -n "${BTR_TRACEFS_MOUNTED:-}" ] || return 0
	umount "$BTR_TRACEFS_MOUNTED" ||
		fail "cannot unmount the tracefs this test mounted on $BTR_TRACEFS_MOUNTED"
	unset BTR_TRACEFS_MOUNTED
}

# Waits (up to 60 s) until the recorder PID records: once its programs are
# loaded and attached and its output open it drops every capability
# (CAP_CHOWN is kept under sudo, CAP_SYS_PTRACE with --callstacks). A loaded machine can take seconds to get
# there: fixed sleeps would signal a recorder that has not started.
wait_recording() {
	local pid=$1 _
	for _ in $(seq 600); do
		grep -Eq '^CapEff:[[:space:]]+00000000000[08]000[01]$' "/proc/$pid/status" 2>/dev/null &&
			return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			fail "recorder $pid exited before recording"
			return 1
		fi
		sleep 0.1
	done
	fail "recorder $pid did not start recording within 60 s"
	return 1
}

# kind_lines KIND NSKIP FILE...: the lines of kind KIND (third field) of
# `dump` outputs, their first NSKIP fields (time, cpu) blanked and without
# machine_id or callstack_iid, sorted: what `sync` must keep of them
# (machine ids and interning iids are its own to choose).
kind_lines() {
	local kind=$1 nskip=$2
	shift 2
	awk -v k="$kind" -v n="$nskip" '$3 == k { for (i = 1; i <= n; i++) $i = ""; print }' "$@" |
		sed 's/ machine_id=[0-9]*//; s/ callstack_iid=[0-9]*//' | sort
}

# A waking's common_flags (grep -E / awk alternatives, whole values): the
# recorder sets 0x8 in a hard interrupt and 0x10 in a softirq, both when
# a hard interrupt came while the CPU served a softirq (a hard one's
# waking, as report counts it).
HARDIRQ_FLAGS='0x8|0x18'
SOFTIRQ_FLAGS='0x10'

# Perfetto's own trace_processor_shell, the real client every trace is
# held against: $TRACE_PROCESSOR, or trace_processor_shell on PATH. Not a
# Debian package: README's "Testing" says where to get it; the tests fail
# (never skip) without it.
TP=${TRACE_PROCESSOR:-$(command -v trace_processor_shell || true)}

need_trace_processor() {
	[ -n "$TP" ] && [ -x "$TP" ] ||
		fail "trace_processor_shell not found: put Perfetto's trace_processor_shell on PATH or set TRACE_PROCESSOR to it (see README.md)"
}

# tp_query FILE SQL: trace_processor's answer as lines of comma-separated
# values, without the header line and the quotes. Fails when
# trace_processor cannot load the file or run the query. Name each
# column of several lines (expr as name): the header would take as many.
tp_query() {
	need_trace_processor || return 1
	local out err
	err=$(mktemp /tmp/btr-tp.XXXXXX)
	if ! out=$("$TP" query "$1" "$2" 2>"$err"); then
		fail "trace_processor failed on $1: $(tail -5 "$err")"
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
	tail -n +2 <<<"$out" | tr -d '"'
}

# tp_stats_clean FILE [NAME...]: trace_processor found no error and no
# data loss in FILE (stats of severity error or data_loss with a value)
# but the stats NAME... the test expects.
tp_stats_clean() {
	local f=$1 rows name ok=1
	shift
	rows=$(tp_query "$f" "select name, idx, value from stats
		where value > 0 and severity in ('error', 'data_loss')") || return 1
	while IFS=, read -r name _; do
		[ -n "$name" ] || continue
		[[ " $* " == *" $name "* ]] && continue
		echo "trace_processor: $name in $f" >&2
		ok=0
	done <<<"$rows"
	[ "$ok" = 1 ] ||
		{ fail "trace_processor: errors or data loss in $f: $rows"; return 1; }
}

# Per thread of FILE, as trace_processor defines them (tid, then CPU ns,
# switches out voluntary and involuntary, latency count and ns, S ns, D
# ns), for threads with any figure not 0, by tid:
# - CPU time: its sched slices that ended (dur -1: open);
# - switches: its ended slices by end state (R, R+: involuntary);
# - latencies: its thread_state rows R or R+ that ended by a Running row;
# - S and D: its S and D rows that ended.
# Machine MACHINE only when given (a merge: machine_id, NULL the host).
TP_THREAD_SQL="
with st as (select utid, ts, dur, state,
	lead(state) over (partition by utid order by ts) as nxt,
	lead(ts) over (partition by utid order by ts) as nts
	from thread_state),
lat as (select utid, count(*) as n, sum(dur) as ns from st
	where state in ('R', 'R+') and dur >= 0 and nxt = 'Running'
	and nts = ts + dur group by utid),
off as (select utid, sum(iif(state = 'S', dur, 0)) as s,
	sum(iif(state = 'D', dur, 0)) as d from st where dur > 0
	group by utid),
sl as (select utid, sum(iif(dur > 0, dur, 0)) as cpu,
	sum(end_state is not null and end_state not in ('R', 'R+')) as vol,
	sum(end_state in ('R', 'R+')) as invol from sched group by utid)
select t.tid, sum(ifnull(sl.cpu, 0)), sum(ifnull(sl.vol, 0)),
	sum(ifnull(sl.invol, 0)), sum(ifnull(lat.n, 0)), sum(ifnull(lat.ns, 0)),
	sum(ifnull(off.s, 0)), sum(ifnull(off.d, 0))
from thread t left join sl using (utid) left join lat using (utid)
	left join off using (utid)
where t.tid > 0 and %MACHINE%
group by t.tid order by t.tid"

# tp_threads FILE [MACHINE]: those lines, space-separated.
tp_threads() {
	local m="1" rows
	[ -n "${2:-}" ] && m="ifnull(t.machine_id, 0) = $2"
	rows=$(tp_query "$1" "${TP_THREAD_SQL//%MACHINE%/$m}") || return 1
	tr , ' ' <<<"$rows" | awk '$2 + $3 + $4 + $5 + $6 + $7 + $8 > 0'
}

# report_threads JSON: the same figures from a `report --json --top 0`
# object (a trace's or one machine's section).
report_threads() {
	jq -r '.threads[] | "\(.tid) \(.cpu_ns) \(.switches_voluntary) \(.switches_involuntary) \(.latency.count // 0) \(.latency.sum_ns // 0) \(.off_cpu.S_ns) \(.off_cpu.D_ns)"' "$1" |
		awk '$2 + $3 + $4 + $5 + $6 + $7 + $8 > 0' | sort -n
}

# report_equals_tp FILE: `report --json` gives every thread of FILE the
# figures trace_processor's SQL gives it, exactly; kept in $TMP/tp.txt and
# $TMP/report.txt (a diff on failure).
report_equals_tp() {
	"$BTR" report --json --top 0 "$1" >"$TMP/report-tp.json" ||
		{ fail "report $1 failed"; return 1; }
	report_threads "$TMP/report-tp.json" >"$TMP/report.txt" || return 1
	tp_threads "$1" >"$TMP/tp.unsorted" || return 1
	sort -n "$TMP/tp.unsorted" >"$TMP/tp.txt"
	[ -s "$TMP/tp.txt" ] ||
		{ fail "trace_processor gave no thread figures for $1"; return 1; }
	diff -u "$TMP/tp.txt" "$TMP/report.txt" >&2 ||
		{ fail "report and trace_processor disagree on $1 (- trace_processor, + report)"; return 1; }
}

# tp_samples FILE: trace_processor's "TS TID STACK" of every perf_sample
# in FILE, leaf first, each frame named as the Perfetto UI names it (its
# symbol from ModuleSymbols, or else the frame's own name), unnamed
# frames as "?", time order.
tp_samples() {
	tp_query "$1" "with recursive walk(sample, ts, utid, cid, depth) as (
		select id, ts, utid, callsite_id, 0 from perf_sample
		union all
		select w.sample, w.ts, w.utid, c.parent_id, w.depth + 1 from walk w
		join stack_profile_callsite c on c.id = w.cid
		where c.parent_id is not null),
	named as (select w.sample, w.ts, w.utid, w.depth,
		coalesce((select s.name from stack_profile_symbol s
		where s.symbol_set_id = f.symbol_set_id order by s.id limit 1),
		f.name) as name from walk w
		join stack_profile_callsite c on c.id = w.cid
		join stack_profile_frame f on f.id = c.frame_id)
	select n.ts, t.tid, group_concat(iif(n.name = '', '?', n.name), ','
		order by n.depth) as stack
	from named n join thread t using (utid) group by n.sample
	order by n.ts, t.tid" | tr , ' ' | awk '{ s = $3; for (i = 4; i <= NF; i++) s = s "," $i; print $1, $2, s }'
}
