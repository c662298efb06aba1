#!/usr/bin/env bats
# A simulated many-core host: synth_rings creates N BPF rings (as many as
# N online CPUs would get, sized by the memory budget), a test-only BPF
# program (tests/synth/synth.bpf.c) run with BPF_PROG_TEST_RUN writes
# synthetic switch records into chosen rings, and the recorder's readers
# (record/rings.c, record/readers.c: one, or several threads) drain them
# into its encoders and central buffer.

load helpers

synth() {
	need_root
	run "$TOOLS/synth_rings" "$@"
	echo "$output"
	[ "$status" -eq 0 ] || fail "synth_rings $* failed"
}

# The value of key $1 in $output
kv() {
	tr ' ' '\n' <<<"$output" | sed -n "s/^$1=//p"
}

# Every record once, in order per ring, conservation exact, with $1
# readers (more than one: threads that drain every millisecond while the
# records are written), and the process within the budget of 256 CPUs.
check_readers() {
	synth check -n 256 -k 30 -t "$1"
	[ "$(kv readers)" = "$1" ]
	[ "$(kv ring_size)" = 262144 ] # the budget's floor at 256 CPUs
	[ "$(kv order_errors)" = 0 ]
	[ "$(kv rings_unbalanced)" = 0 ]
	# reader threads: each pass begun (the recorder warms its watch
	# there) is a pass done
	if [ "$1" -gt 1 ]; then
		[ "$(kv passes)" -gt 0 ]
		[ "$(kv passes_unpaired)" = 0 ]
	fi
	local att read drop
	att=$(kv attempted) read=$(kv read) drop=$(kv dropped)
	[ "$read" -gt 100000 ]
	[ "$drop" -gt 0 ] # some rings overflowed: their losses are counted
	[ "$(kv written)" -eq "$read" ]
	[ $((read + drop)) -eq "$att" ]
	# every drop is accounted: carried by a later record, or still pending
	[ $(($(kv lost_carried) + $(kv lost_pending))) -eq "$drop" ]
	# ASan's shadow memory is no part of the budget
	grep -qa __asan_init "$TOOLS/synth_rings" ||
		[ "$(kv pss_kib)" -le "$(kv budget_kib)" ]
}

@test "256 rings, 1 reader: every record once, in order, conserved, within the budget" {
	check_readers 1
}

@test "256 rings, 2 reader threads: every record once, in order, conserved, within the budget" {
	check_readers 2
}

@test "256 rings, 4 reader threads: every record once, in order, conserved, within the budget" {
	check_readers 4
}

@test "full rings drained by 2 reader threads: every record once, in order" {
	synth rate -n 64 -r 262144 -k 4 -t 2
	[ "$(kv readers)" = 2 ]
	[ "$(kv order_errors)" = 0 ]
	[ "$(kv events)" -gt 100000 ]
}

@test "synth_rings: more readers than rings is a usage error" {
	need_root
	run "$TOOLS/synth_rings" check -n 2 -t 3
	[ "$status" -eq 64 ]
}

@test "tiny rings and many overflows: conservation still exact" {
	synth check -n 64 -r 4096 -k 50
	[ "$(kv ring_size)" = 4096 ]
	[ "$(kv order_errors)" = 0 ]
	[ "$(kv rings_unbalanced)" = 0 ]
	[ $(($(kv read) + $(kv dropped))) -eq "$(kv attempted)" ]
}

@test "full rings drained by one reader: every record once, in order" {
	synth rate -n 8 -r 1048576 -k 4
	[ "$(kv order_errors)" = 0 ]
	[ "$(kv events)" -gt 40000 ]
}

@test "an idle pass over 256 empty rings is cheap" {
	synth idle -n 256 -k 5000
	# two loads per ring: well under 50 us every 50 ms drain period
	[ "$(kv idle_pass_ns | cut -d. -f1)" -lt 50000 ]
}

@test "memory at the default budget for 2, 64 and 256 CPUs stays within it" {
	local n
	for n in 2 64 256; do
		synth memory -n "$n"
		[ "$(kv buffer_wrapped)" = 1 ]
		[ "$(kv planned_kib)" -le "$(kv budget_kib)" ]
		# ASan's shadow memory is no part of the budget
		grep -qa __asan_init "$TOOLS/synth_rings" ||
			[ "$(kv pss_kib)" -le "$(kv budget_kib)" ]
	done
}

@test "synth_rings: no rings is a usage error" {
	need_root
	run "$TOOLS/synth_rings" check -n 0
	[ "$status" -eq 64 ]
}

@test "record --readers: 0 and non-numbers are usage errors; more than the CPU ids is one per CPU id" {
	need_root
	local bad
	for bad in 0 x 2x 4097; do
		run "$BTR" --readers "$bad" -d 1 -o "$TMP/t.pb"
		[ "$status" -eq 64 ]
		[[ "$output" == *"reader count"* ]]
	done
	run "$BTR" -v --readers 64 -d 0.3 -o "$TMP/t.pb"
	[ "$status" -eq 0 ]
	local n # CPU ids: the highest possible one + 1
	n=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))
	if [ "$n" -gt 1 ]; then
		[[ "$output" == *"; $n reader threads"* ]]
	else
		[[ "$output" == *"; 1 reader"* ]]
	fi
}

