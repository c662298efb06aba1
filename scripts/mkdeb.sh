#!/bin/bash
# Builds the Debian package of bpftrace-rec with dpkg-deb alone (no
# debhelper, no network): the static binary (make static) in /usr/bin, so
# the package has no library Depends and installs on any Debian or Ubuntu
# of the same architecture; the man page, the bash completion and the
# systemd unit, installed disabled. Prints the .deb's path.
#
#   scripts/mkdeb.sh STATIC_BINARY
#
# Environment: VERSION (the Makefile's), OUT (default build): the package
# goes to $OUT/bpftrace-rec_VERSION_ARCH.deb; DEB_MAINTAINER (default: the
# author of the repository's first commit). Files carry the time of the
# commit built (SOURCE_DATE_EPOCH), so the same commit gives the same .deb.
set -euo pipefail

log() { printf 'mkdeb: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ $# -eq 1 ] || { log "usage: scripts/mkdeb.sh STATIC_BINARY"; exit 64; }
bin=$1
[ -x "$bin" ] || die "no executable $bin (make static builds it)"
grep -q INTERP <<<"$(readelf -l "$bin" 2>/dev/null)" &&
	die "$bin is dynamically linked: the package holds the static build"
[ -n "${VERSION:-}" ] || die "VERSION is not set (make deb sets it)"

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$repo/$OUT ;; esac
arch=$(dpkg --print-architecture)
maint=${DEB_MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>' "$(git -C "$repo" rev-list --max-parents=0 HEAD | sed -n 1p)")}
first=$(git -C "$repo" log -1 --format=%ct "$(git -C "$repo" rev-list --max-parents=0 HEAD | sed -n 1p)")
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct)}
pkg=bpftrace-rec
stage=$OUT/deb/$pkg
deb=$OUT/${pkg}_${VERSION}_$arch.deb

rm -rf "$stage"
doc=$stage/usr/share/doc/$pkg
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/man/man8" \
	"$stage/usr/share/bash-completion/completions" "$stage/lib/systemd/system" "$doc"
# as dh_strip strips an executable: the package ships no debug info
strip --remove-section=.comment --remove-section=.note -o "$stage/usr/bin/$pkg" "$bin"
chmod 0755 "$stage/usr/bin/$pkg"
gzip -9n <"$repo/scripts/bpftrace-rec.8" >"$stage/usr/share/man/man8/$pkg.8.gz"
install -m 0644 "$repo/scripts/bpftrace-rec.bash-completion" \
	"$stage/usr/share/bash-completion/completions/$pkg"
sed 's|@BINDIR@|/usr/bin|' "$repo/scripts/bpftrace-rec.service" \
	>"$stage/lib/systemd/system/$pkg.service"
chmod 0644 "$stage/lib/systemd/system/$pkg.service"

# A native package's changelog and copyright (Debian policy 12.5, 12.7).
{
	printf '%s (%s) unstable; urgency=medium\n\n' "$pkg" "$VERSION"
	printf '  * Built from commit %s.\n\n' "$(git -C "$repo" rev-parse --short=12 HEAD)"
	printf ' -- %s  %s\n' "$maint" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: $pkg
Comment: Built by scripts/mkdeb.sh from the bpftrace-rec repository. The
 binary is linked statically with Debian 12's libbpf, libelf, libdw,
 libarchive, nettle, protobuf-c, json-c, libcap, zstd, xz, bzip2 and zlib;
 their copyright files are in the Debian packages of those names.

Files: *
Copyright: $(date -u -d "@$first" +%Y) the bpftrace-rec authors
License: unstated
 The repository states no license of its own; its BPF program declares
 the license "GPL" to the kernel.
EOF
chmod 0644 "$doc"/*
# What lintian says of any static binary, and why this one is: the point
# of the package is one file that needs no library on the host.
install -d "$stage/usr/share/lintian/overrides"
cat >"$stage/usr/share/lintian/overrides/$pkg" <<EOF
# One file to deploy on any host: linked statically on purpose (make
# static), with Debian 12's own static libraries, not modified copies.
$pkg: statically-linked-binary [usr/bin/$pkg]
$pkg: embedded-library bzip2 [usr/bin/$pkg]
$pkg: embedded-library zlib [usr/bin/$pkg]
EOF
chmod 0644 "$stage/usr/share/lintian/overrides/$pkg"

# Maintainer scripts. The unit is never enabled or started by the package.
# An upgrade does not restart a running recorder: stopping it writes its
# final trace, and the new one would start by truncating that file.
cat >"$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# bpftrace-rec: before removal, stop the recorder (it writes its trace).
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop bpftrace-rec.service >/dev/null || true
fi
EOF
cat >"$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# bpftrace-rec: systemd learns of the unit; it stays disabled.
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
EOF
cat >"$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# bpftrace-rec: systemd forgets the unit; purge removes its enablement
# and the traces it wrote (/var/lib/bpftrace-rec).
set -e
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = purge ]; then
	deb-systemd-helper purge bpftrace-rec.service >/dev/null || true
	rm -rf /var/lib/bpftrace-rec
fi
EOF
chmod 0755 "$stage/DEBIAN/prerm" "$stage/DEBIAN/postinst" "$stage/DEBIAN/postrm"

(cd "$stage" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: $pkg
Version: $VERSION
Architecture: $arch
Maintainer: $maint
Installed-Size: $size
Section: admin
Priority: optional
Description: scheduler recorder on eBPF writing Perfetto traces
 Records every CPU's context switches, wakeups, the sleeps' blocked
 functions and the processes and threads that came and went into a
 Perfetto trace, with overhead close to the cost of its BPF programs.
 Runs from a shell (bpftrace-rec -d 10s) or as an always-on flight
 recorder (bpftrace-rec.service, installed disabled).
 .
 The binary is statically linked: it needs a kernel with BTF
 (/sys/kernel/btf/vmlinux), 5.10 or newer, and nothing else.
EOF

mkdir -p "$(dirname "$deb")"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
log "built $deb"
echo "$deb"
