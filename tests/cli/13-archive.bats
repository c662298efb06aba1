#!/usr/bin/env bats
# bpftrace-rec sync and archives that extract to much more than they
# weigh: the members of all the archives of a run take at most
# --max-extract bytes (default 16 GiB) in $TMPDIR; beyond it, or when
# $TMPDIR is full, sync exits 1 naming the archive and the member, and
# leaves nothing in $TMPDIR. Each test extracts into a private $TMPDIR.
# Archives are built with tar/gzip and tests/tools/mkarchive.c, traces with
# tests/tools/gentrace.c.

load helpers

teardown() {
	if mountpoint -q "$TMP/small" 2>/dev/null; then
		umount "$TMP/small"
	fi
	rm -rf "$TMP"
}

# A trace $TMP/NAME of about SIZE bytes: a clock snapshot and a packet
# whose payload is SIZE bytes of 'a' (a few KiB once compressed).
big_trace() {
	{
		echo "snapshot seq=1 BOOTTIME:1000000 MONOTONIC:500000"
		printf 'packet seq=2 ts=1100000 field=1000 payload='
		head -c "$2" /dev/zero | tr '\0' a
		echo
	} | "$TOOLS/gentrace" -o "$TMP/$1" || fail "gentrace failed"
}

# sync_with DIR ARGS...: sync -q -o $TMP/out.pb ARGS... with TMPDIR=DIR,
# into $status and $output, which must hold no sanitizer report.
sync_with() {
	local dir=$1
	shift
	run env TMPDIR="$dir" timeout 60 "$BTR" sync -q -o "$TMP/out.pb" "$@"
	[[ "$output" != *Sanitizer* && "$output" != *"runtime error"* ]] ||
		fail "sanitizer report: $output"
}

# sync_with a private $TMP/tmp.
sync_in_tmp() {
	mkdir -p "$TMP/tmp"
	sync_with "$TMP/tmp" "$@"
}

# Nothing left behind: no output file, an empty $TMPDIR.
nothing_left() {
	[ ! -e "$TMP/out.pb" ] || fail "$TMP/out.pb was left behind"
	[ -z "$(ls -A "$1")" ] || fail "left in $1: $(ls -A "$1")"
}

@test "a small --max-extract refuses a tgz of zeros, naming archive and member" {
	big_trace a.pb 1000
	mkdir "$TMP/in"
	cp "$TMP/a.pb" "$TMP/in/a.pb"
	head -c 64M /dev/zero >"$TMP/in/zeros.pb"
	tar -C "$TMP/in" -czf "$TMP/bomb.tgz" a.pb zeros.pb
	[ "$(stat -c %s "$TMP/bomb.tgz")" -lt 1048576 ]
	sync_in_tmp --max-extract 1M "$TMP/bomb.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == "bpftrace-rec: error: $TMP/bomb.tgz: member zeros.pb: extracting more than 1 MiB (--max-extract, all archives together); raise it, or unpack the archive yourself" ]]
	nothing_left "$TMP/tmp"
	# the same in a zip (sizes from the central directory) and a tar
	"$TOOLS/mkarchive" -f zip -o "$TMP/bomb.zip" a.pb="$TMP/a.pb" zeros.pb="$TMP/in/zeros.pb"
	tar -C "$TMP/in" -cf "$TMP/bomb.tar" a.pb zeros.pb
	for f in bomb.zip bomb.tar; do
		sync_in_tmp --max-extract 1500K "$TMP/$f"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$TMP/$f: member zeros.pb: extracting more than 1500 KiB (--max-extract"* ]]
		nothing_left "$TMP/tmp"
	done
	# with room for the zeros, they are read: not a trace
	sync_in_tmp --max-extract 65M "$TMP/bomb.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/bomb.tgz:zeros.pb: offset 0: "* ]]
	nothing_left "$TMP/tmp"
}

