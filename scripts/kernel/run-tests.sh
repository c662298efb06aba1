#!/bin/bash
# The recorder's kernel-sensitive tests, as scripts/kernel-check.sh runs
# them inside each kernel (and on the host's own): the bats files that
# load the BPF programs, once as they are ("native") and once with every
# fallback forced (BTR_FALLBACK=all: what the recorder does on a kernel
# older than each feature's minimum, see docs/kernels.md). Run from the
# repository, with the binary and the test tools built in $OUT (default
# build). Prints TAP, each test's line with its time (bats --timing),
# each plan line preceded by "# pass P file F"; exits non-zero when a
# test fails. Files without a fallback path run in the native pass only.
#
#   scripts/kernel/run-tests.sh [--pass native|fallback]... [FILE...]
#
# FILE: a bats file's name without .bats (default: the list below).
set -uo pipefail

OUT=${OUT:-build}
FILES=(02-record 16-wakeup-context 18-wait-reason 21-synth-rings
	22-callstacks 24-hotplug 25-preempt-rt 27-cfi-stacks 28-triggers)
# Under emulation (BTR_EMULATED=1, set by kernel-check.sh in its guests)
# the simulated many-core host runs one of its three reader set-ups and
# the overflow test: the rest is the readers' userspace, the same on
# every kernel, and costs minutes there. Its BPF part (the synthetic
# program, rings of many sizes in the array of maps) is in these.
SYNTH_EMULATED='256 rings, 2 reader threads|tiny rings|more readers than rings|no rings'
# Files whose recordings take no fallback path: not run again with them.
NO_FALLBACK=" 21-synth-rings "
# Under emulation, with the default list, the fallback pass leaves out
# what the native pass has seen of the kernel (the host runs it all):
# - the tests tagged file-clients (# bats test_tags=file-clients), which
#   hold a recording against what reads the file: trace_processor,
#   protoc, dump --json, sync, the echoed config, option parsing. The
#   fallbacks change how the BPF side gets the records, not what the
#   userspace writes of them, and trace_processor alone takes up to a
#   minute a test there;
# - files whose kernel part the native pass has seen: on a PREEMPT_RT
#   kernel (/sys/kernel/realtime) all but 25-preempt-rt (the fallbacks
#   are older BPF programs, which the verifier of the kernel's version
#   takes or not the same in its RT build, whose non-RT build runs them
#   all; the RT file checks what RT does to the blocked functions and
#   wakers the fallbacks find); elsewhere 24-hotplug (the rings are
#   swapped and read the same whichever programs write them),
#   25-preempt-rt (its non-RT half) and 28-triggers (the conditions are
#   the reader's, from the switch and waking records: the fallbacks'
#   prev_state is checked on the host's kernel, and what each kernel's
#   scheduler does to the stall workload by the native pass).
# Under emulation, with the default list, both passes also leave out:
# - the tests tagged reader-only, whose checks are of the reader's
#   userspace alone, the same on every kernel (the named triggers' unix
#   socket, the rate limit and disk budget, option parsing, two reader
#   threads taking a hotplugged CPU's ring); the host runs them;
# - on a PREEMPT_RT kernel, the file-clients tests in the native pass
#   too: the kernel version's non-RT build writes its recordings for
#   the same clients, and they take a third of the RT guest's time.
EMULATED_FALLBACK_RT=" 25-preempt-rt "
EMULATED_NO_FALLBACK=" 24-hotplug 25-preempt-rt 28-triggers "
passes=()
files=()
while [ $# -gt 0 ]; do
	case $1 in
	--pass) passes+=("${2:?--pass needs native or fallback}"); shift 2 ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) files+=("$1"); shift ;;
	esac
done
[ ${#passes[@]} -gt 0 ] || passes=(native fallback)
# whether the fallback pass is cut down for emulation (see above)
cut=""
if [ "${BTR_EMULATED:-}" = 1 ] && [ ${#files[@]} -eq 0 ]; then
	cut=nonrt
	[ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && cut=rt
fi
[ ${#files[@]} -gt 0 ] || files=("${FILES[@]}")

export BTR_BIN=$PWD/$OUT/bpftrace-rec BTR_TOOLS=$PWD/$OUT/tests
[ -x "$BTR_BIN" ] || { echo "run-tests: no $BTR_BIN (make all first)" >&2; exit 2; }

echo "# kernel $(uname -r), $(nproc) CPUs"
case $cut in
rt) echo "# emulated PREEMPT_RT kernel: no reader-only or file-clients tests; the fallback pass runs${EMULATED_FALLBACK_RT% } alone" ;;
nonrt) echo "# emulated: no reader-only tests; the fallback pass leaves out${EMULATED_NO_FALLBACK% } and file-clients tests" ;;
esac
# what the recorder takes on this kernel, as -v says it
tmp=$(mktemp -d)
"$BTR_BIN" -v --callstacks -d 0.2 -o "$tmp/t.pb" 2>&1 |
	sed -n 's/^bpftrace-rec: \(debug: \)\{0,1\}\(kernel: .*\)/# \2/p; s/^bpftrace-rec: \(warning: .*\)/# \1/p'
rm -rf "$tmp"
rc=0
for pass in "${passes[@]}"; do
	case $pass in
	native) fb= ;;
	fallback) fb=all ;;
	*) echo "run-tests: unknown pass $pass" >&2; exit 64 ;;
	esac
	for f in "${files[@]}"; do
		filter=()
		[ "${BTR_EMULATED:-}" = 1 ] && [ "$f" = 21-synth-rings ] &&
			filter=(-f "$SYNTH_EMULATED")
		if [ -n "$fb" ]; then
			[[ $NO_FALLBACK == *" $f "* ]] && continue
			[ "$cut" = rt ] && [[ $EMULATED_FALLBACK_RT != *" $f "* ]] && continue
			[ "$cut" = nonrt ] && [[ $EMULATED_NO_FALLBACK == *" $f "* ]] && continue
		fi
		# the emulated cuts by tag (above): reader-only always,
		# file-clients in the fallback pass and on PREEMPT_RT
		if [ -n "$cut" ]; then
			tags='!reader-only'
			if [ -n "$fb" ] || [ "$cut" = rt ]; then
				tags+=',!file-clients'
			fi
			filter+=(--filter-tags "$tags")
		fi
		echo "# pass $pass file $f"
		t0=$SECONDS
		BTR_FALLBACK=$fb bats --tap --timing "${filter[@]}" "tests/cli/$f.bats" || rc=1
		echo "# pass $pass file $f took $((SECONDS - t0)) s"
	done
done
exit $rc
