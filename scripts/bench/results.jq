# Turns the raw measurements of scripts/bench/run.sh into the results JSON:
# medians, spreads, ratios to no recording and to the floor, and each
# target of issue 7 as met / missed with its numbers. Inputs (jq --argjson
# / --slurpfile): meta, notes, p1 (overhead runs), perfsize, cost, enc,
# drops, clock, sync, report, manycore.

def median:
	map(select(. != null)) | sort |
	if length == 0 then null
	elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def rnd(n): if . == null then null else (. * n | round) / n end;
def spread_pct:
	map(select(. != null)) |
	if length < 2 or median == 0 then 0
	else ((max - min) / median * 100) end;
def div(a; b): if a == null or b == null or b == 0 then null else a / b end;

# ---- 1. overhead -----------------------------------------------------------
def overhead:
	($p1 | map(.workload) | unique) as $ws |
	[$ws[] as $w |
	 ($p1 | map(select(.workload == $w))) as $rows |
	 ($rows | map(select(.contestant == "none" and .seconds != null)
		| {key: (.round | tostring), value: .seconds}) | from_entries) as $none |
	 ($rows | map(select(.contestant == "none" and .cpu_s != null)
		| {key: (.round | tostring), value: .cpu_s}) | from_entries) as $none_cpu |
	 {key: $w, value: (
		[$rows | map(.contestant) | unique | .[] as $c |
		 ($rows | map(select(.contestant == $c)) | sort_by(.round)) as $rc |
		 ($rc | map(.seconds)) as $t |
		 ($rc | map(select(.seconds != null and $none[.round | tostring] != null)
			| .seconds / $none[.round | tostring])) as $ratios |
		 ($rc | map(select(.cpu_s != null and $none_cpu[.round | tostring] != null)
			| .cpu_s / $none_cpu[.round | tostring])) as $cpu_ratios |
		 {key: $c, value: {
			median_s: ($t | median | rnd(10000)),
			min_s: ($t | map(select(. != null)) | min),
			max_s: ($t | map(select(. != null)) | max),
			spread_pct: ($t | spread_pct | rnd(10)),
			ratio: ($ratios | median | rnd(1000)),
			ratio_min: ($ratios | min | rnd(1000)),
			ratio_max: ($ratios | max | rnd(1000)),
			overhead_pct: (($ratios | median) as $m | if $m == null then null else ($m - 1) * 100 | rnd(10) end),
			cpu_median_s: ($rc | map(.cpu_s) | median | rnd(10000)),
			cpu_spread_pct: ($rc | map(.cpu_s) | spread_pct | rnd(10)),
			cpu_ratio: ($cpu_ratios | median | rnd(1000)),
			cpu_ratio_min: ($cpu_ratios | min | rnd(1000)),
			cpu_ratio_max: ($cpu_ratios | max | rnd(1000)),
			seconds: $t, cpu_seconds: ($rc | map(.cpu_s)),
			events: ($rc | map(.events) | median),
			lost_max: ($rc | map(.lost) | map(select(. != null)) | max)}}] | from_entries)}]
	| from_entries;

