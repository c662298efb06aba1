#!/usr/bin/env bats
# Hostile input for the commands that read traces (dump, stats, sync):
# every case ends within 20 s and 1 GiB, with exit status 1 and a message
# naming the file and the offset (or exit 0 where the input is a valid
# trace), never with a crash, a timeout or a sanitizer report. Inputs are
# made on the fly with perl (perl-base is in every Debian system), so none
# is stored but the fuzzers' regressions (tests/fuzz/regressions/), which
# are replayed through every command at the end.
#
# sync also reads perf script text, archives and perfetto_manifest JSON:
# a 1 GB line and a sync_to cycle are tried through it.

# Perl code is in single quotes, commands in $cmd are split on purpose, and
# bounded keeps stderr while dropping stdout (2>&1 >/dev/null):
# shellcheck disable=SC2016,SC2069,SC2086

load helpers

REGRESSIONS=$(cd "$(dirname "$BATS_TEST_FILENAME")/../fuzz/regressions" && pwd)

# ASan reserves terabytes of address space, so a sanitized build gets an
# RSS limit from ASan itself instead of ulimit -v.
if grep -qa __asan_init "$BTR"; then
	SANITIZED=1
fi

# Each command that reads FILE (the last argument is added by the caller).
readers() {
	printf '%s\n' "dump" "dump --raw-timestamps --json" "stats" \
		"sync -q -o $TMP/out.pb"
}

# bounded CMD ARGS...: runs "$BTR" CMD ARGS... in 20 s and 1 GiB into
# $status and $output (stderr only: stdout goes to /dev/null).
bounded() {
	if [ -n "${SANITIZED:-}" ]; then
		run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:hard_rss_limit_mb=2048" \
			timeout 20 "$BTR" "$@" 2>&1 >/dev/null
	else
		run bash -c 'ulimit -v 1048576 && exec timeout 20 "$@" 2>&1 >/dev/null' \
			bounded "$BTR" "$@"
	fi
}

# The first lines of $output (a sanitizer report goes on for pages).
head_output() {
	head -n 4 <<<"$output"
}

# No crash, timeout or sanitizer report: the status is 0, 1 or 64 (sync's
# manifest errors).
not_crashed() {
	[ "$status" -ne 124 ] || fail "$*: timed out after 20 s"
	[ "$status" -lt 128 ] ||
		fail "$*: killed by signal $((status - 128)): $(head_output)"
	[[ "$output" != *Sanitizer* && "$output" != *"runtime error"* ]] ||
		fail "$*: sanitizer report: $(head_output)"
	[ "$status" -le 1 ] || [ "$status" -eq 64 ] ||
		fail "$*: exit status $status: $(head_output)"
}

# fails_cleanly FILE TEXT CMD...: exit 1 and a message naming FILE and
# holding TEXT (e.g. "offset 4: ...").
fails_cleanly() {
	local file=$1 text=$2
	shift 2
	not_crashed "$@"
	[ "$status" -eq 1 ] ||
		fail "$*: exit status $status, expected 1: $(head_output)"
	[[ "$output" == *"$file"* ]] ||
		fail "$*: message does not name $file: $(head_output)"
	[[ "$output" == *"$text"* ]] ||
		fail "$*: message lacks '$text': $(head_output)"
}

# every_reader_fails FILE TEXT: fails_cleanly for each command.
every_reader_fails() {
	local cmd
	while read -r cmd; do
		bounded $cmd "$1"
		fails_cleanly "$1" "$2" $cmd
	done < <(readers)
}

# Perl helpers: vi(N) is N as a varint; pkt(BYTES) frames BYTES as a Trace
# record (field 1); SEQ is a first, valid packet of 4 bytes
# {trusted_packet_sequence_id: 1}, so that errors are at offset 4.
PERL_LIB='
sub vi { my $v = shift; my $o = ""; while ($v >= 0x80) { $o .= chr(($v & 0x7f) | 0x80); $v >>= 7; } $o . chr($v) }
sub pkt { "\x0a" . vi(length $_[0]) . $_[0] }
$SEQ = pkt("\x50\x01");
binmode STDOUT;
'
gen() {
	perl -e "$PERL_LIB"'; '"$1" "${@:2}"
}

