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

# Runs COMMAND... as nobody (uid/gid 65534, no groups) in bats' `run`, with
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
	run setpriv --reuid=65534 --regid=65534 --clear-groups "${opts[@]}" "${cmd[@]}"
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
