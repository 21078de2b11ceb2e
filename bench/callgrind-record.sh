#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind-record.sh [BUILD [JITSTACK...]] - instructions of jitstack's
# whole sampling loop per warm sample, counted by callgrind: `jitstack
# record --stats` at 1 kHz (perf events) on tinyjit's progs/hot.tj, with
# everything js_record_perf runs collected (the waits, the JIT list, perf
# map and jitdump checks, the ring reads, the thread rescans, the
# unwinding, naming and counting of every sample).  Two runs of different
# lengths (SHORT and LONG seconds) for each jitstack: the cold part (the
# first samples read modules, CFI and JIT images) is the same in both, so
# (instructions of LONG - instructions of SHORT) / (samples of LONG -
# samples of SHORT) is the cost of a warm sample.  Several jitstacks
# (before and after a change) are run in turn, RUNS rounds, interleaved.
# Kernel time (system calls) is not counted by callgrind: a second line
# gives the system calls per sample of a native LONG run, start-up
# included, from strace -c
# (STRACE=0 leaves them out).  Run it under flock /tmp/ju-heavy.lock.
BUILD=${1:-build}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$BUILD/jitstack/jitstack"
TJ=$BUILD/tinyjit/tinyjit
RUNS=${RUNS:-3} SHORT=${SHORT:-2} LONG=${LONG:-6}
HOT=${HOT:-$(dirname "$0")/../jitstack/tests/progs/hot.tj}
command -v valgrind > /dev/null || { echo "valgrind is not installed"; exit 77; }
[ -x "$TJ" ] || { echo "build $TJ first (make tinyjit)"; exit 2; }
out=$(mktemp -d)
"$TJ" "$HOT" 1000000000 > /dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
sleep 1
# one run: "INSTRUCTIONS SAMPLES"
one() { # JITSTACK SECONDS
	valgrind --tool=callgrind --toggle-collect=js_record_perf --callgrind-out-file="$out/cg" \
		"$1" record -p "$pid" -F 1000 -d "$2" --stats -o "$out/stacks" > "$out/vg.log" 2>&1 ||
		{ cat "$out/vg.log"; exit 1; }
	ir=$(awk '/^summary:/ { print $2 }' "$out/cg")
	# KEEP=DIR: the callgrind file of each run is left there (callgrind_annotate it)
	[ -z "${KEEP:-}" ] || cp "$out/cg" "$KEEP/cg.$(basename "$(dirname "$(dirname "$1")")").$2s.$$.$(date +%s%N)"
	n=$(sed -n 's/.*stats: perf events.*: \([0-9]*\) samples, .*/\1/p' "$out/vg.log")
	echo "$ir $n"
}
# system calls per sample, natively: strace -c over a LONG run
calls() { # JITSTACK
	strace -f -c -o "$out/st" "$1" record -p "$pid" -F 1000 -d "$LONG" --stats -o "$out/stacks" 2> "$out/log"
	n=$(sed -n 's/.*stats: perf events.*: \([0-9]*\) samples, .*/\1/p' "$out/log")
	awk -v n="$n" '/ total$/ { printf "%.2f system calls per sample, start-up included (%d samples)", $4 / n, n }' "$out/st"
}
JSS="$*"
for r in $(seq "$RUNS"); do
	for js in $JSS; do
		a=$(one "$js" "$SHORT") b=$(one "$js" "$LONG")
		echo "$js $a $b" | awk '{ printf "%s: %.0f instructions per warm sample (%d and %d samples)\n", $1, ($4 - $2) / ($5 - $3), $3, $5 }'
		[ "${STRACE:-1}" = 0 ] || ! command -v strace > /dev/null || echo "$js: $(calls "$js")"
	done
done
