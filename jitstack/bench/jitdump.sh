#!/bin/sh
# SPDX-License-Identifier: MIT
# jitdump.sh BUILD [MB] - jitstack on targets that write a perf jitdump:
#  1. node --perf-prof (progs/recurse-dump.js, 9 JS frames deep, its dump
#     settled): cold `jitstack -p PID` and `eu-stack -p PID` interleaved,
#     medians and their ratio;
#  2. the library's child (JITUNWIND=jitdump) whose dump gets MB megabytes
#     (default 100) of CODE_LOADs appended, apart from its own code: a cold
#     `jitstack -p`, and what a warm `jitstack record --mode ptrace` pays
#     per round (the source refresh, nothing appended) and per sample.
# Knob: JD_BENCH_RUNS (default 21).
BUILD=${1:?usage: jitdump.sh BUILD [MB]}
MB=${2:-100}
RUNS=${JD_BENCH_RUNS:-21}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
. "$ROOT/tests/kill-tree.sh"
JS=$BUILD/jitstack/jitstack
W=$(mktemp -d)
PIDS=
trap 'kill_tree $PIDS; for p in $PIDS; do wait $p 2>/dev/null; done; rm -rf "$W"' EXIT
cd "$W" || exit 1

ns() { t0=$(date +%s%N); "$@" > /dev/null 2>&1; echo $(( $(date +%s%N) - t0 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1e6 }'; }

if command -v node > /dev/null && command -v eu-stack > /dev/null; then
	node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack \
		"$ROOT/jitstack/tests/progs/recurse-dump.js" 8 > node.out 2>&1 &
	NODE=$!
	PIDS="$PIDS $NODE"
	sleep 5 # its churn is over by 3 s: the dump is settled
	: > js.t; : > eu.t
	for _ in $(seq "$RUNS"); do
		ns "$JS" -p "$NODE" >> js.t
		ns eu-stack -p "$NODE" >> eu.t
	done
	js=$(median < js.t); eu=$(median < eu.t)
	"$JS" -p "$NODE" --stats > node.txt 2> node.err
	echo "node $(node --version), dump $(stat -c %s jit-$NODE.dump) bytes: jitstack -p $js ms, eu-stack -p $eu ms," \
		"ratio $(echo "$js $eu" | awk '{ printf "%.2f", $1 / $2 }') (medians of $RUNS, interleaved)"
	grep '^JIT: jitdump' node.txt
	sed -n 's/.*jitdump \([0-9.]* ms\), .*/  of which reading the dump: \1/p' node.err
	kill_tree "$NODE"
fi

mkdir dumps
JITDUMPDIR=$W/dumps JITUNWIND=jitdump "$BUILD/tests/child" wait > child.out 2>&1 &
CHILD=$!
PIDS="$PIDS $CHILD"
for _ in $(seq 100); do grep -q '^ready' child.out && break; sleep 0.05; done
DUMP=$(ls dumps/.debug/jit/*/jit-$CHILD.dump)
python3 - "$DUMP" "$MB" <<'PY'
import struct, sys
path, mb = sys.argv[1], int(sys.argv[2])
code = b"\xcc" * 64
with open(path, "ab") as f:
    n, i, out = mb * 1000000, 0, []
    size = 0
    while size < n:
        name = b"JS:*fn_%d /srv/app/node_modules/pkg_%d/lib/module.js:%d:%d\0" % (i, i % 997, i % 5000, i % 80)
        a = 0x100000000000 + i * 0x400
        rec = struct.pack("<IIQIIQQQQ", 0, 56 + len(name) + len(code), 1, 1, 1, a, a, len(code), 1000 + i) + name + code
        out.append(rec)
        size += len(rec)
        i += 1
        if len(out) == 10000:
            f.write(b"".join(out)); out = []
    f.write(b"".join(out))
print("child's dump: %d loads appended, %d bytes" % (i, size))
PY
: > cold.t
for _ in $(seq 7); do ns "$JS" -p "$CHILD" >> cold.t; done
"$JS" -p "$CHILD" --stats > child.txt 2> child.err
grep -q 'jit:cfi' child.txt || echo "the child's JIT frames are not named" >&2
echo "cold jitstack -p: $(median < cold.t) ms (median of 7), peak RSS $(/usr/bin/time -f %M "$JS" -p "$CHILD" 2>&1 > /dev/null | tail -1) KB"
sed -n 's/.*jitdump \([0-9.]* ms\), .*/  of which reading the dump: \1/p' child.err
"$JS" record -p "$CHILD" --mode ptrace -F 100 -d 5 --idle --stats -o /dev/null 2> rec.err
echo "  record: per-round refresh (no perf map: one failed stat(), then the dump): $(sed -n 's/^jitstack: stats: perf map refresh between rounds: //p' rec.err)"
echo "  record: whole sample: $(sed -n 's/^jitstack: stats: whole sample (stop, unwind, name): //p' rec.err)"