@test "rings read in time order across them (as with --trigger): every record once, in time order" {
	synth merge -n 64 -k 20
	[ "$(kv rings)" = 64 ]
	[ "$(kv read)" -gt 100000 ]
	[ "$(kv read)" = "$(kv written)" ]
	[ "$(kv order_errors)" = 0 ]
}

@test "two and three rings read in time order (the merge's two-ring turns, and the heap handing over to them): every record once, in time order" {
	for n in 2 3; do
		synth merge -n "$n" -k 20
		[ "$(kv rings)" = "$n" ]
		[ "$(kv read)" -gt 50000 ]
		[ "$(kv read)" = "$(kv written)" ]
		[ "$(kv order_errors)" = 0 ]
	done
}

@test "rings taking turns every 1 to 4 records (as hackbench's CPUs do) are read merged in time order, every record once" {
	for n in 2 3; do
		synth turns -n "$n" -k 3 -r 262144
		[ "$(kv rings)" = "$n" ]
		[ "$(kv records_per_drain)" -gt 5000 ]
		[ "$(kv short_drains)" = 0 ]
		[ "$(kv order_errors)" = 0 ]
	done
}

@test "records the BPF side discarded are stepped over: the others once, in order, conserved; in time order across rings too" {
	# every third record reserved is discarded (bpf_ringbuf_discard):
	# read by no one, counted apart, the ring's space given back
	synth check -n 4 -k 20 -d 3
	[ "$(kv discarded)" -gt 10000 ]
	[ "$(kv read)" = "$(kv written)" ]
	[ "$(kv order_errors)" = 0 ]
	[ "$(kv rings_unbalanced)" = 0 ]
	synth check -n 4 -k 20 -t 2 -d 5
	[ "$(kv discarded)" -gt 10000 ]
	[ "$(kv order_errors)" = 0 ]
	for n in 2 3; do
		synth merge -n "$n" -k 20 -d 3
		[ "$(kv discarded)" -gt 10000 ]
		[ "$(kv read)" = "$(kv written)" ]
		[ "$(kv order_errors)" = 0 ]
	done
}

# Reader threads on real scheduler records: capture_raw records a busy
# load's ring records (the real BPF programs), and replay_triggers feeds
# them through the trigger watch as one reader reads them (in time
# order: the reference) and as two reader threads do (each CPU's ring its
# own reader's, the readers apart by up to a pass: their records noted,
# and watched by the main thread in time order once both frontiers pass
# them). On 2 CPUs two processes that ping-pong beside two spinners give
# hundreds of waits and sleeps over a few ms in 5 s. Over 3 seeds of the
# readers' turns the two readers must report exactly the hits of the one
# reader, none watched out of order, with thresholds low enough to pair
# many short sleeps (1 and 2 ms), with 5 ms ones, and with runqueue> specs
# (before the notes, the readers' watch paired records as each read
# them: false sleeps on 3 of 6 captures at 1 and 2 ms, 99 to 100% of the
# hits at 5 ms, and runqueue>4 fired 10 to 61 times where one reader
# fires 7). The capture runs at SCHED_FIFO so that the spinners make it
# drop no records; the load runs as usual.
@test "trigger watch on real records: two reader threads report exactly one reader's hits" {
	need_root
	[ "$(nproc)" -ge 2 ] || fail "two reader threads need 2 CPUs or more; this host has $(nproc)"
	timeout 60 chrt -f 10 "$TOOLS/capture_raw" -o "$TMP/load.raw" -d 5 -n 2000000 -- \
		chrt -o 0 sh -c "'$TOOLS/busyloop' 3 & '$TOOLS/busyloop' 3 & '$TOOLS/pingpong' 30000; wait" \
		>/dev/null 2>"$TMP/capture.err" 3>&- || fail "capture_raw failed: $(cat "$TMP/capture.err")"
	cat "$TMP/capture.err"
	local seed one specs
	for seed in 1 2 3; do
		for specs in "latency>1ms blocked>2ms" "latency>5ms blocked>5ms" "runqueue>1 runqueue>2"; do
			run "$TOOLS/replay_triggers" -R 2 -s "$seed" -w "${specs% *}" -w "${specs#* }" "$TMP/load.raw"
			echo "$specs: $output"
			[ "$status" -eq 0 ] || fail "replay_triggers -s $seed failed (1: hits lost to the queue)"
			output=$(grep '^replay_triggers records=' <<<"$output") ||
				fail "replay_triggers -s $seed printed no result"
			one=$(kv one)
			[ "$one" -ge 50 ] || fail "only $one hits with one reader ($specs): the load tests nothing"
			[ "$(kv overflow)" = 0 ] && [ "$(kv inexact)" = 0 ] && [ "$(kv false)" = 0 ] &&
				[ "$(kv found)" = "$one" ] && [ "$(kv readers)" = "$one" ] ||
				fail "seed $seed, $specs: $(kv readers) hits, $(kv found) of one reader's $one, $(kv false) false, $(kv inexact) inexact, $(kv overflow) overflowed"
		done
	done
}
