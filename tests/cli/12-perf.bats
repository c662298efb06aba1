#!/usr/bin/env bats
# bpftrace-rec sync with `perf script` text: detected by content, its
# timestamps (MONOTONIC, or --perf-clock) converted through the clock graph,
# samples written as PerfSample packets with interned callstacks on their
# own sequence; malformed input counted and skipped. The fixtures are real
# perf output (tests/fixtures/perf/README.md).

load helpers

FIX=$(cd "$(dirname "$BATS_TEST_FILENAME")/../fixtures/perf" && pwd)

gen() {
	"$TOOLS/gentrace" -o "$TMP/$1" || fail "gentrace failed"
}

# perf_samples FILE: the perf_sample lines of a dump, "TS CPU tid=N".
perf_samples() {
	"$BTR" dump "$1" | awk '$3 == "perf_sample" { print $1, $2, $5 }'
}

@test "the fixtures sync with their sample counts" {
	for f in callchain:403 callchain_fields:403 callchain_ns:403 flat:406 flat_fields:406; do
		name=${f%:*} want=${f#*:}
		run "$BTR" sync -o "$TMP/$name.pb" "$FIX/$name.txt"
		[ "$status" -eq 0 ]
		echo "$output"
		[[ "$output" == *"$name.txt: $want perf samples read, $want written"* ]]
		[[ "$output" != *warning* ]]
		[ "$("$BTR" dump "$TMP/$name.pb" | grep -c ' perf_sample ')" -eq "$want" ]
		# alone, perf text claims MONOTONIC: the times are perf's own
		[ "$("$BTR" dump "$TMP/$name.pb" | tail -1)" = "- - sync_info trace_clock=MONOTONIC" ]
		protoc_decode "$TMP/$name.pb"
		[ "$(grep -c '^  perf_sample {' "$TMP/decoded.txt")" -eq "$want" ]
	done
	# exact times: --ns prints 9 decimals, the others 6
	[ "$(perf_samples "$TMP/callchain_ns.pb" | head -1)" = "2354561658672 0 tid=24866" ]
	[ "$(perf_samples "$TMP/callchain.pb" | head -1)" = "2354561658000 0 tid=24866" ]
	# no cpu in the -F comm,tid,... output
	[ "$(perf_samples "$TMP/flat_fields.pb" | head -1 | cut -d' ' -f2)" = "-" ]
}

@test "samples carry interned callstacks on a sequence of their own" {
	gen trace.pb <<-'EOF'
	snapshot seq=1 BOOTTIME:3000000000000 MONOTONIC:2000000000000
	packet seq=2 ts=3354000000000 field=1000
	EOF
	"$BTR" sync -q -o "$TMP/out.pb" "$TMP/trace.pb" "$FIX/callchain.txt"
	protoc_decode "$TMP/out.pb"
	# the samples' sequence: not the trace's; its first packet clears
	# the incremental state, the others need it
	awk '/^packet {/ { p++; s = ""; f = ""; ps = 0 } /^  trusted_packet_sequence_id:/ { s = $2 }
	     /^  sequence_flags:/ { f = $2 } /^  perf_sample {/ { ps = 1 }
	     /^}/ { if (ps) print s, f }' "$TMP/decoded.txt" >"$TMP/seqs"
	[ "$(sort -u "$TMP/seqs" | awk '{ print $1 }' | sort -u | wc -l)" -eq 1 ]
	[ "$(head -1 "$TMP/seqs")" = "3 1" ]
	[ "$(tail -n +2 "$TMP/seqs" | sort -u)" = "3 2" ]
	grep -q '^    function_names {' "$TMP/decoded.txt"
	grep -q '^    mapping_paths {' "$TMP/decoded.txt"
	grep -q '^    frames {' "$TMP/decoded.txt"
	grep -q '^    callstacks {' "$TMP/decoded.txt"
	grep -q 'str: "operator+"' "$TMP/decoded.txt"
	# with a trace on the machine, its names win: perf adds no ProcessTree
	! grep -q 'process_tree' "$TMP/decoded.txt" || false
	"$BTR" sync -q -o "$TMP/alone.pb" "$FIX/callchain.txt"
	"$BTR" dump "$TMP/alone.pb" | grep -q '^[0-9]* - thread tid=24866 tgid=24866 name=busy$'
}

@test "perf times are MONOTONIC converted through the trace's snapshots; --perf-clock" {
	gen trace.pb <<-'EOF'
	snapshot seq=1 BOOTTIME:3000000000000 MONOTONIC:2000000000000
	packet seq=2 ts=3354000000000 field=1000
	EOF
	run "$BTR" sync -o "$TMP/out.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"403 perf samples written to $TMP/out.pb on BOOTTIME"* ]]
	# 2354.561658672 MONOTONIC is BOOTTIME + 1000 s
	[ "$(perf_samples "$TMP/out.pb" | head -1)" = "3354561658672 0 tid=24866" ]
	# sorted with the trace's packets
	times_sorted "$TMP/out.pb"
	# recorded with perf record -k boottime: no conversion
	"$BTR" sync -q --perf-clock BOOTTIME -o "$TMP/boot.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	[ "$(perf_samples "$TMP/boot.pb" | head -1)" = "2354561658672 0 tid=24866" ]
	# a clock the trace does not relate: dropped, counted, warned
	run "$BTR" sync --perf-clock MONOTONIC_RAW -o "$TMP/raw.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"403 perf samples dropped"* ]]
	[[ "$output" == *"its MONOTONIC_RAW has no relation to the trace clock"* ]]
	[[ "$output" == *"clock_sync_unrelatable_clock_domains: 1"* ]]
	run "$BTR" sync --strict --perf-clock MONOTONIC_RAW -o "$TMP/raw.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	[ "$status" -eq 3 ]
}

@test "perf text on another machine follows the merge rules" {
	gen trace.pb <<-'EOF'
	sysinfo name=host
	snapshot seq=1 BOOTTIME:3000000000000 MONOTONIC:2000000000000
	packet seq=2 ts=3354000000000 field=1000
	EOF
	cat >"$TMP/m.json" <<-EOF
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "trace.pb"},
	  {"path": "callchain_ns.txt", "machine": {"name": "box"}}]}}
	EOF
	# MONOTONIC of box relates to nothing: its samples are dropped
	run "$BTR" sync --manifest "$TMP/m.json" -o "$TMP/o.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"callchain_ns.txt (box): its MONOTONIC has no relation to the trace clock (BOOTTIME of host)"* ]]
	[ "$("$BTR" dump "$TMP/o.pb" | grep -c perf_sample)" -eq 0 ]
	# with a relation it is placed, on its own machine, named
	cat >"$TMP/m2.json" <<-EOF
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "trace.pb"},
	  {"path": "callchain_ns.txt", "machine": {"name": "box"},
	   "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "trace.pb", "clock": "BOOTTIME"},
	              "offset_ns": 7}}]}}
	EOF
	"$BTR" sync -q --manifest "$TMP/m2.json" -o "$TMP/o2.pb" "$TMP/trace.pb" "$FIX/callchain_ns.txt"
	"$BTR" dump "$TMP/o2.pb" | grep -q '^2354561658679 0 perf_sample machine_id=1 pid=24866 tid=24866 '
	"$BTR" dump "$TMP/o2.pb" | grep -q '^- - system_info machine_id=1 .*machine_name=box$'
	# and in an archive
	"$TOOLS/mkarchive" -f zip -o "$TMP/all.zip" trace.pb="$TMP/trace.pb" \
		callchain_ns.txt="$FIX/callchain_ns.txt" perfetto_manifest.json="$TMP/m2.json"
	"$BTR" sync -q -o "$TMP/zip.pb" "$TMP/all.zip"
	cmp "$TMP/o2.pb" "$TMP/zip.pb"
}

