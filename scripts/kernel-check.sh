#!/bin/bash
# Runs the recorder's kernel-sensitive tests (scripts/kernel/run-tests.sh:
# the bats files that load the BPF programs, natively and with every
# fallback forced) inside each kernel a fleet runs: Debian's packaged
# kernels, each booted under qemu (TCG: no KVM needed) with the host's
# root shared read-only (9p) under a tmpfs overlay, and the host's own
# kernel, directly. Prints each kernel's result and time; exits non-zero
# when any kernel fails, naming the kernel and the failed tests.
#
#   scripts/kernel-check.sh [--pass native|fallback]... [--tests "F..."]
#                           [--timeout SECONDS] [--jobs N] [KERNEL...]
#   scripts/kernel-check.sh --static [--timeout SECONDS] [--jobs N] [KERNEL...]
#
# KERNEL: host, or a Debian kernel package: a metapackage
# (linux-image-amd64, linux-image-rt-amd64, linux-image-6.12-amd64,
# linux-image-6.12-rt-amd64, ...: its current image is taken) or an image
# package. Default: the five of docs/kernels.md. --tests: bats files
# without .bats (default: run-tests.sh's list, whose fallback pass is
# cut down under emulation, see there). --timeout: per kernel (default
# 2400). --jobs: guests booted at once (default: the host's CPUs; a
# guest keeps one busy), after the host's own kernel, run alone.
# --static: the light mode instead: each kernel boots an initramfs of
# busybox and the static binary alone (make static), whose
# /init (scripts/kernel/static-init.sh) records with it, plain and with
# call stacks, and reads the traces back; no host root, no module (default
# kernels: the four Debian ones, timeout 300). Needs root; installs
# qemu-system-x86, busybox-static, kmod and cpio when missing. Images
# are cached in $BTR_KERNEL_CACHE (default $TMPDIR/btr-kernels); logs go
# to $OUT/kernel-check/KERNEL/.
set -euo pipefail

KERNELS_DEFAULT=(host linux-image-amd64 linux-image-rt-amd64
	linux-image-6.12-amd64 linux-image-6.12-rt-amd64)
NEEDS="qemu-system-x86 busybox-static kmod cpio xz-utils"
# The modules that reach the host's root: virtio's PCI transport (built
# in from 6.12), 9p over virtio, overlayfs; and what the tests mount: an
# ext4 filesystem (and its crc32c) on a loop device.
MODULES="kernel/drivers/virtio/virtio_pci.ko kernel/net/9p/9pnet_virtio.ko
kernel/fs/9p/9p.ko kernel/fs/overlayfs/overlay.ko
kernel/drivers/block/loop.ko kernel/crypto/crc32c_generic.ko
kernel/fs/ext4/ext4.ko"

log() { printf 'kernel-check: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

passes=() tests="" timeout="" kernels=() static=0 jobs=$(nproc)
while [ $# -gt 0 ]; do
	case $1 in
	--pass) passes+=(--pass "${2:?--pass needs native or fallback}"); shift 2 ;;
	--tests) tests=${2:?--tests needs file names}; shift 2 ;;
	--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
	--static) static=1; shift ;;
	-h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) log "unknown option: $1 (see --help)"; exit 64 ;;
	*) kernels+=("$1"); shift ;;
	esac
