#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind-sample.sh [BUILD] - instructions of one warm `jitstack record`
# sample, counted by callgrind: the unwind (js_unwind_live), the naming
# (js_name_stack) and the counting (js_profile_add) of one thread of
# tinyjit's probe, which waits 7 VM levels deep (C -> JIT -> C -> JIT) in
# usleep, so that every sample walks the same stack.  The counts are
# dumped each time the thread is let go (js_proc_resume, which comes
# before the unwind from the stack copy): a dump holds one whole sample.
# (Dumping at the entry or exit of a collected function loses that
# function's own count.)  The first two samples (modules, CFI and JIT
# images read for the first time) are left out; the median of the rest is
# printed, with its spread.
BUILD=${1:-build}
SAMPLES=${SAMPLES:-40}
JS=$BUILD/jitstack/jitstack
TJ=$BUILD/tinyjit/tinyjit
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
[ -x "$JS" ] && [ -x "$TJ" ] || { echo "build $JS and $TJ first (make jitstack tinyjit)"; exit 2; }
out=$(mktemp -d)
TJ_PROBE_WAIT=600 "$TJ" --publish=gdb "$(dirname "$0")/../tinyjit/examples/probe.tj" 2 7 > "$out/tj.out" 2>&1 &
pid=$!
# KEEP=DIR: the callgrind files are left there (callgrind_annotate one of them)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; [ -z "${KEEP:-}" ] || cp "$out"/cg.* "$KEEP"/; rm -rf "$out"' EXIT
i=0
until grep -q "pid" "$out/tj.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "tinyjit's probe did not start"; exit 1; }
	sleep 0.1
done
valgrind --tool=callgrind --toggle-collect=js_unwind_live --toggle-collect=js_name_stack \
	--toggle-collect=js_profile_add \
	--dump-after=js_proc_resume --dump-instr=yes --callgrind-out-file="$out/cg.%p" \
	"$JS" record --mode ptrace --idle -p "$pid" -F 20 -d $((SAMPLES / 20 + 1)) -o "$out/stacks" \
	> "$out/vg.log" 2>&1 || { cat "$out/vg.log"; exit 1; }
depth=$(awk '{ print gsub(/;/, ";") + 1; exit }' "$out/stacks")
# cg.PID.N, one file per dump in the order taken; N=1.. are the samples
ls "$out" | grep '^cg\.[0-9]*\.[0-9]*$' | sort -t. -k3 -n | while read -r f; do
	awk '/^summary:/ { print $2 }' "$out/$f"
done | awk 'NR > 2 && $1 > 0' | sort -n | awk -v d="$depth" '
	{ v[NR] = $1 }
	END {
		if (NR == 0) { print "no warm samples"; exit 1 }
		printf "warm samples: %d, frames each: %d\n", NR, d
		printf "instructions per sample: median %d (min %d, max %d)\n", v[int((NR + 1) / 2)], v[1], v[NR]
	}'
