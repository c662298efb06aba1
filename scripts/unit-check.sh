#!/bin/bash
# Tests the package's systemd unit under a real systemd: boots a Debian 12
# root with systemd as PID 1 (systemd-nspawn --boot, the host's kernel),
# where a oneshot unit runs scripts/unit/in-root.sh: install the .deb,
# systemctl start, a snapshot with systemctl kill -s USR1, an upgrade while
# it runs, systemctl stop, the traces read back (blocked functions and
# kernel frames named), remove and purge. Prints the guest's log; exits
# non-zero when any step failed.
#
#   scripts/unit-check.sh [--root DIR] [--deb FILE] [--timeout SECONDS]
#
# --root: a Debian 12 root to boot (fresh-check.sh passes the fresh root
# it installed the package in); systemd-sysv is installed in it when
# missing. Default: a fresh minbase root (scripts/lib/debroot.sh), removed
# afterwards. --deb: the package (default: make deb here). --timeout: for
# the boot (default 300). Needs root; installs systemd-container.
set -euo pipefail

log() { printf 'unit-check: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

root="" deb="" timeout=300
while [ $# -gt 0 ]; do
	case $1 in
	--root) root=${2:?--root needs a folder}; shift 2 ;;
	--deb) deb=${2:?--deb needs a file}; shift 2 ;;
	--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
	-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument: $1 (see --help)"; exit 64 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "must run as root (systemd-nspawn, BPF)"
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
t0=$SECONDS

if ! command -v systemd-nspawn >/dev/null; then
	log "installing systemd-container"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
		systemd-container >/dev/null
fi
if [ -z "$deb" ]; then
	make -C "$repo" --no-print-directory deps >/dev/null
	deb=$(make -C "$repo" --no-print-directory -s deb | tail -1)
fi
[ -f "$deb" ] || die "no package $deb"

work=""
cleanup() { [ -z "$work" ] || rm -rf --one-file-system "$work"; }
trap cleanup EXIT
if [ -z "$root" ]; then
	# shellcheck source=scripts/lib/debroot.sh
	. "$repo/scripts/lib/debroot.sh"
	tarball=$(debroot_tarball make,git,ca-certificates) || die "no minimal root"
	work=$(mktemp -d "${TMPDIR:-/tmp}/btr-unit.XXXXXX")
	root=$work/root
	mkdir -p "$root"
	tar -C "$root" -xf "$tarball"
fi
[ -d "$root/etc" ] || die "$root is no root folder"

# nspawn outside a systemd host: no scope unit, no machined; the
# recorder's system calls and capabilities let through
# shellcheck disable=SC2054 # a comma list is one argument
nspawn=(systemd-nspawn -q --keep-unit --register=no -D "$root"
	--capability=CAP_BPF,CAP_PERFMON,CAP_SYSLOG,CAP_SYS_PTRACE
	--system-call-filter="bpf perf_event_open")
dir=$root/unit-check
rm -rf "$dir"
mkdir -p "$dir"
if [ ! -x "$root/lib/systemd/systemd" ]; then
	log "installing systemd-sysv in the root"
	"${nspawn[@]}" --pipe /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd-sysv' \
		>"$dir/apt.log" 2>&1 </dev/null ||
		die "cannot install systemd-sysv in the root (see $dir/apt.log)"
fi

# the package, a later version of it for the upgrade, the test and its unit
cp "$deb" "$dir/bpftrace-rec.deb"
dpkg-deb -R "$deb" "$dir/up"
sed -i 's/^Version: .*/&+up1/' "$dir/up/DEBIAN/control"
dpkg-deb --root-owner-group -b "$dir/up" "$dir/bpftrace-rec-up.deb" >/dev/null
rm -rf "$dir/up"
install -m 0755 "$repo/scripts/unit/in-root.sh" "$dir/in-root.sh"
cat >"$root/etc/systemd/system/btr-unit-check.service" <<'EOF'
[Unit]
Description=bpftrace-rec unit check (scripts/unit-check.sh)
After=multi-user.target

[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/bash /unit-check/in-root.sh
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../btr-unit-check.service "$root/etc/systemd/system/multi-user.target.wants/"

log "booting $root with systemd (nspawn)"
timeout --foreground -k 10 "$timeout" "${nspawn[@]}" --boot </dev/null \
	>"$dir/console" 2>&1 || true
rm -f "$root/etc/systemd/system/multi-user.target.wants/btr-unit-check.service"
cat "$dir/log" 2>/dev/null || log "no log from the guest (see $dir/console)"
rc=$(cat "$dir/rc" 2>/dev/null || echo none)
if [ "$rc" != 0 ]; then
	[ "$rc" = none ] && tail -20 "$dir/console" >&2
	die "the unit check failed (exit $rc) after $((SECONDS - t0)) s"
fi
log "passed in $((SECONDS - t0)) s"
