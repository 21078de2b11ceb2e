#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz-corpus.sh BUILD DIR - seed jitstack's fuzz corpus: the images real
# targets register (copied by jitstack itself, JITSTACK_DUMP_IMAGES), and
# target memories that hold a descriptor, its entries and those images
# (FUZZ_BASE layout of fuzz_reader.c), with and without the extension.
BUILD=$1
DIR=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
. "$ROOT/tests/kill-tree.sh"
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd) || exit 1 # the work happens elsewhere
W=$(mktemp -d)
touch "$W/.start"
trap 'kill_tree $PIDS; for p in $PIDS; do wait $p 2>/dev/null; done
	sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
PIDS=
cd "$W" || exit 1
export JITDUMPDIR=$W

dump() { # OUT PROGRAM ARGS...: start it, copy its images, stop it
	out=$1; shift
	"$@" > "$out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	for _ in $(seq 100); do grep -qE '^ready|waiting' "$out" && break; sleep 0.05; done
	JITSTACK_DUMP_IMAGES="$DIR" "$BUILD/jitstack/jitstack" -p "$pid" > /dev/null 2>&1
	kill_tree "$pid"
}

dump c.out "$BUILD/tests/child" wait
for cfi in region exact; do
	TJ_PROBE_WAIT=20 dump t.out "$BUILD/tinyjit/tinyjit" --cfi=$cfi "$ROOT/tinyjit/examples/probe.tj" 2 3
done
dump f1.out "$BUILD/jitstack/tests/foreignjit" wait "$BUILD/jitstack/tests/jitobj.o"
dump f2.out "$BUILD/jitstack/tests/foreignjit" wait "$BUILD/jitstack/tests/jitobj-df.o"
dump h.out "$BUILD/jitstack/tests/hostile" badcfi wait
# an AArch64 image: from the core of the cross-built child under qemu-user
if [ -x "$BUILD/aarch64/child" ] && command -v qemu-aarch64 >/dev/null 2>&1; then
	sh -c 'ulimit -c unlimited && QEMU_LD_PREFIX=/usr/aarch64-linux-gnu exec qemu-aarch64 "$1" trap' \
		sh "$BUILD/aarch64/child" > a.out 2>&1
	for c in qemu_*.core; do
		[ -f "$c" ] && JITSTACK_DUMP_IMAGES="$DIR" "$BUILD/jitstack/jitstack" --core "$c" \
			--exe "$BUILD/aarch64/child" > /dev/null 2>&1
	done
	rm -f qemu_*.core core core.*
fi

# LLVM's lazy ORC JIT: one image per function and one for the globals,
# whose relocations name each other's symbols; kept apart in lli/ for the
# list of them all below
if command -v lli-19 >/dev/null 2>&1 && command -v clang-19 >/dev/null 2>&1 &&
	clang-19 -g -O0 -S -emit-llvm -o rec.ll "$ROOT/jitstack/tests/rec.c"; then
	mkdir -p lli
	lli-19 -jit-kind=orc-lazy rec.ll > lli.out 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	for _ in $(seq 400); do grep -q '^ready' lli.out && break; sleep 0.05; done # lli starts slowly
	JITSTACK_DUMP_IMAGES="$W/lli" "$BUILD/jitstack/jitstack" -p "$pid" > /dev/null 2>&1
	kill_tree "$pid"
	cp lli/image-*.elf "$DIR/" 2>/dev/null
fi

# images built to reach the string-table reads (the crash of elf_strptr
# over headers a relocation rewrote)
python3 "$ROOT/jitstack/tests/hostile-images.py" "$DIR"
# what the last long campaign kept (docs/FUZZING.md), minimised; it ran
# each reader alone (JS_FUZZ_ONLY), so the perf map's and the jitdump's
# inputs get back the prefix that names their reader here
C=$ROOT/tests/fuzz-corpora
cp "$C"/jitstack-image/* "$C"/jitstack-mem/* "$DIR/" 2>/dev/null
for kind in pmap jdmp; do
	for f in "$C/jitstack-$kind"/*; do
		[ -f "$f" ] && { printf '%s' "$kind" | tr a-z A-Z; cat "$f"; } > "$DIR/$kind-${f##*/}"
	done
done