done
if [ "$static" -eq 1 ]; then
	[ ${#passes[@]} -eq 0 ] && [ -z "$tests" ] ||
		{ log "--static runs no tests: no --pass or --tests"; exit 64; }
	[ ${#kernels[@]} -gt 0 ] || kernels=("${KERNELS_DEFAULT[@]:1}")
	for k in "${kernels[@]}"; do
		[ "$k" != host ] || { log "--static boots Debian kernels; on the host run build/static/bpftrace-rec itself"; exit 64; }
	done
	timeout=${timeout:-300}
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { log "--jobs takes a positive number, not '$jobs'"; exit 64; }
[ ${#kernels[@]} -gt 0 ] || kernels=("${KERNELS_DEFAULT[@]}")
timeout=${timeout:-2400}
[ "$(id -u)" -eq 0 ] || die "must run as root (BPF, qemu's 9p export of /)"

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$repo"
OUT=${OUT:-build}
# Perfetto's trace_processor_shell, which the tests hold traces against
# (tests/cli/helpers.bash): an absolute path, the same in the guests
TRACE_PROCESSOR=${TRACE_PROCESSOR:-$(command -v trace_processor_shell || true)}
if [ "$static" -eq 0 ]; then
	[ -n "$TRACE_PROCESSOR" ] && [ -x "$TRACE_PROCESSOR" ] ||
		die "no trace_processor_shell: put it on PATH or set TRACE_PROCESSOR (see README.md)"
	TRACE_PROCESSOR=$(realpath "$TRACE_PROCESSOR")
	export TRACE_PROCESSOR
fi
cache=${BTR_KERNEL_CACHE:-${TMPDIR:-/tmp}/btr-kernels}
results=$repo/$OUT/kernel-check
mkdir -p "$cache" "$results"

missing=""
for p in $NEEDS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fi

log "building"
make --no-print-directory deps >/dev/null
if [ "$static" -eq 1 ]; then
	make --no-print-directory -j"$(nproc)" OUT="$OUT" static >/dev/null
	static_bin=$repo/$OUT/static/bpftrace-rec
else
	make --no-print-directory -j"$(nproc)" OUT="$OUT" all >/dev/null
fi

# The image package behind a name: a metapackage's current dependency,
# or the name itself when it is an image package.
image_package() {
	local dep
	dep=$(apt-cache depends --no-recommends --no-suggests "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$dep" ] && [[ $1 == linux-image-[0-9]* ]] &&
		apt-cache show "$1" >/dev/null 2>&1; then
		dep=$1
	fi
	[ -n "$dep" ] && echo "$dep"
}

# Downloads and unpacks image package $1 into the cache; prints the folder.
fetch_kernel() {
	local pkg=$1 ver dir
	ver=$(apt-cache policy "$pkg" | awk '/Candidate:/ { print $2 }')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no package $pkg"
	dir=$cache/${pkg}_$ver
	if [ ! -e "$dir/.done" ]; then
		rm -rf "$dir" "$dir.dl"
		mkdir -p "$dir.dl"
		(cd "$dir.dl" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
			die "cannot download $pkg=$ver"
		dpkg-deb -x "$dir.dl"/*.deb "$dir"
		rm -rf "$dir.dl"
		depmod -b "$dir" "$(ls "$dir/lib/modules")"
		touch "$dir/.done"
	fi
	echo "$dir"
}

# The modules of $MODULES in kernel folder $1 with what they need, each
# after its dependencies (modules.dep), one path a line.
module_order() {
	local kdir=$1 v dep
	v=$(ls "$kdir/lib/modules")
	dep=$kdir/lib/modules/$v/modules.dep
	local m
	for m in $MODULES; do
		awk -v want="$m" '
			{ sub(/:$/, "", $1); name = $1; sub(/\.xz$/, "", name)
			  deps[name] = ""; file[name] = $1
			  for (i = 2; i <= NF; i++) { d = $i; sub(/\.xz$/, "", d); deps[name] = deps[name] " " d } }
			function visit(n,   k, a, c) {
				if (!(n in file) || (n in seen)) return
				seen[n] = 1
				c = split(deps[n], a, " ")
				for (k = c; k >= 1; k--) visit(a[k])
				print file[n]
			}
			END { visit(want) }' "$dep"
	done | awk '!seen[$0]++'
}

# The initramfs of kernel folder $1: busybox, the modules, guest-init.sh;
# with --static, busybox, the static binary and static-init.sh alone.
make_initramfs() {
	local kdir=$1 out tmp i=0 m v key
	if [ "$static" -eq 1 ]; then
		# in the cache of no kernel: the same for all of them
		key=$(cat scripts/kernel/static-init.sh "$static_bin" | sha256sum | cut -c1-12)
		out=$cache/kcheck-static-initrd-$key.cpio.gz
	else
		# named after what it holds: rebuilt when the init or the modules change
		key=$( (cat scripts/kernel/guest-init.sh; echo "$MODULES") | sha256sum | cut -c1-12)
		out=$kdir/kcheck-initrd-$key.cpio.gz
	fi
	[ -s "$out" ] && { echo "$out"; return; }
	v=$(ls "$kdir/lib/modules")
	tmp=$(mktemp -d)
	mkdir -p "$tmp"/{bin,proc,sys,dev,modules,tmp}
	cp /bin/busybox "$tmp/bin/busybox"
	if [ "$static" -eq 1 ]; then
		rm -f "$cache"/kcheck-static-initrd-*.cpio.gz
		install -m 0755 scripts/kernel/static-init.sh "$tmp/init"
		install -m 0755 "$static_bin" "$tmp/bpftrace-rec"
		rmdir "$tmp/modules"
	else
		install -m 0755 scripts/kernel/guest-init.sh "$tmp/init"
	fi
	[ "$static" -eq 1 ] || for m in $(module_order "$kdir"); do
		i=$((i + 1))
		local dst
		dst=$tmp/modules/$(printf '%02d' $i)-$(basename "${m%.xz}")
		case $m in
		*.xz) xz -dc "$kdir/lib/modules/$v/$m" >"$dst" ;;
		*) cp "$kdir/lib/modules/$v/$m" "$dst" ;;
		esac
	done
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.part"
	rm -rf "$tmp"
	mv "$out.part" "$out"
	echo "$out"
}

run_args=("${passes[@]}")
# shellcheck disable=SC2206
[ -n "$tests" ] && run_args+=($tests)

# Boots kernel folder $1 with initramfs $2; the results in $3.
boot_kernel() {
	local kdir=$1 initrd=$2 res=$3 vmlinuz
	vmlinuz=$(ls "$kdir"/boot/vmlinuz-*)
	echo "$repo" >"$res/repo"
	local args=""
	[ ${#run_args[@]} -gt 0 ] && args=$(printf '%q ' "${run_args[@]}")
	# the guest sees the host's root: the same trace_processor path
	printf 'BTR_EMULATED=1 OUT=%q TRACE_PROCESSOR=%q exec bash scripts/kernel/run-tests.sh %s\n' \
		"$OUT" "$TRACE_PROCESSOR" "$args" >"$res/cmd"
	rm -f "$res/rc" "$res/log"
	if [ "$static" -eq 1 ]; then
		boot_static "$vmlinuz" "$initrd" "$res"
		return
	fi
	# One TCG thread for both vCPUs: with a thread each (thread=multi) a
	# vCPU could go on running a stale translation of kernel text that
	# the other was patching (text_poke_bp's int3, as attaching and
	# detaching tracepoints does): seen on 6.1 as a vCPU looping in
	# exc_int3 while the other waited for it in on_each_cpu, forever.
	timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max -smp 2 -m 3072 \
		-nographic -no-reboot -nic none \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet ignore_loglevel softlockup_panic=1 softlockup_all_cpu_backtrace=1" \
		-virtfs local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap \
		-virtfs "local,path=$res,mount_tag=out,security_model=none" \
		</dev/null >"$res/console" 2>&1 || true
}

# --static: boots kernel $1 with initramfs $2, no device but the serial
# console, whose lines from static-init.sh make the results in $3.
boot_static() {
	local vmlinuz=$1 initrd=$2 res=$3
	timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max -smp 2 -m 1024 \
		-nographic -no-reboot -nic none \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet" \
		</dev/null >"$res/console" 2>&1 || true
	tr -d '\r' <"$res/console" | sed -n 's/^.*kcheck-static: //p' >"$res/log"
	sed -n 's/^rc=//p' "$res/log" >"$res/rc"
	[ -s "$res/rc" ] || rm -f "$res/rc"
}

# The result of kernel $1 (its label $2), booted or run in $3 s: one
# summary line, and on failure the failed tests with what bats said.
collect() {
	local k=$1 label=$2 dt=$3 res=$results/$1 rc nok bad why
	rc=$(cat "$res/rc" 2>/dev/null || echo none)
	nok=$(grep -c '^ok ' "$res/log" 2>/dev/null || true)
	bad=$(awk '/^# pass / { p = $3; f = $5 } /^not ok / { sub(/^not ok [0-9]+ /, ""); print "  " p " " f ": " $0 }' "$res/log" 2>/dev/null || true)
	if [ "$rc" = 0 ] && [ -z "$bad" ] && [ "$nok" -gt 0 ]; then
		summary+=("$label: passed, $nok tests, $dt s")
		log "${summary[-1]}"
		return
	fi
	why="exit $rc"
	[ "$rc" = none ] && why="no result (boot failed or timed out after $timeout s; see $res/console)"
	summary+=("$label: FAILED ($why), $nok passed, $dt s")
	log "${summary[-1]}"
	if [ -n "$bad" ]; then
		mapfile -t lines <<<"$bad"
		summary+=("${lines[@]}")
		log "$bad"
		# what bats said of each failure (its "# " lines, the first 40),
		# so that a run whose guest logs are gone can still be read
		awk '/^not ok / { n = 0; on = 1; print "kernel-check:   " $0; next }
			/^(ok|not ok) / { on = 0 }
			on && /^# / && n++ < 40 { print "kernel-check:     " $0 }
			on && !/^# / { on = 0 }' "$res/log" >&2 || true
	elif [ "$rc" = none ] && [ -s "$res/log" ]; then
		# a guest cut short: where its tests were
		log "  the last lines of its log:"
		grep -a -E '^(ok|not ok|# pass)' "$res/log" | tail -3 | sed 's/^/kernel-check:     /' >&2 || true
	fi
	failed+=("$k")
}

failed=()
summary=()
guests=()
declare -A label_of kdir_of initrd_of
# The host's own kernel first, alone: its tests run on real CPUs, and
# the guests would take them.
for k in "${kernels[@]}"; do
	res=$results/$k
	rm -rf "$res"
	mkdir -p "$res"
	if [ "$k" = host ]; then
		label="host ($(uname -r))"
		log "$label: running the tests"
		t0=$SECONDS
		rc=0
		OUT=$OUT bash scripts/kernel/run-tests.sh ${run_args[@]+"${run_args[@]}"} \
			>"$res/log" 2>&1 || rc=$?
		echo "$rc" >"$res/rc"
		collect "$k" "$label" $((SECONDS - t0))
	else
		pkg=$(image_package "$k") ||
			{ apt-get update -qq && pkg=$(image_package "$k"); } ||
			die "no kernel package $k (apt-cache knows none)"
		guests+=("$k")
		label_of[$k]="$k ($pkg)"
		kdir_of[$k]=$(fetch_kernel "$pkg")
		initrd_of[$k]=$(make_initramfs "${kdir_of[$k]}")
	fi
done
# Then the Debian kernels, $jobs guests at a time: each guest's two vCPUs
# run on one TCG thread, so one guest keeps one host CPU busy.
running=0
for k in ${guests[@]+"${guests[@]}"}; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	log "${label_of[$k]}: booting under qemu"
	(
		t0=$SECONDS
		boot_kernel "${kdir_of[$k]}" "${initrd_of[$k]}" "$results/$k"
		echo $((SECONDS - t0)) >"$results/$k/time"
	) &
	running=$((running + 1))
done
wait
for k in ${guests[@]+"${guests[@]}"}; do
	collect "$k" "${label_of[$k]}" "$(cat "$results/$k/time")"
done

# what the recorder took on each kernel (run-tests.sh's -v lines)
for k in "${kernels[@]}"; do
	echo "kernel-check: features on $k:"
	grep '^# \(kernel: \|warning: \)' "$results/$k/log" 2>/dev/null | sed 's/^# /    /' || true
done

echo "kernel-check summary:"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo "kernel-check: FAILED on ${failed[*]} (logs in $results)"
	exit 1
fi
echo "kernel-check: all ${#kernels[@]} kernels passed"