@test "malformed perf text is counted and skipped, never a crash" {
	{
		sed -n 1,20p "$FIX/callchain.txt"       # 3 good samples
		echo "garbage line here"
		echo
		echo "busy 123 [000] no time: 1 cpu-clock:"
		printf '\tffffffff81 foo+0x1 ([kernel\n\n'
		echo "busy 123 [000] 2354.600000: 1 cpu-clock:"
		printf '\tffffffff81 foo+0x1 ([kernel\n\n'   # a truncated frame
		head -c 10485760 /dev/zero | tr '\0' 'x'
		echo
		printf 'busy 123 [000] 2354.700000: 1 cpu-clock:\n\t1234 f\xff\xfe (x)\n\n'
		printf 'busy 125 [000] 2354.750000: 1 cpu-clock:\n\n'   # no frames
		printf 'busy 123 [001] 2354.800000: 1 cpu-clock:\r\n\t1234 good+0x1 (/bin/x)\r\n\r\n\r\n\r\n'
		printf 'busy 124 2354.900000: 1 cpu-clock:\n\t1234 last (/bin/x)'
	} >"$TMP/bad.txt"
	run "$BTR" sync -o "$TMP/bad.pb" "$TMP/bad.txt"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" == *"bad.txt: 5 perf samples read, 5 written"* ]]
	[[ "$output" == *"perf_text_importer_malformed_sample: "* ]]
	[[ "$output" == *"perf_text_importer_malformed_frame: "* ]]
	[[ "$output" == *"perf_text_importer_line_too_long: 1"* ]]
	[[ "$output" == *"perf_text_importer_line_not_text: 1"* ]]
	[[ "$output" == *"perf_text_importer_sample_no_frames: 1"* ]]
	diff -u - <(perf_samples "$TMP/bad.pb" | tail -2) <<-'EOF'
	2354800000000 1 tid=123
	2354900000000 - tid=124
	EOF
	# the counts are in the trailer: stats shows them
	[ "$(stat_value "$TMP/bad.pb" perf_text_importer_line_too_long)" -eq 1 ]
	[ "$(stat_value "$TMP/bad.pb" perf_text_importer_sample_no_frames)" -eq 1 ]
	protoc_decode "$TMP/bad.pb"
	# text that is no perf header at all is no input format
	printf 'garbage\n' >"$TMP/g.txt"
	run "$BTR" sync -o "$TMP/g.pb" "$TMP/g.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"g.txt: not a Perfetto trace"* ]]
	# from standard input
	"$BTR" sync -q -o "$TMP/stdin.pb" - <"$FIX/flat.txt"
	[ "$("$BTR" dump "$TMP/stdin.pb" | grep -c perf_sample)" -eq 406 ]
}

