#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - tinyjit benchmarks; prints Markdown tables (see tinyjit/BENCH.md).
#
#   bench/tinyjit/run.sh [BUILD]     (BUILD defaults to build)
#
# 1. JIT vs interpreter: run time (tinyjit --stats "run"), best of $REPS.
# 2. Frame-pointer cost: fp vs nofp stencil sets, callgrind instructions and
#    wall time side by side.
# 3. Compile speed on a generated program, and publishing's share of
#    compile + publish time.
# 4. Inlining: --inline vs calls, interleaved runs (median, min-max), and
#    callgrind instructions; then fib at each inline depth.
# SECTIONS="inline" (etc.) makes only the tables named.
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
# the same programs on smaller inputs, for callgrind
CG="$EX/fib.tj 22
$EX/ackermann.tj 2 300
$EX/loops.tj 300
$EX/collatz.tj 3000
bench/tinyjit/primes.tj 5000"

# SECTIONS (default all): which tables to make, of speed fp compile inline
want() {
	case " ${SECTIONS:-speed fp compile inline} " in *" $1 "*) return 0 ;; esac
	return 1
}

if want speed; then
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
fi

if want fp; then
	echo "### Frame-pointer cost: fp (rbp kept) vs nofp stencils"
	echo
	echo "Callgrind counts the instructions of the run phase only (everything under tj_jit_enter,"
	echo "the C entry into JIT code) on smaller inputs; wall time is the run phase on the inputs"
	echo "above, best of $REPS."
	echo
	echo "| program | Ir fp | Ir nofp | Ir fp/nofp | run ms fp | run ms nofp | time fp/nofp |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
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

fi

if want compile; then
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
fi

# the run phase's ms of one run: one_ms ARGS...
one_ms() {
	"$TJ" --stats --publish=none "$@" 2>&1 >/dev/null | sed -n 's/.*run \([0-9.]*\) ms.*/\1/p'
}
# median (min-max) of the numbers in FILE
spread() {
	sort -g "$1" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f (%.1f-%.1f)", m, v[1], v[NR]}'
}
median() { sort -g "$1" | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

if want inline; then
	IREPS=${IREPS:-9}
	echo "### Inlining: --inline (depth 3) vs calls"
	echo
	echo "Run phase in ms, median (min-max) of $IREPS runs each, the two configurations interleaved"
	echo "run by run; callgrind counts the run phase's instructions on the smaller inputs. fp"
	echo "stencils, region CFI, nothing published."
	echo
	echo "| program | calls inlined | code bytes | calls ms | --inline ms | speed-up (medians) | Ir calls | Ir --inline | Ir ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	n=0
	echo "$PROGS" | while read -r prog args; do
		n=$((n + 1))
		cg=$(echo "$CG" | sed -n "${n}p")
		rm -f "$TMP/off" "$TMP/on"
		i=0
		while [ $i -lt "$IREPS" ]; do
			one_ms "$prog" $args >>"$TMP/off"
			one_ms --inline "$prog" $args >>"$TMP/on"
			i=$((i + 1))
		done
		st=$("$TJ" --stats --inline --publish=none "$prog" $args 2>&1 >/dev/null)
		ninl=$(echo "$st" | sed -n 's/.* \([0-9]*\) calls inlined.*/\1/p')
		bytes=$("$TJ" --stats --publish=none "$prog" $args 2>&1 >/dev/null | sed -n 's/.*(\([0-9]*\) bytes.*/\1/p')
		ibytes=$(echo "$st" | sed -n 's/.*(\([0-9]*\) bytes.*/\1/p')
		ir() {
			valgrind --tool=callgrind --smc-check=all-non-file --toggle-collect=tj_jit_enter \
				--callgrind-out-file=/dev/null \
				"$TJ" --publish=none "$@" $cg 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
		}
		iroff=$(ir --inline=0)
		iron=$(ir --inline)
		echo "| $(basename "$prog" .tj) $args | $ninl | $bytes -> $ibytes | $(spread "$TMP/off") | $(spread "$TMP/on") |" \
			"$(echo "$(median "$TMP/off") $(median "$TMP/on")" | awk '{printf "%.2fx", $1/$2}') |" \
			"$iroff | $iron | $(echo "$iroff $iron" | awk '{printf "%.3f", $2/$1}') |"
	done | tee "$TMP/inline"
	awk -F'|' '$6 != "" {v = $7; gsub(/[ x]/, "", v); r = $10; gsub(/ /, "", r); s += log(v); t += log(r); n++}
		END {printf "\nGeomean: run time **%.2fx** faster, instructions **%.3f** of the calls build, over %d programs\n\n", exp(s/n), exp(t/n), n}' "$TMP/inline"

	echo "#### fib 32 at each inline depth"
	echo
	echo "| --inline= | calls inlined | code bytes | run ms, median (min-max) of $IREPS, interleaved | Ir (fib 22) |"
	echo "|---:|---:|---:|---:|---:|"
	DEPTHS="0 1 2 3 4 6"
	rm -f "$TMP"/depth.*
	i=0
	while [ $i -lt "$IREPS" ]; do
		for d in $DEPTHS; do one_ms --inline=$d "$EX/fib.tj" 32 >>"$TMP/depth.$d"; done
		i=$((i + 1))
	done
	for d in $DEPTHS; do
		st=$("$TJ" --stats --inline=$d --publish=none "$EX/fib.tj" 32 2>&1 >/dev/null)
		irf=$(valgrind --tool=callgrind --smc-check=all-non-file --toggle-collect=tj_jit_enter \
			--callgrind-out-file=/dev/null "$TJ" --publish=none --inline=$d "$EX/fib.tj" 22 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		echo "| $d | $(echo "$st" | sed -n 's/.* \([0-9]*\) calls inlined.*/\1/p') |" \
			"$(echo "$st" | sed -n 's/.*(\([0-9]*\) bytes.*/\1/p') | $(spread "$TMP/depth.$d") | $irf |"
	done
fi
