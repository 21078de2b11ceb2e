#!/bin/sh
# run.sh [time|startup|instr|publish|all] - the cost of publishing CPython's JIT
# through libjitunwind (integrations/cpython), docs/BENCHMARKS.md:
#   time     each workload here (nbody, fannkuch, spectral_norm, points,
#            genexc), run by the stock JIT (make cpython-stock), the patched
#            build (make cpython) and, when built, the frame-pointer build
#            (make cpython-fp), interleaved: each round runs every
#            interpreter once per workload, the order rotating by round;
#            the median, min and max wall time of ROUNDS rounds (default 7)
#   startup  `python -c pass` (its ~200 cold exits published) the same way,
#            STARTS runs each (default 40)
#   instr    the instructions (callgrind's Ir, no hardware counters needed)
#            of each workload, smaller (SMALL), per interpreter: a measure
#            a loaded machine does not blur
#   publish  callgrind (instructions) on the patched build: _PyJIT_Publish
#            and _PyJIT_Unpublish (everything they call, libjitunwind's
#            channels included) against _PyJIT_Compile less the publish it
#            calls, for `-c pass` and for nbody.py 300; and the
#            instructions of `-c pass`, stock against patched
# The interpreters run in place with PYTHON_JIT=1 and this tree's library
# (LD_LIBRARY_PATH=$BUILD); JITUNWIND as the environment gives it (unset:
# the default channels).  BUILD (default build) is the build directory.
#
# SPDX-License-Identifier: MIT
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
ROUNDS=${ROUNDS:-7}
STARTS=${STARTS:-40}
WORKLOADS="nbody fannkuch spectral_norm points genexc"
export PYTHON_JIT=1
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

die() { echo "run.sh: $*" >&2; exit 1; }
interp() { [ -f "$BUILD/$1/dir" ] && echo "$(cat "$BUILD/$1/dir")/python"; }
STOCK=$(interp cpython-stock) || die "make cpython-stock first"
PATCHED=$(interp cpython) || die "make cpython first"
NAMES="stock patched"
FP=$(interp cpython-fp) && NAMES="$NAMES fp" || echo "run.sh: no cpython-fp build: the frame-pointer column is left out" >&2
path() { case $1 in stock) echo "$STOCK" ;; patched) echo "$PATCHED" ;; fp) echo "$FP" ;; esac; }
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ju-bench-cpython.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM
cd "$OUT"

ns() { date +%s%N; }
# rotate N WORDS...: WORDS rotated left by N
rotate() { n=$1; shift; i=0; while [ $i -lt $((n % $#)) ]; do w=$1; shift; set -- "$@" "$w"; i=$((i + 1)); done; echo "$@"; }
# once NAME WORKLOAD ARGS...: one run's wall time in ns, appended to times
once() {
	p=$(path "$1") name=$1 what=$2
	shift 2
	t0=$(ns)
	"$p" "$@" > /dev/null
	t1=$(ns)
	echo "$what $name $((t1 - t0))" >> times
}
summary() { # times: median, min, max in ms, and medians against stock and patched
	python3 - "$@" << 'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open("times"):
    what, name, t = line.split()
    runs[what, name].append(int(t) / 1e6)
whats = list(dict.fromkeys(w for w, _ in runs))
names = list(dict.fromkeys(n for _, n in runs))
print("| workload | " + " | ".join(f"{n}: median (min-max) ms" for n in names) +
      " | patched/stock | fp/patched |")
print("|---" * (len(names) + 3) + "|")
for w in whats:
    med = {n: statistics.median(runs[w, n]) for n in names if runs[w, n]}
    cells = [f"{med[n]:.0f} ({min(runs[w, n]):.0f}-{max(runs[w, n]):.0f})" for n in names]
    ratio = lambda a, b: f"{(med[a] / med[b] - 1) * 100:+.1f} %" if a in med and b in med else "-"
    print(f"| {w} | " + " | ".join(cells) + f" | {ratio('patched', 'stock')} | {ratio('fp', 'patched')} |")
print(f"({len(runs[whats[0], names[0]])} runs each)")
PY
}

run_time() {
	: > times
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for w in $WORKLOADS; do
			for name in $(rotate $r $NAMES); do once "$name" "$w" "$HERE/$w.py"; done
		done
		r=$((r + 1))
	done
	summary
}

run_startup() {
	: > times
	r=0
	while [ $r -lt "$STARTS" ]; do
		for name in $(rotate $r $NAMES); do once "$name" "python-c-pass" -c pass; done
		r=$((r + 1))
	done
	summary
}

# inclusive instructions of FUNCTION in callgrind_annotate's output
incl() { awk -v f="$1" '$0 ~ ("[ :*]" f " ") || $0 ~ ("[ :]" f "$") { gsub(",", "", $1); print $1; exit }' annotate.txt; }
run_publish() {
	command -v valgrind > /dev/null || die "valgrind is not installed"
	for what in "-c pass" "$HERE/nbody.py 300"; do
		# shellcheck disable=SC2086
		valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=cg.out "$PATCHED" $what \
			> /dev/null 2> valgrind.log || { cat valgrind.log >&2; die "callgrind failed"; }
		callgrind_annotate --inclusive=yes --threshold=100 cg.out > annotate.txt
		compile=$(incl _PyJIT_Compile) publish=$(incl _PyJIT_Publish) unpublish=$(incl _PyJIT_Unpublish)
		total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' annotate.txt)
		if [ "$what" = "-c pass" ]; then
			valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=cg-stock.out "$STOCK" -c pass \
				> /dev/null 2> valgrind.log || { cat valgrind.log >&2; die "callgrind failed"; }
			stock=$(callgrind_annotate cg-stock.out | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
			echo "-c pass, stock JIT: program $stock Ir; patched: $total Ir" \
				"($(python3 -c 'import sys; print(f"{(int(sys.argv[1]) / int(sys.argv[2]) - 1) * 100:+.1f} %")' "$total" "$stock"))"
		fi
		echo "${what##*/}: program $total Ir, _PyJIT_Compile ${compile:-0} Ir (publish included)," \
			"_PyJIT_Publish ${publish:-0}, _PyJIT_Unpublish ${unpublish:-0}"
		python3 -c 'import sys; c, p, u = (int(x or 0) for x in sys.argv[1:4])
print(f"  publish + unpublish = {(p + u) / (c - p) * 100:.2f} % of compile without publish" if c > p else "  no compile")' \
			"${compile:-0}" "${publish:-0}" "${unpublish:-0}"
	done
}

SMALL="nbody:3000 fannkuch:7 spectral_norm:40 points:2000 genexc:40000"
run_instr() {
	: > times
	for wa in $SMALL; do
		w=${wa%%:*}
		for name in $NAMES; do
			PYTHONHASHSEED=0 valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=cg.out \
				"$(path "$name")" "$HERE/$w.py" "${wa#*:}" > /dev/null 2> valgrind.log ||
				{ cat valgrind.log >&2; die "callgrind failed"; }
			ir=$(callgrind_annotate cg.out | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
			# summary reads ns: Ir / 1e6 shows as millions
			echo "$w $name $ir" >> times
		done
	done
	summary | sed 's/median (min-max) ms/million Ir/g'
}

case ${1:-all} in
time) run_time ;;
startup) run_startup ;;
instr) run_instr ;;
publish) run_publish ;;
all) run_time; run_startup; run_instr; run_publish ;;
*) die "usage: run.sh [time|startup|instr|publish|all]" ;;
esac
