# SPDX-License-Identifier: MIT
# JIT code in two mmaps with the C library's mappings between them (the
# child's --apart: jit:fp below libc, jit:cfi and jit:region above it),
# published in one batch, as CPython publishes its scattered cold exits:
# no GDB JIT image's code range, as jitstack --images reads it from the
# process, holds any address of another mapping of /proc/PID/maps, and
# jitstack and gdb name every frame of the stack, the three JIT frames
# included, down to main.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
JITSTACK=$BUILD/jitstack/jitstack
need_file "$JITSTACK" "make builds it"
start_child "$TB/child" wait --apart
cp "/proc/$CHILD_PID/maps" maps
limit 120 "$JITSTACK" -p "$CHILD_PID" --images > images.out 2>&1 || { cat images.out; fail "jitstack --images"; }
limit 120 "$JITSTACK" -p "$CHILD_PID" > js.out 2>&1 || { cat js.out; fail "jitstack"; }
gdb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"

# "code LO-HI" of each image, against every mapping that is not the JIT's
# code itself (the blobs' pages, from child.expect)
sed -n 's/.*, code \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2/p' images.out > ranges
[ "$(wc -l < ranges)" -ge 1 ] || { cat images.out; fail "jitstack lists no image"; }
python3 - ranges maps child.expect <<'PY' || { cat images.out; fail "an image's code range holds another mapping"; }
import sys
imgs = [tuple(int(x, 16) for x in l.split()) for l in open(sys.argv[1])]
jit_pages = set()
for l in open(sys.argv[3]):
    name, lo, hi, kind, fp = l.split()
    if kind != "c":
        for p in range(int(lo, 16) >> 12, ((int(hi, 16) - 1) >> 12) + 1):
            jit_pages.add(p)
bad = []
for l in open(sys.argv[2]):
    f = l.split()
    a, b = (int(x, 16) for x in f[0].split("-"))
    if any(p in jit_pages for p in range(a >> 12, b >> 12)):
        continue  # the JIT's own code
    for lo, hi in imgs:
        if a < hi and lo < b:
            bad.append("image [%#x, %#x) holds %s" % (lo, hi, l.strip()))
print("\n".join(bad[:5]))
sys.exit(1 if bad else 0)
PY
echo "$(wc -l < ranges) images, none over another mapping"
! grep -n 'overlaps' images.out js.out || fail "jitstack refused an image"
sed -n 's/^#[0-9]* *\(0x[0-9a-f]*\) \([^ +]*\).*/\1 \2/p' js.out > js.frames
check_frames child.expect < js.frames || { cat js.out; fail "jitstack does not name every frame"; }
check_frames child.expect < frames || { cat gdb.out; fail "gdb does not name every frame"; }
pass "images of JIT code on both sides of a shared library span none of it; jitstack and gdb name every frame"
