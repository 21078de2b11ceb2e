# jitstack record writes its profile whole or not at all (jitstack(1), -o):
#  - on a full disk (a 64 KiB tmpfs of its own, in a private mount
#    namespace, filled up), in each format, record exits 1 saying it
#    cannot write, and the old profile at -o is byte for byte as it was,
#    with no temporary file left beside it;
#  - interrupted (SIGINT) while it opens its target -- reading a perf map
#    of 256 MB -- record exits 1, says so, and leaves the old file as it
#    was;
#  - with room, the old file is replaced by a whole new profile.
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_file "$JTB/latethread" "make jitstack-check"
need_cmd unshare
[ "$(id -u)" = 0 ] || skip "a private tmpfs needs root (unshare -m, mount)"
start_child lt.out "$JTB/latethread" -1 0 0
P=$CHILD_PID
mkdir small
printf 'old;profile 1\n' > old.txt
for fmt in collapsed pprof svg; do
	# the profile's bytes cannot all go in: the tmpfs is full
	limit 60 unshare -m sh -c '
		mount -t tmpfs -o size=64k tmpfs small || exit 77
		cp old.txt small/prof
		dd if=/dev/zero of=small/fill bs=4k 2>/dev/null
		"$1" record --mode ptrace -p "$2" -F 200 -d 0.3 --format "$3" -o small/prof 2> rec.err
		echo $? > rc
		cmp -s old.txt small/prof && echo same > kept
		ls -A small > left' sh "$JS" "$P" $fmt
	[ $? -ne 77 ] || skip "cannot mount a tmpfs in a private mount namespace"
	[ "$(cat rc)" = 1 ] || { cat rec.err; fail "[$fmt] record on a full disk exited $(cat rc), want 1"; }
	grep -q "cannot write small/prof: No space left on device" rec.err || { cat rec.err; fail "[$fmt] no word of the full disk"; }
	[ -s kept ] || fail "[$fmt] the old profile was changed by a failed write"
	[ "$(cat left | tr '\n' ' ')" = "fill prof " ] || fail "[$fmt] left in the directory: $(cat left | tr '\n' ' ')"
	rm -f kept
	note "[$fmt] full disk: exit 1, the old profile kept, nothing else left"
done
# interrupted while it reads the target's perf map (256 MB, sparse)
MAP=/tmp/perf-$P.map
truncate -s 256M "$MAP"
cp old.txt prof
"$JS" record --mode ptrace -p "$P" -F 200 -d 5 -o prof 2> int.err &
J=$!
sleep 0.3
kill -INT $J
wait $J
rc=$?
rm -f "$MAP"
[ $rc = 1 ] || { cat int.err; fail "record interrupted while opening its target exited $rc, want 1"; }
grep -q "interrupted before sampling began: prof not written" int.err || { cat int.err; fail "no word of the interruption"; }
cmp -s old.txt prof || fail "an interrupted record changed the old profile"
[ "$(ls -A | grep -c '^\.prof\.')" = 0 ] || fail "an interrupted record left a temporary file"
note "interrupted: exit 1, the old profile kept"
# with room: replaced, whole
limit 60 "$JS" record --mode ptrace -p "$P" -F 200 -d 0.3 -o prof 2> ok.err || { cat ok.err; fail "record with room failed"; }
grep -q ";main_spin " prof || { cat prof; fail "the new profile has no main_spin"; }
! grep -q "old;profile" prof || fail "the old profile's lines are still there"
pass "record's profile is whole or the old one stays (full disk, interrupted, and with room)"
