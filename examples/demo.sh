#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh BUILD - what `make demo` shows: JIT code that glibc backtrace() and
# gdb see through once it is published (hello-jit), the perf files it writes
# only when asked (JITUNWIND=perf), guest functions tinyjit inlined shown by
# gdb as frames of their own, then the unwind matrix in its quick form: every
# unwinder on tinyjit's probe in four modes, each cell
# judged against the frames the workload says it has (`make matrix` runs all
# of it and writes docs/MATRIX.md).
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
EX=$B/examples/hello-jit
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# hello-jit with JITUNWIND=perf leaves its perf map and jitdump, as every
# JIT does for perf; the demo keeps neither (it removes its own map only)
W=$(mktemp -d)
export JITDUMPDIR=$W
MAP=
trap 'rm -f $MAP; rm -rf "$W"' EXIT

say "hello-jit: C -> JIT -> C -> JIT -> C, published with libjitunwind"
"$EX"

say "the same program under gdb: break in the innermost C function, bt"
if command -v gdb >/dev/null 2>&1; then
	timeout 60 gdb -q -batch -nx -ex 'set style enabled off' -ex 'break show_stack' -ex run -ex bt "$EX" 2>&1 |
		grep -E '^#|^Breakpoint 1,'
else
	echo "(gdb is not installed: skipped)"
fi

say "the perf files are opt-in: JITUNWIND=perf adds /tmp/perf-<pid>.map and a jitdump"
JITUNWIND=perf "$EX" > "$W/perf.out" 2>&1 &
pid=$!
MAP=/tmp/perf-$pid.map
wait "$pid"
grep channels "$W/perf.out"
echo "$MAP:"
sed 's/^/  /' "$MAP"
find "$W" -name "jit-$pid.dump" -printf '%P: %s bytes (for perf inject --jit)\n'

say "guest frames: tinyjit --inline compiles descend's direct call into its caller's code; gdb shows both"
TJ=$B/tinyjit/tinyjit
if command -v gdb >/dev/null 2>&1; then
	# probe.tj at depth 2, probe mode 9: SIGTRAP at the bottom, for gdb
	timeout 60 gdb -q -batch -nx -ex 'set style enabled off' -ex run -ex bt \
		--args "$TJ" --inline "$ROOT/tinyjit/examples/probe.tj" 9 2 2>&1 |
		grep -E '^#([3-9]|1[0-9]) ' | sed -E 's/ \((vm|arg|body|argc|n)=.*\)( at |$)/ (...)\2/' | cut -c1-100
else
	echo "(gdb is not installed: skipped)"
fi

say "the unwind matrix, quick form (make matrix: every mode, docs/MATRIX.md)"
${MAKE:-make} -s --no-print-directory -C "$ROOT" BUILD="$BUILD" matrix-quick
