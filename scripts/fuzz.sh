#!/bin/sh
# Runs the libFuzzer targets (tests/fuzz/fuzz_*.c) that `make fuzz-build`
# built into $FUZZ_OUT; called by make (fuzz, fuzz-regress, fuzz-coverage),
# which sets the variables below. See tests/fuzz/README.md.
#   scripts/fuzz.sh run       each target for $FUZZ_SECONDS on a copy of its
#                             seeds ($FUZZ_OUT/corpus/T, grown by the run);
#                             stops at the first crash (input in
#                             $FUZZ_OUT/crashes/)
#   scripts/fuzz.sh regress   the seeds and tests/fuzz/regressions/ once
#                             through every target
#   scripts/fuzz.sh coverage  line coverage of $FUZZ_COV_DIRS (under
#                             userspace/) by the corpora, with the binaries
#                             built for coverage in $FUZZ_COV_OUT
set -eu

: "${FUZZ_OUT:?}" "${FUZZ_TARGETS:?}"
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_ARGS=${FUZZ_ARGS:-}

run() {
	for t in $FUZZ_TARGETS; do
		c=$FUZZ_OUT/corpus/$t log=$FUZZ_OUT/$t.log
		mkdir -p "$c" "$FUZZ_OUT/crashes"
		cp tests/fuzz/corpus/"$t"/* "$c"/
		dict=
		[ ! -f "tests/fuzz/$t.dict" ] || dict=-dict=tests/fuzz/$t.dict
		echo "== $t: ${FUZZ_SECONDS}s, log in $log"
		# shellcheck disable=SC2086
		if ! "$FUZZ_OUT/$t" -max_total_time="$FUZZ_SECONDS" -timeout=20 \
			-rss_limit_mb=2048 -print_final_stats=1 $dict \
			-artifact_prefix="$FUZZ_OUT/crashes/$t-" $FUZZ_ARGS \
			"$c" >"$log" 2>&1; then
			tail -n 60 "$log"
			echo "fuzz: $t failed; input in $FUZZ_OUT/crashes/" >&2
			exit 1
		fi
		grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units' "$log"
	done
}

regress() {
	for t in $FUZZ_TARGETS; do
		files=$(find "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" \
			-type f 2>/dev/null | sort)
		echo "== $t: $(echo "$files" | grep -c .) inputs"
		[ -n "$files" ] || continue
		# shellcheck disable=SC2086
		"$FUZZ_OUT/$t" -runs=1 $files >"$FUZZ_OUT/$t.regress.log" 2>&1 ||
			{ tail -n 60 "$FUZZ_OUT/$t.regress.log"; exit 1; }
	done
}

coverage() {
	: "${FUZZ_COV_OUT:?}" "${FUZZ_COV_DIRS:?}"
	d=$FUZZ_COV_OUT objs= dirs=
	rm -f "$d"/*.profraw
	for t in $FUZZ_TARGETS; do
		c=$FUZZ_OUT/corpus/$t
		[ -d "$c" ] || c=tests/fuzz/corpus/$t
		r=
		[ ! -d "tests/fuzz/regressions/$t" ] || r=tests/fuzz/regressions/$t
		# shellcheck disable=SC2086
		LLVM_PROFILE_FILE=$d/$t.profraw "$d/$t" -runs=0 "$c" $r \
			>"$d/$t.log" 2>&1 || { tail -n 20 "$d/$t.log"; exit 1; }
		objs="${objs:+$objs -object }$d/$t"
	done
	for x in $FUZZ_COV_DIRS; do dirs="$dirs $PWD/userspace/$x"; done
	"${LLVM_PROFDATA:-llvm-profdata}" merge -sparse -o "$d/fuzz.profdata" "$d"/*.profraw
	# shellcheck disable=SC2086
	"${LLVM_COV:-llvm-cov}" report -instr-profile="$d/fuzz.profdata" $objs $dirs
}

case ${1:-} in
run | regress | coverage) "$1" ;;
*) echo "usage: scripts/fuzz.sh run|regress|coverage" >&2; exit 64 ;;
esac
