#!/usr/bin/env bash
# Benchmark of `bpftrace-rec sync` (issue 4):
#   1. timestamp conversions per second of the clock graph (bench_clock);
#   2. timestamps rewritten per second by the wire-level packet rewriting,
#      bundles copied (trace clock BOOTTIME) and converted (MONOTONIC)
#      (bench_sync rewrite);
#   3. the sync of a generated recorder-like trace of SIZE bytes (default
#      1G; QUICK=1: 100M): wall time and peak resident memory, with the
#      default memory limit (256M), onto MONOTONIC (every event converted)
#      and with --memory-limit 64M; the outputs of the default and limited
#      runs must be identical.
#
#   scripts/bench-sync.sh [SIZE]
#
# BTR_BIN_ALT=path adds another build of bpftrace-rec (e.g. before a
# change): every sync case runs with both, round by round, as case NAME and
# alt_NAME, and the two must write the same bytes; BTR_TOOLS_ALT likewise
# runs the alternative bench_clock and bench_sync beside ours.
#
# Environment: OUT (build folder, default build), BTR_BIN, BTR_TOOLS,
# ROUNDS (runs of each sync case, the fastest kept; default 2),
# TMPDIR (scratch: about three times SIZE), KEEP=1 keeps the scratch
# folder, QUICK=1. Needs /usr/bin/time (GNU time) for peak memory. Prints
# "bench_sync ..." lines and, last, one JSON line with every result.
set -euo pipefail
export LC_ALL=C

die() {
	printf 'bench-sync: error: %s\n' "$*" >&2
	exit 1
}

