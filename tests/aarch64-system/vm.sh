#!/bin/sh
# SPDX-License-Identifier: MIT
# vm.sh root | boot SCRIPT - a Debian arm64 system under qemu-system-aarch64
# (software emulation), for the AArch64 cells that need a real kernel:
# ptrace, perf events, valgrind (tests/aarch64-system/README.md).
#
#   vm.sh root          build (or reuse) the cached arm64 root: debootstrap
#                       --arch=arm64 --foreign, then its second stage under
#                       qemu-user (binfmt_misc), with the packages of
#                       PACKAGES.guest; prints the root's directory, and
#                       nothing else on stdout (system.mk takes it as the
#                       AArch64 build's sysroot): the tools' progress goes
#                       to stderr.
#   vm.sh stamp         print the stamp of the root this tree wants (what
#                       a cached root must have been built for)
#   vm.sh boot SCRIPT   boot it (Debian's linux-image-arm64 kernel and
#                       initrd, the root as a virtio disk in snapshot mode,
#                       so every boot starts from the same root) with this
#                       tree shared at /ju over virtio-9p, run
#                       `sh /ju/SCRIPT` as PID 1's child, and power off.
#                       SCRIPT's output is the console's; vm.sh exits with
#                       SCRIPT's status (2 when the guest never said).
#
#   JU_A64SYS_CACHE  where the root, its disk image and downloaded packages
#                    are kept (default ~/.cache/jitunwind/aarch64-system);
#                    they are rebuilt when PACKAGES.guest or this script's
#                    ROOT_VERSION changes
#   JU_A64SYS_SMP, JU_A64SYS_MEM   the VM's CPUs (default: this machine's)
#                    and memory in MiB (default 3072)
#   JU_A64SYS_TIMEOUT  seconds a boot may take in all (default 3000)
# Needs root (debootstrap, chroot, binfmt_misc).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SUITE=bookworm
ROOT_VERSION=2 # bump when the way the root is made changes
CACHE=${JU_A64SYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jitunwind/aarch64-system}
QEMU_USER=/usr/bin/qemu-aarch64-static
BINFMT=/proc/sys/fs/binfmt_misc

