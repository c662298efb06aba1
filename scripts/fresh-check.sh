#!/bin/bash
# Runs the README's two commands as a newcomer would: in a fresh minimal
# Debian 12 root (mmdebstrap minbase plus make, git and ca-certificates:
# no build dependency, no sudo), with the commit under test cloned to
# /root/p, as root, in a private mount namespace that has the host's /proc,
# /sys (without tracefs or any other mount under it) and /dev. Then builds
# the package there (make deb), installs it in a second fresh root that
# has nothing else, records with it and reads the trace back, and hands
# that root to scripts/unit-check.sh, which boots it with systemd and runs
# the unit. Exits non-zero, naming the command, when any step fails.
#
#   scripts/fresh-check.sh [--rev REV] [--keep] [--no-suite]
#
# REV is the commit to test (default HEAD; uncommitted changes are not
# tested). The minbase tarball is cached in $TMPDIR (default /tmp) between
# runs; --keep leaves the roots behind for a look; --no-suite skips the
# second README command (make test: the whole suite). Needs root and
# Debian's mmdebstrap (installed when missing).
set -euo pipefail

INCLUDE=make,git,ca-certificates
RECORD_CMD='make record RECORD_ARGS="-d 2s"'
TEST_CMD='make test'
DEB_CMD='make deb'
# the installed binary alone: it says it recorded events, and reads its trace
# shellcheck disable=SC2016 # expanded in the root
PKG_RECORD_CMD='bpftrace-rec -d 2s -o t.pb 2>rec.err; rc=$?; cat rec.err >&2;
[ $rc -eq 0 ] && grep -q "recorded [1-9][0-9]* events" rec.err && bpftrace-rec stats t.pb >/dev/null'

log() { printf 'fresh-check: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

rev=HEAD keep=0 suite=1
while [ $# -gt 0 ]; do
	case $1 in
	--rev) rev=${2:?--rev needs a commit}; shift 2 ;;
	--keep) keep=1; shift ;;
	--no-suite) suite=0; shift ;;
	-h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument: $1 (see --help)"; exit 64 ;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (mount namespaces, chroot, BPF)"
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
sha=$(git -C "$repo" rev-parse --verify "$rev^{commit}") || die "no commit $rev"

# The minbase root, built once and cached: its name says what is in it.
# shellcheck source=scripts/lib/debroot.sh
. "$repo/scripts/lib/debroot.sh"
tarball=$(debroot_tarball "$INCLUDE") || die "no minimal root"
SUITE=$DEBROOT_SUITE

work=$(mktemp -d "${TMPDIR:-/tmp}/btr-fresh.XXXXXX")
root=$work/root
cleanup() {
	# The mounts live in the child's private namespace and are gone with it;
	# refuse to delete anything still mounted below the root all the same.
	if grep -q " $work/" /proc/self/mountinfo; then
		log "mounts left under $work: not removing it"
	elif [ "$keep" -eq 1 ]; then
		log "roots kept in $work"
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

# In a new mount namespace: /proc and a fresh sysfs (no tracefs, debugfs,
# bpffs or cgroup mounted under it), the host's /dev, a tmpfs /run; then
# each command in a clean environment, from folder DIR of the root.
#   in_namespace ROOT DIR NAME CMD [NAME CMD]...
# shellcheck disable=SC2016
inner='
set -eu
root=$1 dir=$2
shift 2
mount --make-rprivate /
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd $dir && $1"
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
while [ $# -gt 1 ]; do
	step "$1" "$2"
	shift 2
done
'
in_namespace() {
	unshare --mount --propagation private -- bash -c "$inner" fresh-check "$@"
}

steps=("README command 1 (record)" "$RECORD_CMD && build/bpftrace-rec stats trace.pb")
[ "$suite" -eq 1 ] && steps+=("README command 2 (tests)" "$TEST_CMD")
in_namespace "$root" /root/p "${steps[@]}" "the package (make deb)" "$DEB_CMD"
log "the README commands passed on a fresh $SUITE root"

# The package, in a second fresh root that has nothing else: dpkg -i, a
# recording, its trace read back; then the unit under systemd
# (scripts/unit-check.sh boots that root with systemd as PID 1).
debs=("$root"/root/p/build/bpftrace-rec_*.deb)
[ -f "${debs[0]}" ] || die "make deb left no package in build/"
deb=$work/$(basename "${debs[0]}")
cp "${debs[0]}" "$deb"
# lintian, on the host: errors and warnings fail (mkdeb.sh overrides the
# static binary's tags, with the reason)
if ! command -v lintian >/dev/null; then
	log "installing lintian"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lintian >/dev/null
fi
lintian --fail-on error,warning "$deb" || die "lintian finds fault with $(basename "$deb")"
pkgroot=$work/pkgroot
mkdir -p "$pkgroot"
tar -C "$pkgroot" -xf "$tarball"
cp "$deb" "$pkgroot/root/bpftrace-rec.deb"
in_namespace "$pkgroot" /root \
	"install the package" "dpkg -i /root/bpftrace-rec.deb" \
	"record with it" "$PKG_RECORD_CMD"
log "the package installs and records on a fresh $SUITE root"
cp /etc/resolv.conf "$pkgroot/etc/resolv.conf"
"$repo/scripts/unit-check.sh" --root "$pkgroot" --deb "$deb" ||
	die "the systemd unit failed (scripts/unit-check.sh)"
