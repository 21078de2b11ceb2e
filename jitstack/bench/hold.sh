#!/bin/sh
# hold.sh BUILD - the longest time a dump holds a thread of its target
# stopped, on the target where that was longest: hostile big, 200 JIT
# images of 64 MB on a list without the seqlock (read only while the
# threads stand still).  holdwatch reads the thread's state as fast as it
# can through the dump; the longest run of 't' is the hold.  Prints, per
# round, the hold and the dump's wall time; then the median and range.
# Knobs: JS_BENCH_HOLD_RUNS (rounds, default 3), JS_BENCH_HOLD_ARGS
# (jitstack's extra options, e.g. --max-hold 500), JS_BENCH_HOLD_JS (the
# jitstack binary to measure, e.g. an older build).
#
# SPDX-License-Identifier: MIT
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
JS=${JS_BENCH_HOLD_JS:-$BUILD/jitstack/jitstack}
HW=$BUILD/jitstack/bench/holdwatch
HOSTILE=$BUILD/jitstack/tests/hostile
for f in "$JS" "$HW" "$HOSTILE"; do [ -x "$f" ] || { echo "hold.sh: $f is missing (make bench-jitstack-hold)"; exit 2; }; done
W=$(mktemp -d)
trap 'kill $P 2>/dev/null; rm -rf "$W"' EXIT
cd "$W" || exit 1
"$HOSTILE" big wait > big.out 2>&1 &
P=$!
for _ in $(seq 100); do grep -q ready big.out && break; sleep 0.1; done
for i in $(seq "${JS_BENCH_HOLD_RUNS:-3}"); do
	"$HW" "$P" 120 > hold.$i &
	w=$!
	sleep 0.3
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$JS" -p "$P" ${JS_BENCH_HOLD_ARGS:-} > /dev/null 2>&1
	t1=$(date +%s.%N)
	sleep 0.3
	kill -TERM $w 2>/dev/null
	wait $w 2>/dev/null
	echo "round $i: longest hold $(awk '/longest/{print $2}' hold.$i) ms, dump $(echo "$t1 - $t0" | bc) s"
done | tee rounds
awk '{print $5}' rounds | sort -n | awk '{v[NR]=$1} END {print "median hold " v[int((NR+1)/2)] " ms, range " v[1] "-" v[NR] " ms over " NR " rounds"}'
