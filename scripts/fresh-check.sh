#!/bin/bash
# Runs the README's two commands as a newcomer would: in a fresh minimal
# Debian 12 root (mmdebstrap minbase plus make, git and ca-certificates:
# no build dependency, no sudo), with the commit under test cloned to
# /root/p, as root, in a private mount namespace that has the host's /proc,
# /sys (without tracefs or any other mount under it) and /dev. Exits
# non-zero, naming the command, when either command fails.
#
#   scripts/fresh-check.sh [--rev REV] [--keep]
#
# REV is the commit to test (default HEAD; uncommitted changes are not
# tested). The minbase tarball is cached in $TMPDIR (default /tmp) between
# runs; --keep leaves the root behind for a look. Needs root and Debian's
# mmdebstrap (installed when missing).
set -euo pipefail

MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
SECURITY=${FRESH_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SUITE=bookworm
INCLUDE=make,git,ca-certificates
RECORD_CMD='make record RECORD_ARGS="-d 2s"'
TEST_CMD='make test'

log() { printf 'fresh-check: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

rev=HEAD keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--rev) rev=${2:?--rev needs a commit}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument: $1 (see --help)"; exit 64 ;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (mount namespaces, chroot, BPF)"
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
sha=$(git -C "$repo" rev-parse --verify "$rev^{commit}") || die "no commit $rev"

if ! command -v mmdebstrap >/dev/null; then
	log "installing mmdebstrap"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

# The minbase root, built once and cached: its name says what is in it.
cache=${TMPDIR:-/tmp}/btr-fresh-check
mkdir -p "$cache"
key=$(printf '%s\n' "$SUITE" "$INCLUDE" "$MIRROR" "$SECURITY" | sha256sum | cut -c1-12)
tarball=$cache/$SUITE-minbase-$key.tar
if [ ! -s "$tarball" ]; then
	log "building a minimal $SUITE root (mmdebstrap --variant=minbase)"
	mmdebstrap --quiet --variant=minbase --mode=root --format=tar --include="$INCLUDE" \
		"$SUITE" "$tarball.part" \
		"deb $MIRROR $SUITE main" \
		"deb $MIRROR $SUITE-updates main" \
		"deb $SECURITY $SUITE-security main" ||
		{ rm -f "$tarball.part"; die "mmdebstrap failed"; }
	mv "$tarball.part" "$tarball"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/btr-fresh.XXXXXX")
root=$work/root
cleanup() {
	# The mounts live in the child's private namespace and are gone with it;
	# refuse to delete anything still mounted below the root all the same.
	if grep -q " $root/" /proc/self/mountinfo; then
		log "mounts left under $root: not removing it"
	elif [ "$keep" -eq 1 ]; then
		log "root kept in $root"
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT

mkdir -p "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# trace_processor_shell, which the tests need and no Debian package has:
# put on the root's PATH, as a newcomer installs it (README.md)
tp=${TRACE_PROCESSOR:-$(command -v trace_processor_shell || true)}
[ -n "$tp" ] || die "no trace_processor_shell for the tests: set TRACE_PROCESSOR"
install -D -m 0755 "$tp" "$root/usr/local/bin/trace_processor_shell"
git clone -q --no-hardlinks --no-checkout "$repo" "$root/root/p"
git -C "$root/root/p" checkout -q "$sha"
log "testing ${sha:0:12} in $root (clone at /root/p)"

# In the new mount namespace: /proc and a fresh sysfs (no tracefs, debugfs,
# bpffs or cgroup mounted under it), the host's /dev, a tmpfs /run; then
# each command in a clean environment, from the clone.
# shellcheck disable=SC2016
inner='
set -eu
root=$1 record=$2 test=$3
mount --make-rprivate /
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/p && $1"
}
step() {
	local name=$1 cmd=$2 t0=$SECONDS
	echo "fresh-check: $name: $cmd" >&2
	local rc=0
	in_root "$cmd" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "fresh-check: FAILED: $name ($cmd) exited $rc after $((SECONDS - t0)) s" >&2
		exit 1
	fi
	echo "fresh-check: $name passed in $((SECONDS - t0)) s" >&2
}
if mountpoint -q "$root/sys/kernel/tracing"; then
	echo "fresh-check: tracefs is mounted in the fresh root" >&2
	exit 1
fi
step "README command 1 (record)" "$record && build/bpftrace-rec stats trace.pb"
step "README command 2 (tests)" "$test"
'
unshare --mount --propagation private -- bash -c "$inner" fresh-check \
	"$root" "$RECORD_CMD" "$TEST_CMD"
log "both README commands passed on a fresh $SUITE root"
