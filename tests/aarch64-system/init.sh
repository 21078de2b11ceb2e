#!/bin/sh
# SPDX-License-Identifier: MIT
# init.sh - PID 1 of the arm64 system VM (installed as /sbin/ju-init by
# vm.sh): mounts what the cells need, the tree over virtio-9p at /ju, runs
# the script the kernel command line names (ju.run=PATH, inside the tree),
# writes its exit status to ju.rc=PATH and powers off.  No services start.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH HOME=/root LANG=C.UTF-8 TERM=dumb
mount -t proc proc /proc 2>/dev/null
# TYPE DIR: mounted unless the initrd has moved one there already
mnt() { grep -q "^[^ ]* $2 " /proc/mounts || mount -t "$1" "$1" "$2"; }
mnt sysfs /sys
mnt devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mnt devpts /dev/pts
mnt tmpfs /dev/shm
mnt tmpfs /tmp
mnt tmpfs /run
mnt tracefs /sys/kernel/tracing 2>/dev/null
hostname ju-aarch64
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
run= rc= envf=
for w in $(cat /proc/cmdline); do
	case $w in ju.run=*) run=${w#ju.run=} ;; ju.rc=*) rc=${w#ju.rc=} ;; ju.env=*) envf=${w#ju.env=} ;; esac
done
off() { sync; echo o > /proc/sysrq-trigger; sleep 30; }
modprobe 9pnet_virtio 2>/dev/null; modprobe 9p 2>/dev/null
mkdir -p /ju
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 ju /ju; then
	echo "ju-init: cannot mount the tree over virtio-9p"
	off
fi
# the host's settings for the script (vm.sh writes them)
[ -n "$envf" ] && [ -f "/ju/$envf" ] && . "/ju/$envf"
echo "ju-init: $(uname -srm), $(nproc) CPUs; running $run"
cd /ju && sh "/ju/$run"
s=$?
echo "ju-init: $run exited $s"
[ -n "$rc" ] && echo "$s" > "/ju/$rc"
off
