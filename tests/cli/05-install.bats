#!/usr/bin/env bats
# make install / uninstall into a staging directory.

load helpers

@test "make install puts binary, man page, completion and unit under DESTDIR" {
	local top
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	make -C "$top" -s install DESTDIR="$TMP/stage" PREFIX=/usr OUT="$(dirname "$BTR")"
	[ -x "$TMP/stage/usr/bin/bpftrace-rec" ]
	"$TMP/stage/usr/bin/bpftrace-rec" --version
	[ -f "$TMP/stage/usr/share/man/man8/bpftrace-rec.8" ]
	man -l "$TMP/stage/usr/share/man/man8/bpftrace-rec.8" 2>/dev/null | grep -q "EXIT STATUS" ||
		grep -q "^.SH EXIT STATUS" "$TMP/stage/usr/share/man/man8/bpftrace-rec.8"
	[ -f "$TMP/stage/usr/share/bash-completion/completions/bpftrace-rec" ]
	grep -q "^ExecStart=/usr/bin/bpftrace-rec " "$TMP/stage/usr/lib/systemd/system/bpftrace-rec.service"
	grep -q "CapabilityBoundingSet=CAP_BPF CAP_PERFMON" "$TMP/stage/usr/lib/systemd/system/bpftrace-rec.service"
	make -C "$top" -s uninstall DESTDIR="$TMP/stage" PREFIX=/usr OUT="$(dirname "$BTR")"
	[ ! -e "$TMP/stage/usr/bin/bpftrace-rec" ]
	[ ! -e "$TMP/stage/usr/lib/systemd/system/bpftrace-rec.service" ]
}

@test "bash completion offers the subcommands and options" {
	local top
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec --str); COMP_CWORD=1; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[[ "$output" == *"--stream"* ]]
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec st); COMP_CWORD=1; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[[ "$output" == *"stats"* ]]
	# report: the command, its options and their values
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec re); COMP_CWORD=1; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[ "$output" = "record report" ]
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec report t.pb --so); COMP_CWORD=3; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[ "$output" = "--sort" ]
	run bash -c "source '$top/scripts/bpftrace-rec.bash-completion'
		COMP_WORDS=(bpftrace-rec report t.pb --sort l); COMP_CWORD=4; _bpftrace_rec; echo \${COMPREPLY[*]}"
	[ "$output" = "latency" ]
}

@test "a bare make without the build programs says what to run" {
	local top
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	run make -C "$top" --no-print-directory OUT="$TMP/out" PROTOC_C=no-such-protoc-c all
	[ "$status" -ne 0 ]
	[[ "$output" == *"missing programs: no-such-protoc-c; install the build dependencies first: make deps"* ]]
	[[ "$output" != *"No such file or directory"* ]]
}
