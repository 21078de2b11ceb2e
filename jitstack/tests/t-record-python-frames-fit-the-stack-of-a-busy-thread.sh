# SPDX-License-Identifier: MIT
# jitstack record --mode ptrace on a busy Python thread
# (progs/pyhot.py: main() calls hot(), which loops over a generator,
# squares, and calls a method, Grid.cell; then cool(), which sums a
# generator expression): every sample's Python frames fit its native
# stack, as read at the same stop:
# - every stack holds <module> and main just above its outermost
#   _PyEval_EvalFrameDefault frame (main runs between its calls too: a
#   sample may find it freeing what hot returned), and most hold hot or
#   cool above them;
# - a stack in the generator squares has it just above an eval loop frame
#   called by gen_iternext, below hot (the generator runs in an activation
#   of its own, entered from hot's next);
# - no sample lacks its Python frames, and no warning.
# A chain read after the thread ran on does not fit: it has left the
# generator, or entered it, in between.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
/usr/bin/python3 "$ROOT/jitstack/tests/progs/pyhot.py" &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.5
limit 60 "$JS" record -p "$pid" --mode ptrace -F 250 -d 1.5 --format collapsed -o prof.collapsed 2> rec.err ||
	{ cat rec.err; fail "record exited $?"; }
kill "$pid"
! grep -q warning rec.err || { cat rec.err; fail "a warning"; }
total=$(wc -l < prof.collapsed)
[ "$total" -gt 5 ] || { cat prof.collapsed; fail "only $total distinct stacks"; }
bad=$(grep -Ev ';_PyEval_EvalFrameDefault;<module>;main[; ]' prof.collapsed | head -3)
[ -z "$bad" ] || { echo "$bad" | cut -c1-400; fail "stacks without <module> and main above the outermost eval loop frame"; }
samples=$(awk '{ n += $NF } END { print n + 0 }' prof.collapsed)
in_calls=$(grep -E ';main;(hot|cool)[; ]' prof.collapsed | awk '{ n += $NF } END { print n + 0 }')
[ $((in_calls * 10)) -ge $((samples * 9)) ] || fail "only $in_calls of $samples samples in hot or cool"
gen=$(grep -c ';squares[; ]' prof.collapsed || true)
[ "$gen" -gt 0 ] || { head -5 prof.collapsed; fail "no stack in the generator squares"; }
bad=$(grep ';squares[; ]' prof.collapsed | grep -Ev ';main;hot;gen_iternext[^;]*;_PyEval_EvalFrameDefault;squares[; ]' | head -3)
[ -z "$bad" ] || { echo "$bad" | cut -c1-400; fail "stacks in squares that do not have it above hot's gen_iternext and its eval loop frame"; }
grep -q ';Grid.cell[; ]' prof.collapsed || fail "no stack in Grid.cell"
pass "$total distinct stacks of $samples samples ($in_calls in hot or cool), $gen in the generator: every one's Python frames fit its native stack"