@test "a record length varint of 2^63 is refused at its offset" {
	gen 'print $SEQ, "\x0a", vi(2**63)' >"$TMP/len63.pb"
	every_reader_fails "$TMP/len63.pb" \
		"offset 4: record length 9223372036854775808 exceeds the limit"
}

@test "a length varint of 2^63 inside a packet is refused at its offset" {
	gen 'print $SEQ, pkt("\x32" . vi(2**63))' >"$TMP/inner63.pb"
	every_reader_fails "$TMP/inner63.pb" "offset 4: "
}

@test "a length varint of 11 bytes is refused at its offset" {
	gen 'print $SEQ, "\x0a", "\xff" x 10, "\x01"' >"$TMP/len11.pb"
	every_reader_fails "$TMP/len11.pb" \
		"offset 4: length varint longer than 10 bytes"
}

@test "100000 levels of nested messages fail cleanly or pass through" {
	gen 'my $m = ""; $m = "\x0a" . vi(length $m) . $m for 1 .. 100000;
	     print $SEQ, pkt($m)' >"$TMP/nested.pb"
	# dump and stats decode the packet: field 1 of an FtraceEventBundle
	# (cpu) is no message, so it does not decode.
	for cmd in "dump" "dump --raw-timestamps" "stats"; do
		bounded $cmd "$TMP/nested.pb"
		fails_cleanly "$TMP/nested.pb" "offset 4: cannot decode the TracePacket" $cmd
	done
	# sync rewrites at the wire level and copies what it does not change.
	bounded sync -q -o "$TMP/out.pb" "$TMP/nested.pb"
	not_crashed sync
}

@test "a ClockSnapshot with 2 million clocks fails with the file and offset" {
	gen 'my $s = ""; for my $i (0 .. 1999999) {
		my $c = "\x08" . vi(1000 + $i) . "\x10" . vi(1000000 + $i);
		$s .= "\x0a" . vi(length $c) . $c }
	     print $SEQ, pkt("\x32" . vi(length $s) . $s)' >"$TMP/clocks.pb"
	bounded dump "$TMP/clocks.pb"
	fails_cleanly "$TMP/clocks.pb" "offset 4: " dump
	bounded sync -q -o "$TMP/out.pb" "$TMP/clocks.pb"
	fails_cleanly "$TMP/clocks.pb" "offset 4: " sync
	# Printed as stored, or counted: no clock graph, a valid result.
	bounded dump --raw-timestamps "$TMP/clocks.pb"
	not_crashed dump --raw-timestamps
	bounded stats "$TMP/clocks.pb"
	not_crashed stats
}

@test "a ClockSnapshot with 5000 clocks is refused at once, at its offset" {
	gen 'my $s = ""; for my $i (0 .. 4999) {
		my $c = "\x08" . vi(1000 + $i) . "\x10" . vi(1000000 + $i);
		$s .= "\x0a" . vi(length $c) . $c }
	     print $SEQ, pkt("\x32" . vi(length $s) . $s)' >"$TMP/clocks.pb"
	# at most 128 clocks a snapshot (dump converts to the trace clock too)
	bounded dump "$TMP/clocks.pb"
	fails_cleanly "$TMP/clocks.pb" "offset 4: clock_snapshot with more than 128 clocks" dump
	bounded sync -q -o "$TMP/out.pb" "$TMP/clocks.pb"
	fails_cleanly "$TMP/clocks.pb" "offset 4: clock_snapshot with more than 128 clocks" sync
}

@test "compressed_packets that inflate past 256 MiB are refused" {
	head -c 300M /dev/zero | gzip -9 |
		gen 'local $/; binmode STDIN; my $z = <STDIN>;
		     print $SEQ, pkt("\x50\x01\x92\x03" . vi(length $z) . $z)' \
		>"$TMP/bomb.pb"
	for cmd in "dump" "sync -q -o $TMP/out.pb"; do
		bounded $cmd "$TMP/bomb.pb"
		fails_cleanly "$TMP/bomb.pb" \
			"offset 4: compressed_packets inflate to more than" $cmd
	done
}

