#!/usr/bin/env bats
# The memory budget (--memory): the split between the central buffer and
# the per-CPU rings printed with -v and recorded in the trace's config
# echo, the overrides -b and --ringbuf-size, the refusal of a budget too
# small, and the resident memory of a recording within its budget.

load helpers

online_cpus() {
	awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-");
		n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }' \
		/sys/devices/system/cpu/online
}

# KiB of "buffer SIZE" or "x SIZE" (the ring) in the -v line of $TMP/rec.err
split_kib() {
	grep 'debug: memory: budget' "$TMP/rec.err" | head -1 |
		grep -o "$1 [0-9]* [KMG]iB" | head -1 |
		awk '{ m = $3 == "GiB" ? 1048576 : $3 == "MiB" ? 1024 : 1; print $2 * m }'
}

# An ASan build (make sanitize) of the binary $1 (default the recorder)
sanitized() {
	grep -qa __asan_init "${1:-$BTR}"
}

config_kib() {
	"$BTR" dump "$TMP/trace.pb" | grep ' trace_config ' |
		grep -o "$1=[0-9]*" | cut -d= -f2
}

@test "-v prints the split of the default budget; the trace records it" {
	record_cmd -v -d 300ms
	cat "$TMP/rec.err"
	local n; n=$(online_cpus)
	grep -q "debug: memory: budget 128 MiB" "$TMP/rec.err"
	grep -q "$n online CPUs x " "$TMP/rec.err"
	local buf ring
	buf=$(split_kib buffer)
	ring=$(split_kib x)
	[ "$buf" -le $((64 * 1024)) ]
	[ "$ring" -ge 256 ] && [ "$ring" -le 4096 ]
	[ "$(config_kib buffer0_size_kb)" = "$buf" ]
	[ "$(config_kib ftrace_buffer_size_kb)" = "$ring" ]
	[ "$(config_kib drain_period_ms)" = 50 ]
}

@test "--memory sizes buffer and rings; the trace records the split" {
	local n mem; n=$(online_cpus)
	mem=$((32 + n))
	record_cmd -v -d 300ms --memory ${mem}M
	cat "$TMP/rec.err"
	grep -q "debug: memory: budget $mem MiB" "$TMP/rec.err"
	local buf ring
	buf=$(split_kib buffer)
	ring=$(split_kib x)
	[ "$buf" -le $((mem * 512)) ]
	[ "$(config_kib buffer0_size_kb)" = "$buf" ]
	[ "$(config_kib ftrace_buffer_size_kb)" = "$ring" ]
	# planned total within the budget
	local total
	total=$(grep -o 'planned [0-9]* [KMG]iB' "$TMP/rec.err" |
		awk '{ print $2 * ($3 == "MiB" ? 1024 : 1) }')
	[ "$total" -le $((mem * 1024)) ]
}

@test "a budget too small is refused with its minimum, exit 64, no file" {
	need_root
	run "$BTR" --memory 4M -d 1 -o "$TMP/t.pb"
	echo "$output"
	[ "$status" -eq 64 ]
	[[ "$output" == *"error: --memory 4 MiB is too small for "*" online CPUs: it needs at least "* ]]
	[ ! -e "$TMP/t.pb" ]
	# the minimum it names works
	local min
	min=$(grep -o 'at least [0-9]* MiB' <<<"$output" | awk '{ print $3 }')
	record_cmd -q -d 200ms --memory ${min}M
	run "$BTR" --memory $((min - 1))M -d 1 -o "$TMP/t.pb"
	[ "$status" -eq 64 ]
	# refused before anything else: also without root
	run_as_nobody -- "$BTR" --memory 4M -d 1 -o /tmp/never.pb
	[ "$status" -eq 64 ]
	[[ "$output" == *"too small"* ]]
	run "$BTR" --memory 0 -d 1
	[ "$status" -eq 64 ]
	run "$BTR" --memory 2T -d 1
	[ "$status" -eq 64 ]
	run "$BTR" --memory lots -d 1
	[ "$status" -eq 64 ]
}

@test "overrides: -b and --ringbuf-size alone, and within --memory" {
	# -b alone: as given, rings as the default budget sizes them
	record_cmd -v -d 200ms -b 8M
	[ "$(config_kib buffer0_size_kb)" = 8192 ]
	[ "$(split_kib buffer)" = 8192 ]
	# --ringbuf-size alone: rounded up to a power of two
	record_cmd -v -d 200ms --ringbuf-size 100K
	[ "$(config_kib ftrace_buffer_size_kb)" = 128 ]
	[ "$(split_kib x)" = 128 ]
	# beyond the default budget without --memory: allowed, and said
	record_cmd -v -d 200ms -b 256M
	grep -q "take .* more than the default budget" "$TMP/rec.err"
	# with --memory the budget sizes the other part
	local n; n=$(online_cpus)
	record_cmd -v -d 200ms --memory $((32 + n))M -b 4M
	[ "$(config_kib buffer0_size_kb)" = 4096 ]
	# and the overrides must fit in it
	run "$BTR" --memory 32M -b 30M -d 1 -o "$TMP/t.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"too small"* ]]
	run "$BTR" --memory 32M --ringbuf-size 16M -d 1 -o "$TMP/t.pb"
	[ "$status" -eq 64 ]
	run "$BTR" --memory 64M -b 32M --ringbuf-size 16M -d 1 -o "$TMP/t.pb"
	[ "$status" -eq 64 ]
	[[ "$output" == *"need "*", more than --memory 64 MiB"* ]]
}

@test "a busy recording stays within its budget (proportional set size)" {
	need_root
	# one MiB above the smallest budget this host takes: a small buffer
	local mem
	mem=$("$BTR" --memory 1M -d 1 -o "$TMP/t.pb" 2>&1 |
		grep -o 'at least [0-9]* MiB' | awk '{ print $3 + 1 }')
	[ -n "$mem" ]
	"$BTR" -v --memory ${mem}M -d 4s -o "$TMP/trace.pb" 2>"$TMP/rec.err" 3>&- &
	local pid=$! peak=0 rss=0 v r
	sleep 0.3
	# a bounded load (bats waits for whatever holds its fd 3)
	timeout 20 perf bench sched pipe -l 200000 >/dev/null 2>&1 3>&- &
	local load=$!
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^Pss:/ { print $2 }' /proc/$pid/smaps_rollup 2>/dev/null || true)
		r=$(awk '/^Rss:/ { print $2 }' /proc/$pid/smaps_rollup 2>/dev/null || true)
		[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
		[ -n "$r" ] && [ "$r" -gt "$rss" ] && rss=$r
		sleep 0.1
	done
	wait "$pid"
	wait "$load" || true
	cat "$TMP/rec.err"
	echo "budget ${mem} MiB, peak Pss ${peak} KiB, peak Rss ${rss} KiB"
	[ "$peak" -gt 0 ]
	# the buffer was filled and wrapped: all of it was resident
	[ "$(stat_value "$TMP/trace.pb" traced_buf_chunks_overwritten)" -gt 0 ]
	# ASan's shadow memory and quarantine are no part of the budget: a
	# sanitized build checks everything above, not this bound
	sanitized || [ "$peak" -le $((mem * 1024)) ]
}