TOP=$(cd "$(dirname "$0")/.." && pwd)
MAKE_OUT=${OUT:-build}
case $MAKE_OUT in /*) OUT=$MAKE_OUT ;; *) OUT=$TOP/$MAKE_OUT ;; esac
QUICK=${QUICK:-0}
SIZE=${1:-$([ "$QUICK" = 1 ] && echo 100M || echo 1G)}
BIN=${BTR_BIN:-$OUT/bpftrace-rec}
TOOLS=${BTR_TOOLS:-$OUT/tests}
BIN_ALT=${BTR_BIN_ALT:-}
TOOLS_ALT=${BTR_TOOLS_ALT:-}
[ -z "$BIN_ALT" ] || [ -x "$BIN_ALT" ] || die "BTR_BIN_ALT=$BIN_ALT is not an executable"
[ -z "$TOOLS_ALT" ] || [ -x "$TOOLS_ALT/bench_sync" ] || die "BTR_TOOLS_ALT=$TOOLS_ALT has no bench_sync"

[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed for peak memory"
if [ ! -x "$BIN" ] || [ ! -x "$TOOLS/bench_sync" ] || [ ! -x "$TOOLS/bench_clock" ]; then
	make -C "$TOP" --no-print-directory OUT="$MAKE_OUT" all >&2 || die "build failed"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-sync.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
	echo "bench-sync: scratch kept in $WORK" >&2
else
	trap 'rm -rf "$WORK"' EXIT
fi

# key=value of a "bench_* case=... key=value" line
field() {
	awk -v c="$2" -v k="$3" '$0 ~ "case=" c " " { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"
}

echo "== 1. clock graph: conversions per second" >&2
"$TOOLS/bench_clock" | tee "$WORK/clock.txt"
[ -z "$TOOLS_ALT" ] || "$TOOLS_ALT/bench_clock" | sed 's/^/alt: /' | tee "$WORK/clock-alt.txt"
echo "== 2. packet rewriting: timestamps per second" >&2
"$TOOLS/bench_sync" rewrite -n 2000 | tee "$WORK/rewrite.txt"
[ -z "$TOOLS_ALT" ] || "$TOOLS_ALT/bench_sync" rewrite -n 2000 | sed 's/^/alt: /' | tee "$WORK/rewrite-alt.txt"

echo "== 3. sync of a generated $SIZE trace" >&2
"$TOOLS/bench_sync" gen "$SIZE" "$WORK/in.pb" | tee "$WORK/gen.txt"
BYTES=$(stat -c %s "$WORK/in.pb")

RUNS=()
# Runs sync with the given options ROUNDS times (default 2) with each
# binary (ours, then the alternative), each run after flushing earlier
# writes so that their writeback does not count, and keeps each binary's
# fastest run; wall time includes sync's own fsync.
run_case() {
	local name=$1 r k
	shift
	local bins=("$BIN") names=("$name")
	[ -z "$BIN_ALT" ] || { bins+=("$BIN_ALT"); names+=("alt_$name"); }
	local -A wall user sys rss
	for r in $(seq "${ROUNDS:-2}"); do
		for k in "${!bins[@]}"; do
			local n=${names[$k]} w u s m
			sync
			/usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" \
				"${bins[$k]}" sync "$@" -o "$WORK/out-$n.pb" "$WORK/in.pb" 2>"$WORK/sync-$n.txt" ||
				die "sync $n failed: $(cat "$WORK/sync-$n.txt")"
			read -r w u s m <"$WORK/time.txt"
			if [ -z "${wall[$n]:-}" ] || awk -v a="$w" -v b="${wall[$n]}" 'BEGIN { exit !(a < b) }'; then
				wall[$n]=$w user[$n]=$u sys[$n]=$s rss[$n]=$m
			fi
		done
	done
	for n in "${names[@]}"; do
		local cpu mbs
		cpu=$(awk -v u="${user[$n]}" -v s="${sys[$n]}" 'BEGIN { printf "%.2f", u + s }')
		mbs=$(awk -v b="$BYTES" -v w="${wall[$n]}" 'BEGIN { printf "%.1f", (w > 0 ? b / 1048576 / w : 0) }')
		echo "bench_sync case=sync_$n bytes=$BYTES wall_s=${wall[$n]} cpu_s=$cpu peak_rss_kb=${rss[$n]} mib_per_s=$mbs"
		sed 's/^/  /' "$WORK/sync-$n.txt" >&2
		RUNS+=("{\"case\":\"$n\",\"args\":\"$*\",\"wall_s\":${wall[$n]},\"cpu_s\":$cpu,\"peak_rss_kb\":${rss[$n]},\"mib_per_s\":$mbs}")
	done
	if [ -n "$BIN_ALT" ]; then
		cmp -s "$WORK/out-$name.pb" "$WORK/out-alt_$name.pb" ||
			die "sync $name: the alternative binary wrote other bytes"
		rm -f "$WORK/out-alt_$name.pb"
	fi
}
run_case default
run_case monotonic --trace-clock MONOTONIC
rm -f "$WORK/out-monotonic.pb"
run_case limit64m --memory-limit 64M
cmp -s "$WORK/out-default.pb" "$WORK/out-limit64m.pb" ||
	die "the output with --memory-limit 64M differs from the default one"
PACKETS=$(sed -n 's/.* \([0-9]*\) packets read.*/\1/p' "$WORK/sync-default.txt")
TIMESTAMPS=$(sed -n 's/.*(\([0-9]*\) timestamps converted).*/\1/p' "$WORK/sync-default.txt")

printf '{"size_bytes":%s,"packets":%s,"timestamps":%s,' "$BYTES" "${PACKETS:-0}" "${TIMESTAMPS:-0}"
printf '"graph_conversions_per_s":{"seq_1hop":%s,"seq_3hop":%s,"random_1hop":%s},' \
	"$(field "$WORK/clock.txt" seq_1hop rate)" "$(field "$WORK/clock.txt" seq_3hop rate)" \
	"$(field "$WORK/clock.txt" random_1hop rate)"
printf '"rewrite_timestamps_per_s":{"identity":%s,"convert":%s},' \
	"$(field "$WORK/rewrite.txt" rewrite_identity rate)" "$(field "$WORK/rewrite.txt" rewrite_convert rate)"
printf '"sync":[%s]}\n' "$(IFS=,; echo "${RUNS[*]}")"
