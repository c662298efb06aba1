#!/usr/bin/env bash
# Prints the results JSON of scripts/bench/run.sh as tables:
#   scripts/bench/table.sh [build/bench-results.json]
set -euo pipefail

F=${1:-build/bench-results.json}
[ -f "$F" ] || {
	echo "table: $F: no such file" >&2
	exit 1
}

# Tab-separated lines -> aligned columns (two spaces apart).
columns() {
	awk -F '\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n[NR] = NF }
	     END { for (r = 1; r <= NR; r++) { s = ""; for (i = 1; i <= n[r]; i++) s = s sprintf(i < n[r] ? "%-" w[i] "s  " : "%s", c[r, i]); print s } }'
}

section() { printf '\n== %s\n' "$*"; }

# True when the results have data at the jq path $1.
has() { jq -e "($1) | . != null and . != {} and . != []" "$F" >/dev/null; }

jq -r '.meta | "bpftrace-rec benchmarks: \(.date), commit \(.commit), kernel \(.kernel), \(.cpus) CPUs, \(.rounds) rounds\(if .quick then " (QUICK)" else "" end)",
	"loads: pipe = \(.workloads.pipe); hackbench = \(.workloads.hackbench)"' "$F"

if has .overhead; then
	section "1. Overhead: wall = the workload's own time, CPU = its user+sys; medians of rounds; ratios = medians of per-round ratios to none"
	jq -r '["workload", "contestant", "wall s", "spread", "ratio", "ratio min..max", "overhead", "CPU s", "spread", "CPU ratio", "min..max", "lost"],
		(.overhead | to_entries[] | .key as $w | .value as $o |
		 ["none", "floor", "bpftrace-rec", "bpftrace-rec-all", "bpftrace-rec-stacks", "bpftrace-rec-alt", "perf", "perf-stacks", "bpftrace"][] as $c |
		 select($o | has($c)) | $o[$c] |
		 [$w, $c, (.median_s | tostring), "\(.spread_pct)%", "x\(.ratio)", "\(.ratio_min)..\(.ratio_max)",
		  (if .overhead_pct == null then "-" else "\(.overhead_pct)%" end),
		  (.cpu_median_s | tostring), "\(.cpu_spread_pct)%", "x\(.cpu_ratio)", "\(.cpu_ratio_min)..\(.cpu_ratio_max)",
		  (.lost_max // "-" | tostring)])
		| @tsv' "$F" | columns
fi

if has '.cost_per_event["bpftrace-rec"].rounds > 0 // null'; then
	section "2. Cost per event (pipe load, kernel.bpf_stats_enabled=1, median of rounds)"
	jq -r '.cost_per_event as $c |
		["recorder", "BPF ns/event", "sched_switch", "sched_waking", "other progs", "reader ns/event", "reader CPU ms", "events"],
		(["bpftrace-rec", "bpftrace-rec-all", "bpftrace-rec-stacks", "bpftrace-rec-alt", "floor"][] as $k | $c[$k] | select(. != null and .rounds > 0) |
		 [$k, .bpf_ns_per_event, .bpf_ns_sched_switch, .bpf_ns_sched_waking, .bpf_ns_other,
		  .reader_ns_per_event, .reader_cpu_ms, .events] | map(tostring)),
		["bpftrace-rec / floor", "x\($c.bpf_ratio_to_floor)", "", "", "", "", "", ""],
		(if $c["bpftrace-rec-all"] then ["bpftrace-rec-all / floor", "x\($c["bpftrace-rec-all"].bpf_ratio_to_floor)", "", "", "", "", "", ""] else empty end),
		(if $c["bpftrace-rec-stacks"] then ["bpftrace-rec-stacks / floor", "x\($c["bpftrace-rec-stacks"].bpf_ratio_to_floor)", "", "", "", "", "", ""] else empty end),
		(if $c["bpftrace-rec-stacks"] then ["stacks / default, sched_switch (a sleeping switch-out each)", "", "x\($c.stacks_switch_ratio)", "", "", "", "", ""] else empty end),
		(if $c["bpftrace-rec-alt"] then ["bpftrace-rec-alt / floor", "x\($c["bpftrace-rec-alt"].bpf_ratio_to_floor)", "", "", "", "", "", ""] else empty end)
		| @tsv' "$F" | columns
fi

if has .output_size; then
	section "3. Output size (overhead runs; bpftrace-rec: median of rounds, perf: last round)"
	jq -r '["workload", "recorder", "bytes", "events", "bytes/event", "bytes/sched event"],
		(.output_size | to_entries[] | .key as $w | .value |
		 (. as $s | ["bpftrace-rec", "bpftrace-rec-all", "bpftrace-rec-stacks"][] as $c | $s[$c] | select(. != null) |
		  [$w, $c, .bytes, .events, .bytes_per_event, .bytes_per_sched_event] | map(tostring)),
		 (if .perf then [$w, "perf record", .perf.bytes, .perf.samples, .perf.bytes_per_event,
		   "lost \(.perf.lost)"] | map(tostring) else empty end))
		| @tsv' "$F" | columns
fi

if has .encoder; then
	section "4. Encoder (captured records replayed: bundle encoder + central buffer + counting sink)"
	jq -r '.encoder | ["records/s (CPU time)", "min", "max", "wall", "bytes/record", "records", "capture"],
		[.rate, .rate_min, .rate_max, .wall_rate, .bytes_per_record, .records, .capture] | map(tostring) | @tsv' "$F" | columns
fi

if has .drops.steps; then
	section "5. Drops at increasing rates (bench_load under bpftrace-rec, default settings)"
	jq -r '["target/s", "achieved events/s", "dropped", "recorded", "seconds"],
		(.drops.steps[] | [(if .target == 0 then "max" else .target end), .rate, .dropped, .recorded, .seconds] | map(tostring)),
		["highest rate with zero drops", .drops.max_rate_zero_drops, "", "", ""] | map(tostring)
		| @tsv' "$F" | columns
fi

if has .manycore; then
	section "8. Many cores, simulated (synth_rings: N rings filled by BPF_PROG_TEST_RUN, drained by the readers)"
	jq -r '["full rings", "events/s read", "events/s read+encoded", "per reader CPU-s read+encoded", "ns/event read+encoded"],
		(.manycore.drain | if type == "array" then .[] else . end
		 | ["\(.readers // 1) reader(s), \(.rings) rings of \(.ring_size) B", .read_events_per_s, .encode_events_per_s,
		    (.encode_events_per_reader_cpu_s // "-"), .encode_ns_per_event] | map(tostring)) | @tsv' "$F" | columns
	jq -r '["idle drain pass", "ns (ours)", "ns (+ encoder flush)", "ns (libbpf consume)", "ns (+ flush, caches cold)"],
		(.manycore.idle[] | ["\(.rings) rings", .idle_pass_ns, .idle_pass_with_encoders_ns, .idle_pass_libbpf_ns, (.idle_pass_cold_ns // "-")] | map(tostring)) | @tsv' "$F" | columns
	jq -r '["default budget", "budget KiB", "planned KiB", "buffer KiB", "ring KiB", "Pss KiB", "Rss KiB"],
		(.manycore.memory[] | ["\(.cpus) CPUs", .budget_kib, .planned_kib, .buffer_kib, .ring_kib, .pss_kib, .rss_kib] | map(tostring)) | @tsv' "$F" | columns
fi

if has .offline.clock_conversions; then
	section "6. Offline"
	jq -r '["clock conversions", "per second", "ns each", "min..max"],
		(.offline.clock_conversions | to_entries[] | [.key, .value.rate, .value.ns_per, "\(.value.rate_min)..\(.value.rate_max)"] | map(tostring))
		| @tsv' "$F" | columns
fi
if has .offline.sync; then
	jq -r '.offline.sync | if .skipped then "sync: skipped (\(.skipped))"
		else "sync (scripts/bench-sync.sh, exit \(.exit)):", (.output[] | select(startswith("bench_sync")) | "  " + .) end' "$F"
fi

section "Targets"
jq -r '["", "target", "value", "limit", "detail"],
	(.targets[] | [(if .met == true then "MET" elif .met == false then "MISSED" else "n/a" end),
	 .name, (.value // "-" | tostring), (.limit // "-" | tostring),
	 (if .value == null and (.detail | test("null")) then "not measured in this run" else .detail end)] | map(tostring))
	| @tsv' "$F" | columns

jq -r 'if (.notes | length) > 0 then "\nNotes:", (.notes[] | "- " + .) else empty end' "$F"
