#!/bin/sh
# Installs the Debian 12 packages that building and testing bpftrace-rec
# need, when any is missing (nettle-dev, libbz2-dev and libzstd-dev for
# the static link of make static alone). Run as root (make deps / make
# test do it).
set -eu

PKGS="make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev
protobuf-c-compiler libprotobuf-c-dev protobuf-compiler libjson-c-dev
libarchive-dev libcap-dev libdw-dev libzstd-dev nettle-dev libbz2-dev bats jq linux-perf rt-tests bpftrace procps time strace
libclang-rt-14-dev util-linux mount e2fsprogs libprotobuf32 zlib1g"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (sudo make deps)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
