# shellcheck shell=bash
# What the benchmark scripts share, sourced after setting BENCH (the
# script's name in its messages): die and log, TOP (the project's root)
# and OUT (the build folder, from the environment's OUT, default build).
die() {
	printf '%s: error: %s\n' "$BENCH" "$*" >&2
	exit 1
}
log() { printf '%s: %s\n' "$BENCH" "$*" >&2; }

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MAKE_OUT=${OUT:-build}
case $MAKE_OUT in /*) OUT=$MAKE_OUT ;; *) OUT=$TOP/$MAKE_OUT ;; esac

# Dies unless each of the files given is an executable (built by make).
need_built() {
	local f
	for f; do
		[ -x "$f" ] || die "$f is missing: build with make"
	done
}

# Dies unless each of the commands given is installed (make deps).
need_tools() {
	local t
	for t; do
		command -v "$t" >/dev/null || die "$t is missing: run make deps"
	done
}
