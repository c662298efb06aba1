#!/bin/sh
# Regenerates vmlinux/<arch>/vmlinux.h from the running kernel's BTF, for
# the CO-RE BPF programs (make vmlinux). The header is committed.
set -eu
arch=${1:?usage: gen-vmlinux.sh ARCH}
btf=/sys/kernel/btf/vmlinux
[ -r "$btf" ] || { echo "gen-vmlinux: $btf not readable: kernel without BTF" >&2; exit 1; }
mkdir -p "vmlinux/$arch"
bpftool btf dump file "$btf" format c > "vmlinux/$arch/vmlinux.h.tmp"
mv "vmlinux/$arch/vmlinux.h.tmp" "vmlinux/$arch/vmlinux.h"
echo "vmlinux/$arch/vmlinux.h regenerated"