say() { printf 'aarch64-system: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, binfmt_misc)"

packages() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$HERE/PACKAGES.guest" | tr -s ' \t\n' ','; }
# The root is rebuilt when its packages change; its disk image, when the
# root or init.sh does.
STAMP=$({ echo "$ROOT_VERSION"; packages; } | sha256sum | cut -c1-16)
IMG_STAMP=$({ echo "$STAMP"; cat "$HERE/init.sh"; } | sha256sum | cut -c1-16)
R=$CACHE/root
IMG=$CACHE/root.img

# binfmt_misc runs arm64 programs through qemu-user, for the chroot of the
# second stage; the F flag opens the interpreter now, so the chroot needs no
# copy of it.  Registered only for as long as we need it, unless it was
# there before.
BINFMT_OURS=
binfmt_on() {
	[ -d "$BINFMT" ] || die "no $BINFMT"
	[ -f "$BINFMT/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT" ||
		die "cannot mount binfmt_misc"
	[ -e "$BINFMT/qemu-aarch64" ] && return 0
	[ -x "$QEMU_USER" ] || die "$QEMU_USER is missing (Debian package qemu-user-static)"
	printf '%s' ':ju-qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$QEMU_USER"':F' \
		> "$BINFMT/register" 2>/dev/null || [ -e "$BINFMT/ju-qemu-aarch64" ] ||
		die "cannot register qemu-aarch64 with binfmt_misc"
	BINFMT_OURS=1
}
binfmt_off() {
	if [ -n "$BINFMT_OURS" ] && [ -e "$BINFMT/ju-qemu-aarch64" ]; then echo -1 > "$BINFMT/ju-qemu-aarch64"; fi
	BINFMT_OURS=
}

in_root() { # CMD... : run in the root's chroot, with its own mounts
	unshare --mount --propagation private sh -c '
		R=$1; shift
		mount -t proc proc "$R/proc" && mount -t sysfs sysfs "$R/sys" && mount --bind /dev "$R/dev" || exit 1
		exec chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"' in-root "$R" "$@"
}

make_root() {
	mirror=$(sh "$ROOT/scripts/host-mirror.sh" "$SUITE") ||
		die "no '$SUITE' source in this machine's apt configuration"
	say "building the arm64 $SUITE root in $R (debootstrap, then its second stage under qemu-user)"
	rm -rf "$R" "$R.new" "$IMG" "$CACHE/stamp" "$CACHE/image.stamp"
	mkdir -p "$CACHE/archives"
	log=$CACHE/debootstrap.log
	t0=$(date +%s)
	if ! debootstrap --arch=arm64 --foreign --variant=minbase --cache-dir="$CACHE/archives" \
		--include="$(packages)" "$SUITE" "$R.new" "$mirror" > "$log" 2>&1; then
		tail -20 "$log" >&2
		die "debootstrap (first stage) failed; its log: $log"
	fi
	binfmt_on
	trap binfmt_off EXIT
	R=$R.new
	# An initrd of the few modules that find the root disk (MODULES=list),
	# set before the second stage so that every update-initramfs the
	# packages trigger makes that small one: "most" takes minutes under
	# qemu-user each time.
	mkdir -p "$R/etc/initramfs-tools/conf.d" "$R/usr/share/initramfs-tools/modules.d"
	echo MODULES=list > "$R/etc/initramfs-tools/conf.d/ju-modules"
	printf 'virtio_pci\nvirtio_mmio\nvirtio_blk\next4\n' > "$R/usr/share/initramfs-tools/modules.d/ju.conf"
	if ! in_root /debootstrap/debootstrap --second-stage >> "$log" 2>&1; then
		tail -20 "$R/debootstrap/debootstrap.log" "$log" >&2 2>/dev/null
		die "debootstrap (second stage, under qemu-user) failed; its log: $log"
	fi
	ls "$R"/boot/initrd.img-* >/dev/null 2>&1 || die "the second stage made no initrd; its log: $log"
	echo "ju-aarch64" > "$R/etc/hostname"
	binfmt_off
	trap - EXIT
	R=${R%.new}
	mv "$R.new" "$R"
	say "root built in $(($(date +%s) - t0)) s"
}

make_image() {
	say "making the root's disk image $IMG"
	install -m 755 "$HERE/init.sh" "$R/sbin/ju-init"
	size=$(du -sm "$R" | cut -f1)
	rm -f "$IMG.tmp"
	# room for the cells' own files is in tmpfs; this is the root as built
	mke2fs -q -t ext4 -d "$R" -L ju-root "$IMG.tmp" "$((size + size / 2 + 512))M" ||
		die "mke2fs -d failed"
	mv "$IMG.tmp" "$IMG"
}

ensure_root() {
	if [ "$(cat "$CACHE/stamp" 2>/dev/null)" != "$STAMP" ] || [ ! -d "$R" ]; then
		make_root
		echo "$STAMP" > "$CACHE/stamp"
	fi
	if [ "$(cat "$CACHE/image.stamp" 2>/dev/null)" != "$IMG_STAMP" ] || [ ! -f "$IMG" ]; then
		make_image
		echo "$IMG_STAMP" > "$CACHE/image.stamp"
	fi
}

boot() {
	script=$1
	[ -f "$ROOT/$script" ] || die "no $script in $ROOT"
	command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 is missing (Debian package qemu-system-arm)"
	kernel=$(ls "$R"/boot/vmlinuz-* | sort -V | tail -1)
	initrd=$(ls "$R"/boot/initrd.img-* | sort -V | tail -1)
	[ -f "$kernel" ] && [ -f "$initrd" ] || die "no kernel or initrd in $R/boot"
	rcfile=$ROOT/build/aarch64-system/guest.rc
	envfile=$ROOT/build/aarch64-system/guest.env
	mkdir -p "$(dirname "$rcfile")"
	rm -f "$rcfile"
	# the settings the guest's scripts take, passed on (init.sh reads them)
	env | grep -E '^(JU_A64S_[A-Z_]*|MX_TIME_SCALE|JU_TEST_TIMEOUT|JS_RECORD_MODES)=' |
		sed -e "s/'/'\\\\''/g" -e "s/=/='/" -e "s/\$/'/" -e 's/^/export /' > "$envfile" || true
	smp=${JU_A64SYS_SMP:-$(nproc)}
	say "booting $(basename "$kernel") ($smp CPUs, ${JU_A64SYS_MEM:-3072} MiB) to run $script"
	t0=$(date +%s)
	set +e
	timeout -k 10 "${JU_A64SYS_TIMEOUT:-3000}" qemu-system-aarch64 -M virt -cpu cortex-a72 \
		-accel tcg,thread=multi -smp "$smp" -m "${JU_A64SYS_MEM:-3072}" -nographic -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "root=/dev/vda rw console=ttyAMA0 quiet init=/sbin/ju-init ju.run=$script ju.rc=${rcfile#"$ROOT"/} ju.env=${envfile#"$ROOT"/}" \
		-drive "file=$IMG,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$ROOT,mount_tag=ju,security_model=none" \
		-nic none </dev/null
	qrc=$?
	set -e
	say "the VM ran $(($(date +%s) - t0)) s (qemu exit $qrc)"
	[ -f "$rcfile" ] || { say "the guest never reported $script's status"; exit 2; }
	exit "$(cat "$rcfile")"
}

case ${1:-} in
# the tools a build runs write to stdout (mke2fs -d names every file it
# copies, even with -q): in `root`, stdout is the path alone
root) ensure_root >&2; echo "$R" ;;
stamp) echo "$STAMP" ;;
boot) [ $# = 2 ] || die "usage: vm.sh boot SCRIPT (a path inside the tree)"; ensure_root >&2; boot "$2" ;;
*) die "usage: vm.sh root | stamp | boot SCRIPT" ;;
esac