@test "a 1 GB single line of perf script text stays within 1 GiB" {
	# A sample, then a line of 1 GiB (a sparse file: no disk), then
	# another sample: the long line is counted, or the import fails
	# naming the line.
	printf 'busy 1 [000] 1.5: \n\t1 f (d)\n\nbusy 1 [000] 1.6: \n' \
		>"$TMP/perf.txt"
	truncate -s +1G "$TMP/perf.txt"
	printf '\n\t2 g (e)\n\nbusy 1 [000] 1.7: \n\t3 h (i)\n' >>"$TMP/perf.txt"
	bounded sync -o "$TMP/out.pb" "$TMP/perf.txt"
	not_crashed sync
	if [ "$status" -eq 0 ]; then
		[[ "$output" == *line_too_long* ]] ||
			fail "the long line is not counted: $(head_output)"
	else
		[[ "$output" == *"$TMP/perf.txt"*"line "* ]] ||
			fail "sync failed without naming the line: $(head_output)"
	fi
}

@test "a manifest with a sync_to cycle is refused, naming the manifest" {
	gen 'print $SEQ' >"$TMP/a.pb"
	gen 'print $SEQ' >"$TMP/b.pb"
	cat >"$TMP/perfetto_manifest.json" <<-'EOF'
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "a.pb", "clocks": {"sync_to": {"file": "b.pb"}}},
	  {"path": "b.pb", "clocks": {"sync_to": {"file": "a.pb"}}}]}}
	EOF
	tar -C "$TMP" -cf "$TMP/traces.tar" a.pb b.pb perfetto_manifest.json
	cd "$TMP"
	local args
	for args in "--manifest perfetto_manifest.json a.pb b.pb" \
		"perfetto_manifest.json a.pb b.pb" "traces.tar"; do
		bounded sync -o out.pb $args
		not_crashed sync $args
		# A manifest error is a usage error (64) for sync.
		[ "$status" -eq 64 ] || [ "$status" -eq 1 ] ||
			fail "sync $args: exit status $status: $(head_output)"
		[[ "$output" == *perfetto_manifest.json*cycle* ]] ||
			fail "sync $args: no cycle message: $(head_output)"
	done
}

@test "random bytes are refused with the file and offset" {
	local seed
	for seed in 1 2 3 4 5; do
		gen 'srand($ARGV[0]); print map { chr(int(rand(256))) } 1 .. 65536' \
			"$seed" >"$TMP/random$seed.bin"
		every_reader_fails "$TMP/random$seed.bin" "offset "
	done
}

@test "a corrupt gzip stream is refused with the file and offset" {
	gen 'print $SEQ x 1000' | gzip -c >"$TMP/t.pb.gz"
	# Flip bytes in the middle of the deflate data.
	printf '\xde\xad\xbe\xef' |
		dd of="$TMP/t.pb.gz" bs=1 seek=30 conv=notrunc 2>/dev/null
	every_reader_fails "$TMP/t.pb.gz" "offset "
}

@test "an empty file is refused as not a trace, named with offset 0" {
	: >"$TMP/empty.pb"
	every_reader_fails "$TMP/empty.pb" "offset 0: empty file, not a trace"
	# an empty gzip stream holds no packets either
	gzip -c </dev/null >"$TMP/empty.pb.gz"
	every_reader_fails "$TMP/empty.pb.gz" "offset 0: empty file, not a trace"
}

@test "a directory given as FILE is refused" {
	mkdir "$TMP/dir.pb"
	every_reader_fails "$TMP/dir.pb" "Is a directory"
}

@test "a file that is not readable is refused" {
	gen 'print $SEQ' >"$TMP/locked.pb"
	chmod 000 "$TMP/locked.pb"
	local cmd
	while read -r cmd; do
		if [ "$(id -u)" = 0 ]; then
			# root reads anything: read as nobody.
			run_as_nobody -- timeout 20 "$BTR" $cmd "$TMP/locked.pb"
		else
				bounded $cmd "$TMP/locked.pb"
		fi
		fails_cleanly "$TMP/locked.pb" "Permission denied" $cmd
	done < <(readers)
}

@test "a read error is reported with the file" {
	# Reading /proc/self/mem at offset 0 fails with EIO.
	every_reader_fails /proc/self/mem "offset 0: read error: Input/output error"
}

@test "every fuzzer regression input is read without a crash" {
	local f cmd n=0
	for f in "$REGRESSIONS"/*/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		while read -r cmd; do
				bounded $cmd "$f"
			not_crashed "$cmd ${f#"$REGRESSIONS"/}"
		done < <(readers)
	done
	[ "$n" -gt 0 ] || fail "no regression input under $REGRESSIONS"
}
