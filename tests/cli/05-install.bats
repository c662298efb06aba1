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
}
