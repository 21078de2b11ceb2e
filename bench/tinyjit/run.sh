#!/bin/sh
# run.sh - tinyjit benchmarks; prints Markdown tables (see tinyjit/BENCH.md).
#
#   bench/tinyjit/run.sh [BUILD]     (BUILD defaults to build)
#
# 1. JIT vs interpreter: run time (tinyjit --stats "run"), best of $REPS.
# 2. Frame-pointer cost: fp vs nofp stencil sets, callgrind instructions and
#    wall time side by side.
# 3. Compile speed on a generated program, and publishing's share of
#    compile + publish time.
set -eu
B=${1:-build}
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$B/tools/reaper" ] || exec "$B/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
TJ=$B/tinyjit/tinyjit
EX=tinyjit/examples
REPS=${REPS:-5}
TMP=$(mktemp -d)
touch "$TMP/.start"
# the perf maps of the runs go too
trap 'sh scripts/reap-perf-maps.sh "$TMP/.start"; rm -rf "$TMP"' EXIT
export JITDUMPDIR=$TMP

# best run time in ms over $REPS runs: run_ms ARGS...
run_ms() {
	i=0
	while [ $i -lt "$REPS" ]; do
		"$TJ" --stats "$@" 2>&1 >/dev/null | sed -n 's/.*run \([0-9.]*\) ms.*/\1/p'
		i=$((i + 1))
	done | sort -g | head -n 1
}

PROGS="$EX/fib.tj 32
$EX/ackermann.tj 3 8
$EX/loops.tj 3000
$EX/collatz.tj 300000
bench/tinyjit/primes.tj 300000"

echo "### JIT vs interpreter (run time, best of $REPS, ms)"
echo
echo "| program | interpreter | JIT (fp, region) | speed-up |"
echo "|---|---:|---:|---:|"
echo "$PROGS" | while read -r prog args; do
	i=$(run_ms --jit=off "$prog" $args)
	j=$(run_ms --jit=on --publish=none "$prog" $args)
	echo "| $(basename "$prog" .tj) $args | $i | $j | $(echo "$i $j" | awk '{printf "%.2fx", $1/$2}') |"
done | tee "$TMP/speed"
awk -F'|' '{gsub(/[ x]/, "", $5); s += log($5); n++} END {printf "\nGeomean speed-up: **%.2fx** over %d programs\n\n", exp(s/n), n}' "$TMP/speed"

echo "### Frame-pointer cost: fp (rbp kept) vs nofp stencils"
echo
echo "Callgrind counts the instructions of the run phase only (everything under tj_jit_enter,"
echo "the C entry into JIT code) on smaller inputs; wall time is the run phase on the inputs"
echo "above, best of $REPS."
echo
echo "| program | Ir fp | Ir nofp | Ir fp/nofp | run ms fp | run ms nofp | time fp/nofp |"
echo "|---|---:|---:|---:|---:|---:|---:|"
CG="$EX/fib.tj 22
$EX/ackermann.tj 2 300
$EX/loops.tj 300
$EX/collatz.tj 3000
bench/tinyjit/primes.tj 5000"
n=0
echo "$PROGS" | while read -r prog args; do
	n=$((n + 1))
	cg=$(echo "$CG" | sed -n "${n}p")
	ir() {
		valgrind --tool=callgrind --smc-check=all-non-file --toggle-collect=tj_jit_enter \
			--callgrind-out-file=/dev/null \
			"$TJ" --publish=none --frames=$1 $cg 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	irf=$(ir fp)
	irn=$(ir nofp)
	tf=$(run_ms --frames=fp --publish=none "$prog" $args)
	tn=$(run_ms --frames=nofp --publish=none "$prog" $args)
	echo "| $(basename "$prog" .tj) | $irf | $irn | $(echo "$irf $irn" | awk '{printf "%.4f", $1/$2}') | $tf | $tn | $(echo "$tf $tn" | awk '{printf "%.4f", $1/$2}') |"
done | tee "$TMP/fp"
awk -F'|' '{gsub(/ /, "", $5); gsub(/ /, "", $8); a += log($5); b += log($8); n++}
	END {printf "\nGeomean fp/nofp: instructions **%+.3f%%**, wall time **%+.2f%%**\n\n", (exp(a/n)-1)*100, (exp(b/n)-1)*100}' "$TMP/fp"

echo "### Compile speed and publishing cost"
echo
awk -v funcs=2000 -v body=496 -f bench/tinyjit/bigprog.awk >"$TMP/big.tj"
echo "| program | instructions | functions | compile ms | M ops/s | publish ms | channels | publish share |"
echo "|---|---:|---:|---:|---:|---:|---|---:|"
for pub in none unwinder,gdb all; do
	for prog in "$TMP/big.tj 0" "$EX/fib.tj 1" "bench/tinyjit/primes.tj 10"; do
		set -- $prog
		best=
		i=0
		while [ $i -lt "$REPS" ]; do
			# run with a known pid, to remove the perf map it writes
			JITDUMPDIR=$TMP sh -c 'echo $$ >"$0/pid"; exec "$@"' "$TMP" "$TJ" --stats --publish=$pub "$@" \
				2>&1 >/dev/null | grep 'tinyjit stats' >>"$TMP/stats.$pub"
			rm -f "/tmp/perf-$(cat "$TMP/pid").map"
			i=$((i + 1))
		done
		# best compile and best publish of the runs
		sed -n 's/.*: \([0-9]*\) instructions, \([0-9]*\) functions.* compile \([0-9.]*\) ms.*publish \([0-9.]*\) ms \[\([^]]*\)\].*/\1 \2 \3 \4 \5/p' "$TMP/stats.$pub" |
			sort -k3,3g | awk -v name="$(basename "$1" .tj)" '
				NR == 1 {ins = $1; fn = $2; c = $3; ch = $5}
				{if (p == "" || $4 < p) p = $4}
				END {printf "| %s | %d | %d | %.3f | %.1f | %.3f | %s | %.0f%% |\n", name, ins, fn, c, ins / c / 1000, p, ch, 100 * p / (c + p)}'
		rm -f "$TMP/stats.$pub"
	done
done
