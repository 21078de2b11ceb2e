# SPDX-License-Identifier: MIT
# `vm.sh root` (make check-aarch64-system) prints the root's directory and
# nothing else on stdout, also on a first run that makes the root's disk
# image, since system.mk takes that stdout as the cross build's sysroot.
# The cache is new and holds a small stand-in root with the stamp this tree
# wants (`vm.sh stamp`), so the disk image is made here, with the real
# mke2fs -d, as on a first run; building the arm64 root itself (debootstrap,
# minutes) is what make check-aarch64-system does.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "vm.sh needs root"
need_cmd mke2fs
VM=$ROOT/tests/aarch64-system/vm.sh
C=$T/cache
mkdir -p "$C/root/sbin" "$C/root/etc" || fail "mkdir"
echo stand-in > "$C/root/etc/hostname"
JU_A64SYS_CACHE=$C sh "$VM" stamp > "$C/stamp" || fail "vm.sh stamp"
JU_A64SYS_CACHE=$C limit 120 sh "$VM" root > out 2> err || { cat out err; fail "vm.sh root"; }
[ -f "$C/root.img" ] || { cat err; fail "no disk image was made: the stand-in root was not taken"; }
grep -q "making the root's disk image" err || { cat err; fail "the image's progress is not on stderr"; }
printf '%s\n' "$C/root" > want
cmp -s want out || { echo "stdout:"; cat out; fail "vm.sh root printed more than the root's directory"; }
# a second run reuses both and prints the same
JU_A64SYS_CACHE=$C limit 60 sh "$VM" root > out2 2> err2 || { cat err2; fail "vm.sh root, again"; }
cmp -s want out2 || { cat out2; fail "the second run's stdout"; }
[ -s err2 ] && { cat err2; fail "the second run rebuilt something"; }
pass "stdout is the root's path alone, when the image is made and when it is reused"
