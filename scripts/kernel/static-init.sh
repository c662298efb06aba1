#!/bin/busybox sh
# /init of the light initramfs of scripts/kernel-check.sh --static:
# busybox, the static binary (/bpftrace-rec) and this script, nothing else
# (no module, no library, no root of the host's). Mounts what the recorder
# reads (proc, sysfs and the kernel's BTF, tracefs, debugfs, bpffs),
# records, reads the traces back, and prints TAP lines on the console,
# each prefixed "kcheck-static: " (the host takes them from there), the
# exit status last as "kcheck-static: rc=N". Then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmp /tmp
BTR=/bpftrace-rec

out() { echo "kcheck-static: $*" >/dev/console; }
n=0 failed=0
# check DESCRIPTION COMMAND...: one TAP line; the output of a failed one
check() {
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >/tmp/check.log 2>&1; then
		out "ok $n $desc"
	else
		failed=$((failed + 1))
		out "not ok $n $desc"
		while IFS= read -r l; do out "#   $l"; done </tmp/check.log
	fi
}
# recorded LOG: the summary line counts events
recorded() { grep -q 'recorded [1-9][0-9]* events' "$1"; }

record_plain() {
	$BTR -v -d 2s -o /t.pb 2>/tmp/plain.err || { cat /tmp/plain.err; return 1; }
	recorded /tmp/plain.err || { cat /tmp/plain.err; return 1; }
	[ -s /t.pb ] && $BTR stats /t.pb >/dev/null
}
# every sleep's blocked function and call stacks, while busybox sleeps
# and wakes (S sleeps in nanosleep)
record_stacks() {
	(i=0; while [ $i -lt 400 ]; do usleep 5000; i=$((i + 1)); done) &
	$BTR -d 2s --callstacks --blocked-reason all -o /c.pb 2>/tmp/stacks.err
	rc=$?
	wait
	[ $rc -eq 0 ] && recorded /tmp/stacks.err || { cat /tmp/stacks.err; return 1; }
	$BTR dump /c.pb >/tmp/c.txt || return 1
	b=$(grep -c ' sched_blocked_reason .*function=[A-Za-z_]' /tmp/c.txt)
	s=$(grep -c ' perf_sample .*stack=__schedule,' /tmp/c.txt)
	echo "# --callstacks: $b blocked reasons with a function, $s samples with named kernel frames" >/tmp/stacks.sum
	cat /tmp/stacks.sum
	[ "$b" -gt 0 ] && [ "$s" -gt 0 ]
}

out "# kernel $(uname -r), busybox and $($BTR --version 2>&1 | head -1) alone"
check "bpftrace-rec -d 2s -o /t.pb records, and stats reads it" record_plain
# what the recorder took on this kernel, for kernel-check's summary
sed -n 's/^bpftrace-rec: \(debug: \)\{0,1\}\(kernel: .*\|warning: .*\)/\2/p' /tmp/plain.err |
	while IFS= read -r l; do out "# $l"; done
check "--callstacks --blocked-reason all: functions and kernel frames named" record_stacks
[ -s /tmp/stacks.sum ] && out "$(cat /tmp/stacks.sum)"
out "rc=$failed"
poweroff -f
