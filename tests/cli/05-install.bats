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

# make static and make deb from this build's objects; a sanitizer build
# (make sanitize) has no static link, and says so.
@test "make static: one file without interpreter; make deb: it, the docs and the unit, no Depends" {
	local top out bin deb
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	out=$(dirname "$BTR")
	if nm "$BTR" 2>/dev/null | grep -q __asan_init; then
		run make -C "$top" -s OUT="$out" SAN=1 static
		[ "$status" -ne 0 ]
		[[ "$output" == *"a sanitizer build (SAN=1) has no static link"* ]]
		return
	fi
	make -C "$top" -s OUT="$out" SAN= static
	bin=$out/static/bpftrace-rec
	! readelf -l "$bin" | grep -q INTERP
	"$bin" --version
	deb=$(make -C "$top" -s OUT="$out" SAN= deb 2>/dev/null | tail -1)
	[ -f "$deb" ]
	[ -z "$(dpkg-deb -f "$deb" Depends)" ]
	dpkg-deb -c "$deb" >"$TMP/files"
	for f in usr/bin/bpftrace-rec usr/share/man/man8/bpftrace-rec.8.gz \
		usr/share/bash-completion/completions/bpftrace-rec \
		lib/systemd/system/bpftrace-rec.service usr/share/doc/bpftrace-rec/copyright; do
		grep -q " \./$f\$" "$TMP/files" || fail "no $f in $deb"
	done
	dpkg-deb -x "$deb" "$TMP/x"
	grep -q "^AmbientCapabilities=CAP_BPF CAP_PERFMON CAP_SYSLOG$" \
		"$TMP/x/lib/systemd/system/bpftrace-rec.service"
	! readelf -l "$TMP/x/usr/bin/bpftrace-rec" | grep -q INTERP
}

@test "scripts/mkdeb.sh refuses a dynamic binary" {
	local top
	top=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
	run env VERSION=0 OUT="$TMP" "$top/scripts/mkdeb.sh" "$BTR"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is dynamically linked: the package holds the static build"* ]]
	run "$top/scripts/mkdeb.sh"
	[ "$status" -eq 64 ]
}
