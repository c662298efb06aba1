#!/usr/bin/env bats
# Command line: help, version, and every usage error with its exit status.

load helpers

@test "--help shows usage and examples, exits 0" {
	run "$BTR" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage:"* ]]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"--ringbuf-size"* ]]
	# every command
	local c
	for c in "record (default)" "dump FILE" "stats FILE" "sync -o OUT" "report FILE"; do
		[[ "$output" == *"$c"* ]] || fail "--help does not name $c"
	done
}

# help_glitches WIDTH: the lines of a --help on stdin that glibc's argp
# line filling garbled, each with what is wrong (nothing when clean). A
# doc line that reaches the right margin exactly leaves a line of blanks
# after it; the left margin of a doc under a long option header, when
# argp's buffer is nearly full, goes out ahead of the text still buffered,
# shifting an earlier option header right and leaving the doc at column 0.
# So: no line wider than WIDTH, none only blanks; in the options, every
# line an option (its doc from column 29) or a continuation at column 29;
# every example indented.
help_glitches() {
	awk -v width="$1" '
	function bad(why) { printf "line %d: %s: [%s]\n", NR, why, $0 }
	BEGIN { sp = sprintf("%29s", "") }
	{
		if (length($0) > width) bad("wider than " width)
		if ($0 ~ /^[ \t]+$/) bad("only blanks")
		if ($0 == "") { inopt = 0; inex = 0; next }
		if ($0 ~ /^(  -[^ -], |      )--[^ ]/) {
			seen = 1; inopt = 1
			match($0, /^ +(-[^ ], )?--[^ ]+ */)
			if (RLENGTH < length($0) && RLENGTH < 29)
				bad("doc before column 29")
			next
		}
		if (inopt && !(substr($0, 1, 29) == sp && substr($0, 30, 1) != " "))
			bad("neither an option nor a continuation at column 29")
		if ($0 == "Examples:") { inex = 1; next }
		if (inex && $0 !~ /^  /) bad("example not indented")
	}
	END { if (!seen) print "no options" }'
}

@test "--help of every command is laid out cleanly, whatever COLUMNS says" {
	local c cols out width bad all=
	for c in record sync report dump stats trigger; do
		for cols in "" 100 60; do
			if [ -z "$cols" ]; then
				out=$(env -u COLUMNS -u ARGP_HELP_FMT "$BTR" $c --help)
				width=80
			else
				out=$(env -u ARGP_HELP_FMT COLUMNS=$cols "$BTR" $c --help)
				width=$((cols > 80 ? cols : 80))
			fi
			# record is the default command: its usage has no word
			[[ "$out" == "Usage: bpftrace-rec $c "* ]] ||
				[[ $c == record && "$out" == "Usage: bpftrace-rec ["* ]] ||
				bad="usage: $(head -1 <<<"$out")"$'\n'
			bad+=$(help_glitches "$width" <<<"$out")
			[ -z "$bad" ] ||
				all+="$c --help, COLUMNS ${cols:-unset}:"$'\n'"$bad"$'\n'
			bad=
		done
	done
	[ -z "$all" ] || fail "$all"
}

@test "a bad option of every command exits 64 and names the command as typed" {
	local c name
	for c in record sync report dump stats trigger; do
		name="bpftrace-rec $c"
		[ "$c" != record ] || name=bpftrace-rec
		run "$BTR" $c --no-such-option
		[ "$status" -eq 64 ] || fail "$c: exit $status"
		[[ "${lines[0]}" == "$name: unrecognized option '--no-such-option'" ]] ||
			fail "$c: ${lines[0]}"
		[[ "$output" == *"Try \`$name --help'"* ]] || fail "$c: $output"
	done
}

@test "--version prints the version" {
	run "$BTR" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "bpftrace-rec "[0-9]* ]]
}

@test "unknown option is a usage error (64)" {
	run "$BTR" --no-such-option
	[ "$status" -eq 64 ]
}

@test "bad duration is a usage error naming the value" {
	run "$BTR" -d 10parsecs
	[ "$status" -eq 64 ]
	[[ "$output" == *"invalid duration '10parsecs'"* ]]
}

@test "zero duration is a usage error" {
	run "$BTR" -d 0
	[ "$status" -eq 64 ]
}

@test "bad ring buffer sizes are usage errors" {
	run "$BTR" --ringbuf-size 12X
	[ "$status" -eq 64 ]
	run "$BTR" --ringbuf-size 1K
	[ "$status" -eq 64 ]
	[[ "$output" == *"ring buffer size"* ]]
}

@test "stray argument is a usage error pointing at --" {
	run "$BTR" sleep 1
	[ "$status" -eq 64 ]
	[[ "$output" == *"after --"* ]]
}

@test "-- without a command is a usage error" {
	run "$BTR" -o "$TMP/x.pb" --
	[ "$status" -eq 64 ]
	[ ! -e "$TMP/x.pb" ]
}

@test "-q and -v together are a usage error" {
	run "$BTR" -q -v
	[ "$status" -eq 64 ]
}

@test "dump without a file is a usage error" {
	run "$BTR" dump
	[ "$status" -eq 64 ]
}

@test "dump of a missing file fails naming it" {
	run "$BTR" dump "$TMP/nope.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/nope.pb"* ]]
}

@test "dump of a corrupt file fails naming the offset" {
	printf '\x0a\x05\x08\x01' >"$TMP/bad.pb"
	run "$BTR" dump "$TMP/bad.pb"
	# a torn last record is tolerated like trace_processor does: warning, 0
	[ "$status" -eq 0 ]
	[[ "$output" == *"offset 0"* ]]
	printf '\x0a\x02\xff\xff\x0a\x00' >"$TMP/bad2.pb"
	run "$BTR" dump "$TMP/bad2.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad2.pb"* ]]
	[[ "$output" == *"offset"* ]]
}

@test "recording without root fails with a clear error" {
	need_root
	run_as_nobody --inh-caps=-all -- "$BTR" -d 1 -o "$TMP/x.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"CAP_BPF"* ]]
}

@test "the checks against trace_processor fail, never skip, without trace_processor_shell" {
	TP=/nonexistent/trace_processor_shell
	run tp_query /dev/null "select 1"
	[ "$status" -ne 0 ]
	[[ "$output" == *"trace_processor_shell not found"*"TRACE_PROCESSOR"* ]]
	run report_equals_tp /dev/null
	[ "$status" -ne 0 ]
}
