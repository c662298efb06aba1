#!/bin/bash
# Runs inside the root that scripts/unit-check.sh boots with systemd as
# PID 1, as a oneshot unit: the package's systemd unit as an
# administrator uses it. Installs /unit-check/bpftrace-rec.deb (unit
# disabled), starts the recorder, takes a SIGUSR1 snapshot through
# systemctl kill, upgrades the package while it runs
# (/unit-check/bpftrace-rec-up.deb), stops it and reads the final trace
# back: the blocked functions are named (CAP_SYSLOG read kallsyms). Then
# the same with the man page's --callstacks drop-in (CAP_SYS_PTRACE): the
# kernel frames are named. Then the unit's triggers drop-in: a named
# trigger sent by `bpftrace-rec trigger` reaches the recorder through its
# RuntimeDirectory and writes a snapshot by itself, whose Trigger packet
# dump shows and whose trigger the journal has a line of. Last, remove
# and purge. Writes its log to
# /unit-check/log and its exit status to /unit-check/rc, then powers off.
set -uo pipefail
dir=/unit-check
state=/var/lib/bpftrace-rec
exec >"$dir/log" 2>&1

say() { echo "unit-check guest: $*"; }
finish() {
	echo "$1" >"$dir/rc"
	sync
	systemctl start --no-block poweroff.target
	exit "$1"
}
fail() {
	say "FAILED: $*"
	journalctl -u bpftrace-rec.service --no-pager -n 30 || true
	finish 1
}
# waits up to $1 s for command $2...
wait_for() {
	local n=$(($1 * 10))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}
# sleeps in D (fsync's I/O waits), which the default --blocked-reason names
load() {
	local _
	for _ in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of=/var/tmp/btr-load bs=64k count=32 conv=fsync 2>/dev/null
	done
	rm -f /var/tmp/btr-load
}
# shellcheck disable=SC2317 # called through wait_for
# the size of $1 holds still for half a second and its trace reads back
settled() {
	local a b
	a=$(stat -c %s "$1" 2>/dev/null) || return 1
	sleep 0.5
	b=$(stat -c %s "$1" 2>/dev/null) || return 1
	[ "$a" = "$b" ] && [ "$a" -gt 0 ] && bpftrace-rec stats "$1" >/dev/null 2>&1
}
active() { [ "$(systemctl is-active bpftrace-rec.service)" = active ]; }
inactive() { ! active; }
stop_ok() {
	systemctl stop bpftrace-rec.service || fail "systemctl stop"
	local r
	r=$(systemctl show -P Result bpftrace-rec.service)
	[ "$r" = success ] || fail "the recorder ended with Result=$r"
}
# caps_after_start HEX: once attached, the recorder's effective
# capabilities are HEX (/proc/PID/status CapEff)
caps_after_start() {
	local pid eff
	pid=$(systemctl show -P MainPID bpftrace-rec.service)
	eff=$(awk '$1 == "CapEff:" { print $2 }' "/proc/$pid/status")
	say "effective capabilities once recording: $eff"
	[ "$eff" = "$1" ] || fail "CapEff $eff once recording, not $1"
}
# blocked_named TRACE: counts the blocked reasons with a function name
blocked_named() {
	bpftrace-rec dump "$1" | grep -c ' sched_blocked_reason .*function=[A-Za-z_]'
}

say "systemd $(systemctl --version | sed -n 1p), kernel $(uname -r)"
dpkg -i "$dir/bpftrace-rec.deb" || fail "dpkg -i"
[ "$(systemctl is-enabled bpftrace-rec.service)" = disabled ] ||
	fail "the package enabled the unit"
inactive || fail "the package started the unit"

say "start, snapshot, upgrade, stop"
systemctl start bpftrace-rec.service || fail "systemctl start"
wait_for 30 active || fail "not active after 30 s"
sleep 2
caps_after_start 0000000000000000
load
systemctl kill -s USR1 bpftrace-rec.service || fail "systemctl kill -s USR1"
wait_for 30 settled "$state/flight.1.pb" || fail "no snapshot flight.1.pb after SIGUSR1"
say "snapshot: $(stat -c %s "$state/flight.1.pb") bytes"
dpkg -i "$dir/bpftrace-rec-up.deb" || fail "upgrade (dpkg -i)"
active || fail "the upgrade stopped the recorder"
load
stop_ok
[ -s "$state/flight.pb" ] || fail "no final trace $state/flight.pb"
bpftrace-rec stats "$state/flight.pb" >/dev/null || fail "the final trace does not read back"
n=$(blocked_named "$state/flight.pb")
say "final trace: $(stat -c %s "$state/flight.pb") bytes, $n blocked reasons with a function"
bpftrace-rec dump "$state/flight.pb" | grep ' sched_blocked_reason ' | sed -n 1,3p
[ "$n" -gt 0 ] || fail "no blocked reason names its function (kallsyms unread?)"