# ---- 2. cost per event ------------------------------------------------------
def kind_ns($rep; $k):
	[$rep.programs // {} | to_entries[] | .value | select(.kind == $k)] as $p |
	div($p | map(.run_time_ns) | add; $p | map(.run_cnt) | add);
def sched_ns($rep):
	[$rep.programs // {} | to_entries[] | .value
	 | select(.kind == "sched_switch" or .kind == "sched_waking")] as $p |
	div($p | map(.run_time_ns) | add; $p | map(.run_cnt) | add);
def cost_of($c):
	($cost | map(select(.contestant == $c))) as $reps |
	{rounds: ($reps | length),
	 events: ($reps | map(.events) | median),
	 bpf_ns_per_event: ($reps | map(sched_ns(.)) | median | rnd(10)),
	 bpf_ns_sched_switch: ($reps | map(kind_ns(.; "sched_switch")) | median | rnd(10)),
	 bpf_ns_sched_waking: ($reps | map(kind_ns(.; "sched_waking")) | median | rnd(10)),
	 bpf_ns_other: ($reps | map(kind_ns(.; "other")) | median | rnd(10)),
	 reader_ns_per_event: ($reps | map(div(.reader_cpu_ns; .events)) | median | rnd(10)),
	 reader_cpu_ms: ($reps | map(.reader_cpu_ns / 1e6) | median | rnd(10)),
	 programs: ($reps | last | .programs)};

# ---- 3. output size -------------------------------------------------------
def sizes:
	[$p1 | map(.workload) | unique | .[] as $w |
	 ($perfsize | map(select(.workload == $w)) | last) as $pf |
	 def rec_size($c):
		($p1 | map(select(.workload == $w and .contestant == $c and .bytes != null))) as $r |
		if ($r | length) == 0 then null else {
			bytes: ($r | map(.bytes) | median),
			events: ($r | map(.events) | median),
			bytes_per_event: ($r | map(div(.bytes; .events)) | median | rnd(100)),
			bytes_per_sched_event: ($r | map(div(.bytes; .sched_switch + .sched_waking)) | median | rnd(100))} end;
	 {key: $w, value: {
		"bpftrace-rec": rec_size("bpftrace-rec"),
		"bpftrace-rec-all": rec_size("bpftrace-rec-all"),
		"bpftrace-rec-stacks": rec_size("bpftrace-rec-stacks"),
		perf: (if $pf == null then null else {
			bytes: $pf.bytes, samples: $pf.samples, lost: $pf.lost,
			bytes_per_event: (div($pf.bytes; $pf.samples) | rnd(100))} end)}}]
	| from_entries;

# ---- 5. drops ---------------------------------------------------------------
def drops:
	($drops | map(select(.dropped == 0)) | map(.rate) | max) as $best |
	{steps: $drops,
	 max_rate_zero_drops: $best,
	 first_rate_with_drops: ($drops | map(select(.dropped > 0)) | map(.rate) | min),
	 generator_max_rate: ($drops | map(select(.target == 0)) | map(.rate) | max)};

def target($name; $value; $limit; $met; $unit; $detail):
	{name: $name, value: $value, limit: $limit, unit: $unit,
	 met: $met, detail: $detail};

overhead as $ov |
cost_of("bpftrace-rec") as $crec |
cost_of("floor") as $cfl |
cost_of("bpftrace-rec-alt") as $calt |
cost_of("bpftrace-rec-all") as $call |
cost_of("bpftrace-rec-stacks") as $cstk |
sizes as $sz |
drops as $dr |
($enc[0] // {}) as $en |
($clock[0] // {}) as $cl |
($sync[0] // {}) as $sy |
{
	meta: $meta,
	overhead: $ov,
	cost_per_event: {
		"bpftrace-rec": $crec,
		floor: $cfl,
		bpf_ratio_to_floor: (div($crec.bpf_ns_per_event; $cfl.bpf_ns_per_event) | rnd(1000)),
		"bpftrace-rec-alt": (if $calt.rounds > 0 then $calt + {bpf_ratio_to_floor: (div($calt.bpf_ns_per_event; $cfl.bpf_ns_per_event) | rnd(1000))} else null end),
		"bpftrace-rec-all": (if $call.rounds > 0 then $call + {bpf_ratio_to_floor: (div($call.bpf_ns_per_event; $cfl.bpf_ns_per_event) | rnd(1000))} else null end),
		"bpftrace-rec-stacks": (if $cstk.rounds > 0 then $cstk + {bpf_ratio_to_floor: (div($cstk.bpf_ns_per_event; $cfl.bpf_ns_per_event) | rnd(1000))} else null end),
		# on the pipe load every switch-out is a sleep (S): --callstacks'
		# sched_switch cost over the default's is its cost per sleeping
		# switch-out (target <= 3)
		stacks_switch_ratio: (if $cstk.rounds > 0 then div($cstk.bpf_ns_sched_switch; $crec.bpf_ns_sched_switch) | rnd(100) else null end),
		# the same for --blocked-reason all (target <= 1.5), and for the
		# other build (BTR_BIN_ALT with its BTR_ALT_ARGS), measured beside
		all_switch_ratio: (if $call.rounds > 0 then div($call.bpf_ns_sched_switch; $crec.bpf_ns_sched_switch) | rnd(100) else null end),
		alt_switch_ratio: (if $calt.rounds > 0 then div($calt.bpf_ns_sched_switch; $crec.bpf_ns_sched_switch) | rnd(100) else null end),
		note: "BPF ns per sched_switch/sched_waking run, kernel.bpf_stats_enabled=1 (its own overhead included); reader = recorder process CPU (user+sys) from attach to exit, per event recorded"
	},
	output_size: $sz,
	encoder: $en,
	drops: $dr,
	offline: {clock_conversions: $cl, sync: $sy},
	report: ($report[0] // null),
	manycore: ($manycore[0] // null),
	targets: [
		($ov | to_entries[] | .key as $w | .value as $o |
		 ($o["bpftrace-rec"].ratio) as $r | ($o.perf.ratio) as $p |
		 target("overhead " + $w + ": (ratio-1) <= (perf ratio-1)/3";
			(if $r == null then null else $r - 1 | rnd(1000) end);
			(if $p == null then null else ($p - 1) / 3 | rnd(1000) end);
			(if $r == null or $p == null then null else ($r - 1) <= ($p - 1) / 3 end);
			"ratio-1";
			"wall: bpftrace-rec x\($r), perf record x\($p), floor x\($o.floor.ratio), bpftrace x\($o.bpftrace.ratio // "-"); workload CPU time: bpftrace-rec x\($o["bpftrace-rec"].cpu_ratio), perf x\($o.perf.cpu_ratio), floor x\($o.floor.cpu_ratio)")),
		target("BPF time per event <= 1.2 x floor";
			$crec.bpf_ns_per_event; (if $cfl.bpf_ns_per_event == null then null else $cfl.bpf_ns_per_event * 1.2 | rnd(10) end);
			(if $crec.bpf_ns_per_event == null or $cfl.bpf_ns_per_event == null then null
			 else $crec.bpf_ns_per_event <= $cfl.bpf_ns_per_event * 1.2 end);
			"ns";
			"switch \($crec.bpf_ns_sched_switch) vs \($cfl.bpf_ns_sched_switch), waking \($crec.bpf_ns_sched_waking) vs \($cfl.bpf_ns_sched_waking); x\(div($crec.bpf_ns_per_event; $cfl.bpf_ns_per_event) | rnd(1000)) of the floor"),
		target("--blocked-reason all: BPF ns per sleeping switch-out <= 1.5 x the default's";
			(if $call.rounds > 0 then div($call.bpf_ns_sched_switch; $crec.bpf_ns_sched_switch) | rnd(100) else null end); 1.5;
			(if $call.rounds > 0 and $crec.bpf_ns_sched_switch != null then $call.bpf_ns_sched_switch <= $crec.bpf_ns_sched_switch * 1.5 else null end);
			"ratio";
			"sched_switch: --blocked-reason all \($call.bpf_ns_sched_switch) ns, default \($crec.bpf_ns_sched_switch) ns; the other build (BTR_BIN_ALT) \($calt.bpf_ns_sched_switch // "-") ns"),
		target("reader CPU per event <= 150 ns";
			$crec.reader_ns_per_event; 150;
			(if $crec.reader_ns_per_event == null then null else $crec.reader_ns_per_event <= 150 end);
			"ns"; "floor reader: \($cfl.reader_ns_per_event) ns/event"),
		target("encoder >= 10M records/s on one core";
			$en.rate; 10000000; (if $en.rate == null then null else $en.rate >= 10000000 end);
			"records/s"; "min \($en.rate_min), max \($en.rate_max), \($en.records) captured records"),
		target("<= 10 bytes per sched_switch/sched_waking event";
			$sz.pipe["bpftrace-rec"].bytes_per_sched_event; 10;
			(if $sz.pipe["bpftrace-rec"].bytes_per_sched_event == null then null
			 else $sz.pipe["bpftrace-rec"].bytes_per_sched_event <= 10 end);
			"bytes"; "whole file / events on the pipe load; perf.data: \($sz.pipe.perf.bytes_per_event // "-") bytes/event"),
		target("zero drops at 1M events/s (default settings)";
			$dr.max_rate_zero_drops; 1000000;
			(if ($dr.steps | length) == 0 then null
			 elif ($dr.max_rate_zero_drops // 0) >= 1000000 then true
			 elif $dr.first_rate_with_drops != null then false
			 else null end);
			"events/s";
			(if ($dr.steps | length) > 0 and $dr.first_rate_with_drops == null and ($dr.max_rate_zero_drops // 0) < 1000000
			 then "not shown: no step dropped, but the load generator reached only \($dr.max_rate_zero_drops) events/s (a busy machine)"
			 else "first rate with drops: \($dr.first_rate_with_drops // "none"), generator max: \($dr.generator_max_rate // "-")" end)),
		target(">= 20M timestamp conversions/s";
			$cl.seq_1hop.rate; 20000000;
			(if $cl.seq_1hop.rate == null then null else $cl.seq_1hop.rate >= 20000000 end);
			"conversions/s";
			"seq_3hop \($cl.seq_3hop.rate), random_1hop \($cl.random_1hop.rate), alternate \($cl.alternate.rate)"),
		(($sy.result.sync // []) | (map(select(.case == "default")) + .) | first) as $sd |
		target("sync of a 1 GB trace (QUICK: 100 MB), peak RSS < 512 MB";
			(if $sd == null then null else $sd.peak_rss_kb / 1024 | rnd(10) end); 512;
			(if $sd == null then null else $sd.peak_rss_kb / 1024 < 512 end);
			"MiB";
			(if $sd == null then ($sy.skipped // "no result from scripts/bench-sync.sh")
			 else "\($sy.result.size_bytes) bytes, case \($sd.case): wall \($sd.wall_s) s, CPU \($sd.cpu_s) s, \($sd.mib_per_s) MiB/s" end)),
		($report[0] // null) as $rp |
		target("report >= 20M events/s on one core";
			(if $rp == null then null else $rp.events_per_cpu_s | floor end); 20000000;
			(if $rp == null then null else $rp.events_per_cpu_s >= 20000000 end);
			"events/s";
			(if $rp == null then "null" else "\($rp.events) events of \($rp.bytes) bytes in \($rp.cpu_s) s CPU (median of \($rp.rounds // 1)); trace: \($rp.trace.threads) threads, \($rp.trace.dist), top 10 threads \($rp.trace.top10_share), top 100 \($rp.trace.top100_share) of the events" + (if ($rp.alt // null) == null then "" else "; BTR_BIN_ALT \($rp.alt.cpu_s) s CPU, this build \($rp.alt.speedup * 100 | round / 100)x as fast, same JSON: \($rp.same_output_as_alt)" end) end)),
		target("report of a 1 GB trace (QUICK: 100 MB), peak RSS < 512 MB";
			(if $rp == null then null else $rp.peak_rss_kb / 1024 | rnd(10) end); 512;
			(if $rp == null then null else $rp.peak_rss_kb / 1024 < 512 end);
			"MiB";
			(if $rp == null then "null" else "\($rp.bytes) bytes, \($rp.loss_rows) loss rows in the report" end))
	],
	notes: $notes
}
