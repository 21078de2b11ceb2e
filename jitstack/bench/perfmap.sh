#!/bin/sh
# SPDX-License-Identifier: MIT
# perfmap.sh BUILD [MB] - jitstack on a target whose perf map holds MB
# megabytes (default 100) of lines, as a long-running JIT's map grows:
# the time of a whole cold `jitstack -p` (against --no-perf-map), its peak
# memory, and the cost a warm `jitstack record` pays per round for the map,
# with nothing appended and with a writer appending lines meanwhile.
# The target is the library's child (JITUNWIND=perfmap) blocked under its
# JIT frames; the generated lines lie apart from the child's own code, in
# shuffled order (the reader's slow path: sort and sweep) or in address
# order (its fast path).  Knob: PM_BENCH_RUNS (default 7).
BUILD=${1:?usage: perfmap.sh BUILD [MB]}
MB=${2:-100}
RUNS=${PM_BENCH_RUNS:-7}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
. "$ROOT/tests/kill-tree.sh"
JS=$BUILD/jitstack/jitstack
W=$(mktemp -d)
PIDS=
trap 'kill_tree $PIDS; for p in $PIDS; do wait $p 2>/dev/null; done; rm -f /tmp/perf-$CHILD.map; rm -rf "$W"' EXIT
cd "$W" || exit 1

JITUNWIND=perfmap "$BUILD/tests/child" wait > child.out 2>&1 &
CHILD=$!
PIDS=$CHILD
for _ in $(seq 100); do grep -q '^ready' child.out && break; sleep 0.05; done
MAP=/tmp/perf-$CHILD.map
[ -s "$MAP" ] || { echo "no perf map from the child" >&2; exit 1; }

# Usage: gen ORDER (shuffled|sorted) - append MB megabytes of node-like lines
gen() {
	python3 - "$MAP" "$MB" "$1" <<'PY'
import random, sys
path, mb, order = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(1)
n = mb * 1000000 // 70
addr = [0x100000000000 + i * 0x400 for i in range(n)]
if order == "shuffled":
    random.shuffle(addr)
with open(path, "a") as f:
    for i, a in enumerate(addr):
        f.write("%x %x JS:*fn_%d /srv/app/node_modules/pkg_%d/lib/module.js:%d:%d\n"
                % (a, 0x100 + i % 0x300, i, i % 997, i % 5000, i % 80))
PY
}

median_ms() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f ms", v[int((NR + 1) / 2)] / 1e6 }'; }

# Usage: cold ARGS... - median wall time of RUNS whole `jitstack -p` runs
cold() {
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		"$JS" -p "$CHILD" "$@" > /dev/null 2>&1
		echo $(( $(date +%s%N) - t0 ))
	done | median_ms
}

warm() { # LABEL: the per-round perf map refresh and the whole sample, from --stats
	"$JS" record -p "$CHILD" -F 100 -d 5 --idle --stats -o /dev/null 2> rec.err
	echo "  record ($1): $(sed -n 's/^jitstack: stats: perf map refresh between rounds: //p' rec.err)"
	echo "  record ($1), whole sample: $(sed -n 's/^jitstack: stats: whole sample (stop, unwind, name): //p' rec.err)"
	echo "  record ($1): $(sed -n 's/^jitstack: stats: perf map: //p' rec.err)"
}

for order in shuffled sorted; do
	head -n 3 "$MAP" > own.map
	cp own.map "$MAP.new" && mv "$MAP.new" "$MAP" # the child's own lines only
	gen "$order"
	echo "perf map: $(stat -c %s "$MAP") bytes, $(wc -l < "$MAP") lines, $order"
	echo "  cold jitstack -p: $(cold), --no-perf-map: $(cold --no-perf-map) (median of $RUNS)"
	"$JS" -p "$CHILD" --stats 2>&1 >/dev/null | sed -n 's/^jitstack: stats: /  phases: /p'
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%M" "$JS" -p "$CHILD" > /dev/null 2> rss
		/usr/bin/time -f "%M" "$JS" -p "$CHILD" --no-perf-map > /dev/null 2> rss0
		echo "  peak RSS: $(tail -1 rss) KiB, --no-perf-map: $(tail -1 rss0) KiB"
	fi
	"$JS" -p "$CHILD" | grep -c "^#.*\[perf-map\]" | sed 's/^/  frames named from the map: /'
	warm "nothing appended"
	# a writer appending 50 lines every 10 ms while record runs
	python3 - "$MAP" <<'PY' &
import sys, time
with open(sys.argv[1], "a") as f:
    for r in range(600):
        for i in range(50):
            f.write("%x 80 JS:*late_%d_%d /srv/app/late.js:1:1\n" % (0x200000000000 + (r * 50 + i) * 0x100, r, i))
        f.flush()
        time.sleep(0.01)
PY
	W_PID=$!
	PIDS="$PIDS $W_PID"
	warm "50 lines appended every 10 ms"
	kill "$W_PID" 2>/dev/null; wait "$W_PID" 2>/dev/null
done
true