say "the --callstacks drop-in"
mkdir -p /etc/systemd/system/bpftrace-rec.service.d
# the drop-in of the man page, PRIVILEGES
man_dropin=/etc/systemd/system/bpftrace-rec.service.d/callstacks.conf
cat >"$man_dropin" <<'UNIT'
[Service]
ExecStart=
ExecStart=/usr/bin/bpftrace-rec --quiet --callstacks --buffer-size 64M \
    --fill-policy ring -o /var/lib/bpftrace-rec/flight.pb
CapabilityBoundingSet=CAP_SYS_PTRACE
AmbientCapabilities=CAP_SYS_PTRACE
UNIT
systemctl daemon-reload
systemctl start bpftrace-rec.service || fail "systemctl start (--callstacks)"
wait_for 30 active || fail "not active after 30 s (--callstacks)"
sleep 2
caps_after_start 0000000000080000 # CAP_SYS_PTRACE (19) alone
load
stop_ok
samples=$(bpftrace-rec dump "$state/flight.pb" | grep ' perf_sample ')
k=$(grep -c 'stack=__schedule,' <<<"$samples")
u=$(grep -c 'stack=__schedule,.*,__libc_start_main' <<<"$samples")
say "--callstacks: $(wc -l <<<"$samples") samples, $k with named kernel frames, $u reaching __libc_start_main"
grep 'stack=__schedule,.*,__libc_start_main' <<<"$samples" | sed -n 1,2p
[ "$k" -gt 0 ] || fail "no sample with named kernel frames"
[ "$u" -gt 0 ] || fail "no sample with named user frames"
rm -rf /etc/systemd/system/bpftrace-rec.service.d
systemctl daemon-reload

say "the triggers drop-in"
rm -f "$state"/flight.*.pb
mkdir -p /etc/systemd/system/bpftrace-rec.service.d
cat >/etc/systemd/system/bpftrace-rec.service.d/triggers.conf <<'UNIT'
[Service]
ExecStart=
ExecStart=/usr/bin/bpftrace-rec --quiet --buffer-size 64M -o /var/lib/bpftrace-rec/flight.pb --trigger D>30s --trigger name:deploy --trigger-delay 200ms
UNIT
systemctl daemon-reload
systemctl start bpftrace-rec.service || fail "systemctl start (triggers)"
wait_for 30 active || fail "not active after 30 s (triggers)"
wait_for 30 test -S /run/bpftrace-rec/trigger.sock || fail "no /run/bpftrace-rec/trigger.sock"
bpftrace-rec trigger deploy || fail "bpftrace-rec trigger deploy"
wait_for 30 settled "$state/flight.1.pb" || fail "no snapshot after the named trigger"
# whole outputs in variables, not piped to grep -q: this script runs as
# a unit, with SIGPIPE ignored, so a writer that grep -q leaves behind
# gets EPIPE, says so and fails the pipeline
snap=$(bpftrace-rec dump "$state/flight.1.pb") || fail "dump of the snapshot failed"
grep -q ' trigger name=deploy ' <<<"$snap" ||
	fail "the snapshot holds no Trigger packet"
journal=$(journalctl -u bpftrace-rec.service --no-pager)
grep -q 'trigger name:deploy fired' <<<"$journal" ||
	fail "no line of the trigger in the journal"
stop_ok
[ ! -e /run/bpftrace-rec/trigger.sock ] || fail "the socket is left after stop"
say "named trigger: snapshot $(stat -c %s "$state/flight.1.pb") bytes"
rm -rf /etc/systemd/system/bpftrace-rec.service.d
systemctl daemon-reload

say "remove and purge"
dpkg -r bpftrace-rec || fail "dpkg -r"
[ ! -e /usr/bin/bpftrace-rec ] || fail "the binary is left after dpkg -r"
[ ! -e /lib/systemd/system/bpftrace-rec.service ] || fail "the unit is left after dpkg -r"
[ -s "$state/flight.pb" ] || fail "dpkg -r removed the traces (only purge does)"
dpkg -P bpftrace-rec || fail "dpkg -P"
[ ! -e "$state" ] || fail "$state is left after purge"
say "passed"
finish 0