# target memories: descriptor at 0, entry at 0x100, image at 0x200
python3 - "$DIR" <<'PY'
import glob, os, struct, sys
d = sys.argv[1]
BASE = 0x10000
for n, path in enumerate(sorted(glob.glob(os.path.join(d, "image-*.elf")))[:8]):
    img = open(path, "rb").read()
    for ext in (False, True):
        desc = struct.pack("<IIQQ", 1, 1, BASE + 0x100, BASE + 0x100)
        if ext:
            desc += b"JITUNWND" + struct.pack("<IIIIQQQQQ", 1, 0, 88, 64, 2, 0, 0, 1, 0)
        entry = struct.pack("<QQQQ", 0, 0, BASE + 0x200, len(img))
        if ext:
            entry += struct.pack("<QQQQ", 2, 0, 0, 0)
        mem = desc.ljust(0x100, b"\0") + entry.ljust(0x100, b"\0") + img
        open(os.path.join(d, "mem-%d-%s" % (n, "ext" if ext else "plain")), "wb").write(mem)
# one list of every lli image: entries at 0x100 + 0x40 k, images from 0x1000
imgs = [open(p, "rb").read() for p in sorted(glob.glob("lli/image-*.elf"))[:15]]
if imgs:
    at, entries, blob = 0x1000, b"", b""
    for k, img in enumerate(imgs):
        nxt = BASE + 0x100 + 0x40 * (k + 1) if k + 1 < len(imgs) else 0
        entries += struct.pack("<QQQQ", nxt, 0, BASE + at + len(blob), len(img)).ljust(0x40, b"\0")
        blob += img.ljust((len(img) + 15) & ~15, b"\0")
    desc = struct.pack("<IIQQ", 1, 1, BASE + 0x100, BASE + 0x100)
    mem = desc.ljust(0x100, b"\0") + entries.ljust(at - 0x100, b"\0") + blob
    open(os.path.join(d, "mem-lli-list"), "wb").write(mem)
PY
# perf maps: the child's own, and one with overlaps, tombstones and bad lines
JITUNWIND=perfmap "$BUILD/tests/child" wait > p.out 2>&1 &
pid=$!
PIDS="$PIDS $pid"
for _ in $(seq 100); do grep -q '^ready' p.out && break; sleep 0.05; done
{ printf 'PMAP\200'; cat "/tmp/perf-$pid.map"; } > "$DIR/pmap-child" 2>/dev/null
kill_tree "$pid"
printf 'PMAP\100%s' "1000 100 a
1080 100 b
#1000 100 dead
zz 1 bad
ffffffffffffff00 100 wraps
1000 0 zero
2000 10 caf\303\251 \377
1000 10 lat" > "$DIR/pmap-hostile"
# jitdumps: the child's (CODE_LOAD, DEBUG_INFO, UNWINDING_INFO), churnjit's
# (one address reused), and one of broken records
mkdir -p jd
JITDUMPDIR=$W/jd JITUNWIND=jitdump "$BUILD/tests/child" wait > j.out 2>&1 &
pid=$!
PIDS="$PIDS $pid"
for _ in $(seq 100); do grep -q '^ready' j.out && break; sleep 0.05; done
for f in jd/.debug/jit/*/jit-"$pid".dump; do
	[ -f "$f" ] && { printf 'JDMP\200'; cat "$f"; } > "$DIR/jdmp-child"
done
kill_tree "$pid"
(cd jd && "$BUILD/jitstack/tests/churnjit" 0.3 jitdump > /dev/null 2>&1)
for f in jd/jit-*.dump; do
	[ -f "$f" ] && { printf 'JDMP\100'; head -c 4096 "$f"; } > "$DIR/jdmp-churn"
done
python3 - "$DIR" <<'PY'
import struct, sys
hdr = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 1, 1, 0)
def rec(i, body, ts=2):
    return struct.pack("<IIQ", i, 16 + len(body), ts) + body
load = lambda addr, size, name: rec(0, struct.pack("<IIQQQQ", 1, 1, addr, addr, size, 0) + name + b"\0" + b"\xcc" * size)
dbg = rec(2, struct.pack("<QQ", 0x1000, 2) + struct.pack("<Qii", 0x1000, 3, 0) + b"a.js\0" + struct.pack("<Qii", 0x1008, 4, 0) + b"\xff\0")
unw = rec(4, struct.pack("<QQQ", 24, 0, 0) + bytes(range(24)))
move = rec(1, struct.pack("<IIQQQQQ", 1, 1, 0x9000, 0x1000, 0x9000, 0x20, 0))
bad = struct.pack("<IIQ", 0, 8, 3)
data = hdr + dbg + unw + load(0x1000, 0x20, b"f") + move + load(0x1010, 0x40, b"g") + rec(77, b"xyz") + bad + load(0x5000, 8, b"h")
open(sys.argv[1] + "/jdmp-hostile", "wb").write(b"JDMP\x60" + data)
PY
ls "$DIR" | wc -l | sed 's/^/fuzz corpus: /; s/$/ inputs/'
