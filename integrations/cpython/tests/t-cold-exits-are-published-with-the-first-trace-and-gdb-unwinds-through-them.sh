# The 200 cold exits CPython 3.13 compiles when its JIT is turned on
# (COLD_EXIT_COUNT, UOP_MAX_TRACE_LENGTH / 4 in Python/optimizer.c) are
# published in one batch with the first trace, not one by one at start-up:
#   - gdb stopped where the first trace is compiled (_PyJIT_Compile with a
#     root code object) finds the GDB JIT interface's list still empty
#     (__jit_debug_descriptor.first_entry), where every cold exit used to
#     be;
#   - shapes.py's side loop, which makes a trace, has all 200 in its perf
#     map, "py:cold exit 0" to "py:cold exit 199", beside its trace;
#   - gdb stopped in _PyOptimizer_Optimize called from a cold exit (a side
#     exit of a trace got hot: the cold exit asks for a trace of its own;
#     in this run, importlib's traces at start-up do) shows "py:cold exit
#     N", then the trace the side exit left, "py:QUALNAME (FILE:LINE)", and
#     goes on to Py_BytesMain with no frame it cannot name.
# Baseline, which must fail: the stock JIT (the cold exit is "??").  (The
# tree before the batch published them at start-up: the first check fails
# there, with the 200 registered.)
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# nothing published before the first trace
cat > first.gdb <<G
set pagination off
set confirm off
set startup-with-shell off
$GDB_ENV
set breakpoint pending on
break _PyJIT_Compile if root_code != 0
run
print/x (unsigned long)__jit_debug_descriptor.first_entry
kill
G
limit 300 "$GDB" -nx -batch -x first.gdb --args "$PY" -c pass > first.out 2>&1
grep -q '^Breakpoint 1, _PyJIT_Compile' first.out || { cat first.out; fail "gdb did not stop where the first trace is compiled"; }
entry=$(sed -n 's/^\$1 = //p' first.out)
[ -n "$entry" ] || { cat first.out; fail "gdb printed no __jit_debug_descriptor.first_entry"; }
[ "$entry" = 0x0 ] || fail "at the first trace's compile, JIT code was published already (first_entry $entry)"
echo "the first trace's compile: nothing published yet (__jit_debug_descriptor.first_entry is $entry)"

# a trace: the cold exits with it
JITUNWIND=default,perfmap limit 120 "$PYRUN" -c 'import os, shapes; shapes.run("side", 2000, 0.0); print(os.getpid())' \
	> side.out 2>&1 || { cat side.out; fail "shapes.py side failed"; }
pid=$(tail -1 side.out)
map=/tmp/perf-$pid.map
CLEANUP_MAPS="$CLEANUP_MAPS $map"
[ -f "$map" ] || fail "shapes.py side, which makes a trace, wrote no $map"
grep -q ' py:side (shapes\.py:[0-9]*)$' "$map" || { cat "$map"; fail "side's trace is not in $map"; }
n=$(sed -n 's/.* py:cold exit \([0-9]*\)$/\1/p' "$map" | sort -un | awk '$1 >= 0 && $1 < 200' | wc -l)
[ "$n" = 200 ] || { grep ' py:cold exit ' "$map" | head; fail "$map has $n of the 200 cold exits"; }
echo "shapes.py side: $map has side's trace and the 200 cold exits"

# run_gdb PYTHON: gdb.out, a backtrace at every call of _PyOptimizer_Optimize
run_gdb() {
	cat > cold.gdb <<G
set pagination off
set confirm off
set startup-with-shell off
$GDB_ENV
break _PyOptimizer_Optimize
commands
silent
bt
continue
end
run
G
	limit 300 "$GDB" -nx -batch -x cold.gdb --args "$1" -c 'import shapes; shapes.run("side", 2000, 0.0)' \
		> gdb.out 2>&1
}
# judge < gdb.out: a backtrace with the cold exit as #1, a trace next,
# reaching Py_BytesMain with no "??" frame; prints it, or what is wrong
judge() {
	awk '
		function done() {
			if (cold && traced && main && !unknown) { print bt; found = 1 }
			bt = ""; cold = traced = main = unknown = 0
		}
		/^#0 / { done() }
		/^#[0-9]+ / {
			bt = bt $0 "\n"
			if ($1 == "#1" && / py:cold exit [0-9]+ \(\)/) cold = NR
			if (cold && NR == cold + 1 && / in py:[^ ]+ \([^()]+:[0-9]+\) \(\)/)
				traced = 1
			if (/ Py_BytesMain \(/) main = 1
			if (/\?\? \(\)/ && !main) unknown = 1
		}
		END { done(); if (!found) print "no backtrace from a cold exit through a trace to Py_BytesMain"; exit !found }' gdb.out
}

run_gdb "$PY"
judge > why.txt || { grep '^#' gdb.out | head -60; fail "$(cat why.txt)"; }
head -12 why.txt

run_gdb "$PY_STOCK"
if judge > why.txt; then
	cat why.txt
	fail "the stock JIT passes the check too, so it proves nothing"
fi
echo "stock JIT: FAIL as it must ($(tail -1 why.txt); called from: $(grep '^#1 ' gdb.out | grep -v -m1 _PyEval_EvalFrameDefault))"
pass "no cold exit is published before the first trace, all 200 are with it, and gdb unwinds from the optimizer through a cold exit and the trace it left to main; the stock JIT does not"
