#!/bin/busybox sh
# /init of the initramfs that scripts/kernel-check.sh boots each kernel
# with (busybox, the modules that reach the host, this script). It makes a
# root of the host's own (9p, read-only, tag "host") with a tmpfs over it
# (overlayfs), mounts the results folder (tag "out") at /kcheck-out, then
# runs the command in /kcheck-out/cmd there, inside the new root, from the
# repository, and writes its exit status to /kcheck-out/rc. It powers the
# machine off at the end, whatever happened.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

say() { echo "kernel-check guest: $*" >/dev/console; }
fail() { say "$*"; poweroff -f; }

for m in /modules/*.ko; do
	[ -e "$m" ] || continue
	insmod "$m" || say "insmod $m failed"
done

mkdir -p /host /rw /root
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /host ||
	fail "cannot mount the host's root (9p)"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /root ||
	fail "cannot mount the overlay root"
mkdir -p /root/kcheck-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /root/kcheck-out ||
	fail "cannot mount the results folder (9p)"
mount -t proc proc /root/proc
mount -t sysfs sys /root/sys
mount -t devtmpfs dev /root/dev
mkdir -p /root/dev/pts /root/dev/shm
mount -t devpts devpts /root/dev/pts
ln -sf /proc/self/fd /root/dev/fd
ln -sf /proc/self/fd/0 /root/dev/stdin
ln -sf /proc/self/fd/1 /root/dev/stdout
ln -sf /proc/self/fd/2 /root/dev/stderr
mount -t tmpfs shm /root/dev/shm
mount -t tmpfs run /root/run
mount -t bpf bpf /root/sys/fs/bpf
mount -t tracefs tracefs /root/sys/kernel/tracing
mount -t debugfs debugfs /root/sys/kernel/debug
mount -t cgroup2 cgroup2 /root/sys/fs/cgroup
hostname kcheck
ip link set lo up 2>/dev/null

# what runs, every 30 s: a test that hangs shows where (ps in CI's log)
(while sleep 30; do ps -o pid,time,args >/root/kcheck-out/ps.part 2>&1 &&
	mv /root/kcheck-out/ps.part /root/kcheck-out/ps; done) &

repo=$(cat /root/kcheck-out/repo)
chroot /root /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	/bin/bash -c "cd '$repo' && exec bash /kcheck-out/cmd" \
	>/root/kcheck-out/log 2>&1
echo $? >/root/kcheck-out/rc
sync
umount /root/kcheck-out
poweroff -f