@test "an archive passes with a cap of its size, fails one byte below" {
	big_trace big.pb 3000000
	local size
	size=$(stat -c %s "$TMP/big.pb")
	"$BTR" sync -q -o "$TMP/want.pb" "$TMP/big.pb"
	for f in tgz zip; do
		"$TOOLS/mkarchive" -f $f -o "$TMP/big.$f" big.pb="$TMP/big.pb"
		[ "$(stat -c %s "$TMP/big.$f")" -lt 100000 ]
		sync_in_tmp --max-extract "$size" "$TMP/big.$f"
		[ "$status" -eq 0 ]
		cmp "$TMP/want.pb" "$TMP/out.pb"
		rm "$TMP/out.pb"
		[ -z "$(ls -A "$TMP/tmp")" ]
		sync_in_tmp --max-extract $((size - 1)) "$TMP/big.$f"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$TMP/big.$f: member big.pb: extracting more than $((size - 1)) bytes (--max-extract"* ]]
		nothing_left "$TMP/tmp"
	done
	# the default is far above
	sync_in_tmp "$TMP/big.tgz"
	[ "$status" -eq 0 ]
	cmp "$TMP/want.pb" "$TMP/out.pb"
}

@test "the cap is for all archives together; the error names the last one" {
	big_trace one.pb 100000
	big_trace two.pb 100000
	local s1 s2
	s1=$(stat -c %s "$TMP/one.pb")
	s2=$(stat -c %s "$TMP/two.pb")
	"$TOOLS/mkarchive" -f tgz -o "$TMP/one.tgz" one.pb="$TMP/one.pb"
	"$TOOLS/mkarchive" -f zip -o "$TMP/two.zip" two.pb="$TMP/two.pb"
	sync_in_tmp --max-extract $((s1 + s2)) "$TMP/one.tgz" "$TMP/two.zip"
	[ "$status" -eq 0 ]
	rm "$TMP/out.pb"
	sync_in_tmp --max-extract $((s1 + s2 - 1)) "$TMP/one.tgz" "$TMP/two.zip"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/two.zip: member two.pb: extracting more than $((s1 + s2 - 1)) bytes (--max-extract, all archives together)"* ]]
	nothing_left "$TMP/tmp"
	# trace files given as such take nothing
	sync_in_tmp --max-extract "$s2" "$TMP/one.pb" "$TMP/two.zip"
	[ "$status" -eq 0 ]
}

@test "the default cap is 16 GiB: a sparse 17 GiB member is refused at once" {
	truncate -s 17G "$TMP/sparse.pb"
	tar -C "$TMP" --sparse -czf "$TMP/sparse.tgz" sparse.pb
	rm "$TMP/sparse.pb"
	[ "$(stat -c %s "$TMP/sparse.tgz")" -lt 10000 ]
	sync_in_tmp "$TMP/sparse.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/sparse.tgz: member sparse.pb: extracting more than 16 GiB (--max-extract, all archives together)"* ]]
	nothing_left "$TMP/tmp"
}

@test "holes of a sparse member count, but take no disk" {
	need_root
	truncate -s 1G "$TMP/sparse.pb"
	tar -C "$TMP" --sparse -czf "$TMP/sparse.tgz" sparse.pb
	rm "$TMP/sparse.pb"
	mkdir "$TMP/small"
	mount -t tmpfs -o size=1m tmpfs "$TMP/small"
	sync_with "$TMP/small" --max-extract 1023M "$TMP/sparse.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"sparse.tgz: member sparse.pb: extracting more than 1023 MiB"* ]]
	# 1 GiB fits the cap and, as a hole, the 1 MiB file system: its
	# zeros are read and refused as a trace
	sync_with "$TMP/small" --max-extract 1G "$TMP/sparse.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"sparse.tgz:sparse.pb: offset 0: "* ]]
	nothing_left "$TMP/small"
}

@test "a full TMPDIR: exit 1 naming archive, member and directory, nothing left" {
	need_root
	big_trace a.pb 1000
	head -c 4M /dev/zero >"$TMP/zeros.pb"
	"$TOOLS/mkarchive" -f tgz -o "$TMP/full.tgz" a.pb="$TMP/a.pb" zeros.pb="$TMP/zeros.pb"
	mkdir "$TMP/small"
	mount -t tmpfs -o size=256k tmpfs "$TMP/small"
	sync_with "$TMP/small" "$TMP/full.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == "bpftrace-rec: error: $TMP/full.tgz: member zeros.pb: writing into $TMP/small: No space left on device" ]]
	nothing_left "$TMP/small"
	[ "$(df --output=used -k "$TMP/small" | tail -1)" -eq 0 ]
	# no room for a temporary file at all
	sync_with "$TMP/nowhere" "$TMP/full.tgz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/full.tgz: member a.pb: cannot make a temporary file in $TMP/nowhere: No such file or directory"* ]]
	[ ! -e "$TMP/out.pb" ]
}

@test "--max-extract: usage errors exit 64, help and completion show it" {
	big_trace a.pb 1000
	local bad
	for bad in 1x -1 lots 99999999999G ""; do
		sync_in_tmp --max-extract "$bad" "$TMP/a.pb"
		[ "$status" -eq 64 ]
		[[ "$output" == *"invalid extraction limit '$bad'"* ]]
	done
	sync_in_tmp "$TMP/a.pb" --max-extract
	[ "$status" -eq 64 ]
	[ ! -e "$TMP/out.pb" ]
	# suffixes as for --memory-limit; 0 lets empty members only through
	: >"$TMP/empty.pb"
	"$TOOLS/mkarchive" -f tar -o "$TMP/e.tar" e.pb="$TMP/empty.pb" a.pb="$TMP/a.pb"
	sync_in_tmp --max-extract 0 "$TMP/e.tar"
	[ "$status" -eq 1 ]
	[[ "$output" == *"e.tar: member a.pb: extracting more than 0 bytes"* ]]
	"$TOOLS/mkarchive" -f tar -o "$TMP/a.tar" a.pb="$TMP/a.pb"
	sync_in_tmp --max-extract 2KiB "$TMP/a.tar"
	[ "$status" -eq 0 ]
	rm "$TMP/out.pb"
	sync_in_tmp --max-extract 1k "$TMP/a.tar"
	[ "$status" -eq 1 ]
	[[ "$output" == *"a.tar: member a.pb: extracting more than 1 KiB"* ]]
	run "$BTR" sync --help
	[[ "$output" == *"--max-extract=SIZE"*"(default 16G)"* ]]
	local top
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec sync --max-e); COMP_CWORD=2; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[ "$output" = "--max-extract" ]
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec sync --max-extract ''); COMP_CWORD=3; _bpftrace_rec; echo \${#COMPREPLY[*]}"
	[ "$output" = 0 ]
}