@test "a busy loop's perf samples fall inside its running slices" {
	need_root
	command -v perf >/dev/null || fail "perf is needed (linux-perf)"
	# perf record -k mono: perf's times on MONOTONIC, as sync takes them.
	# The loop runs SCHED_FIFO (for 0.5 s, below the RT throttling budget)
	# and sleeps 1 ms every 10 ms: its slices end where it chooses.
	"$BTR" -q -o "$TMP/trace.pb" -- perf record -q -k mono -g --sample-cpu -F 999 \
		-o "$TMP/perf.data" -- chrt -f 10 "$TOOLS/busyloop" 0.5 >"$TMP/busy.out" \
		2>"$TMP/perf.err" || fail "record failed: $(cat "$TMP/perf.err")"
	tid=$(cut -d' ' -f1 "$TMP/busy.out")
	perf script -i "$TMP/perf.data" >"$TMP/perf.txt" 2>/dev/null
	[ "$(awk -v t="$tid" '$1 == "btr-busyloop" && $2 == t' "$TMP/perf.txt" | wc -l)" -gt 20 ]
	run "$BTR" sync -o "$TMP/out.pb" "$TMP/trace.pb" "$TMP/perf.txt"
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$output" != *"dropped"* ]]
	"$BTR" dump "$TMP/out.pb" >"$TMP/dump.txt"
	# in time order: which task each CPU runs (sched_switch next_pid),
	# and where each sample of the busy loop's thread lands. A sample in
	# a slice of another task is held until that slice ends: if the
	# switch ending it names another prev_pid, the kernel did not report
	# a switch inside the slice (this VM's kernel hides its agent's
	# threads, pid 1's, from tracepoints: switches from them never fire,
	# in ftrace either) and where the loop started is unknown; otherwise
	# the sample is misplaced.
	grep -v '^- ' "$TMP/dump.txt" | sort -s -n -k1,1 | awk -v tid="$tid" '
		$3 == "sched_switch" {
			c = $2; prev = ""
			for (i = 4; i <= NF; i++) {
				if ($i ~ /^prev_pid=/) prev = substr($i, 10)
				if ($i ~ /^next_pid=/) nxt = substr($i, 10)
			}
			if ((c in run) && prev != "?" && prev != run[c]) {
				unknown += held[c]; gaps++
			} else if (held[c]) {
				printf "%s", why[c]; bad += held[c]
			}
			held[c] = 0; why[c] = ""
			run[c] = nxt; since[c] = $1
			slices += nxt == tid
		}
		$3 == "perf_sample" && $0 ~ " tid=" tid " " {
			n++
			if (!($2 in run)) { printf "sample at %s on cpu %s before any switch\n", $1, $2; bad++ }
			else if (run[$2] != tid) {
				held[$2]++
				why[$2] = why[$2] sprintf("sample at %s on cpu %s in a slice of %s (since %s)\n", $1, $2, run[$2], since[$2])
			}
		}
		END {
			for (c in held) if (held[c]) { printf "%s", why[c]; bad += held[c] }
			printf "%d samples of %s in %d slices: %d misplaced, %d in %d unreported switches\n", n, tid, slices, bad, unknown, gaps
			exit !(n > 20 && slices > 10 && bad == 0 && unknown * 4 < n)
		}'
}
