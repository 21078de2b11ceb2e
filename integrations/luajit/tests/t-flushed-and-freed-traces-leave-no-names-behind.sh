# SPDX-License-Identifier: MIT
# flush.lua compiles traces that die every way LuaJIT kills them -- all
# flushed (jit.flush()), one function's flushed (jit.flush(f), no event),
# a loaded chunk's freed by the GC, a trace number and address taken again
# by a new trace -- and then waits in C called from hot's trace.  With the
# module, gdb's backtrace names hot's trace and reaches main, and neither
# gdb (info functions) nor jitstack (--images) knows any name of a dead
# trace (lua:old@..., lua:gone@..., the chunk's lua:<main>@[string ...]),
# though each was published while it lived.  Baseline, which must fail:
# stock luajit names no trace at all.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
PROBE_SCRIPT=flush.lua
dead='lua:old@|lua:gone@|lua:<main>@\[string'

probe with wait LJP_WAIT=30
free_with=$(grep '^free trace numbers' probe.out)
# old's, gone's and the chunk's traces were published; old's and gone's are
# unpublished already (the chunk's goes at the sweep when hot's trace stops)
set -- $(sed -n 's/^module before hot: \([0-9]*\) published, \([0-9]*\) unpublished/\1 \2/p' probe.out)
[ "${1:-0}" -ge 3 ] && [ "${2:-0}" -ge 2 ] || { cat probe.out; fail "the dead traces were not published and unpublished"; }
echo "before hot: $1 traces published, $2 unpublished"
gdb_bt_live "$PROBE_PID"
judge_frames gdb gdb.out || { cat gdb.out; fail "gdb after the flushes"; }
limit 60 "$GDB" -nx -batch -p "$PROBE_PID" -ex "info functions ^lua:" > funcs.out 2>&1
limit 60 "$JS" -p "$PROBE_PID" --images > images.out 2>&1 || { cat images.out; fail "jitstack --images exited $?"; }
kill_tree "$PROBE_PID"
grep -q 'lua:hot@flush.lua' funcs.out || { cat funcs.out; fail "gdb's info functions does not list hot's trace"; }
grep -q 'lua:hot@flush.lua' images.out || { cat images.out; fail "jitstack --images does not list hot's trace"; }
grep -E "$dead" funcs.out && fail "gdb still knows a dead trace"
grep -E "$dead" images.out && fail "jitstack still lists a dead trace"
echo "gdb and jitstack know only: $(grep -o 'lua:[^ ]* (trace [0-9]*)' images.out | sort -u | tr '\n' ' ')"
# each dead trace was there: LuaJIT compiled and stopped it (flush.lua's own
# record), so its absence above is the module's doing
for f in old gone; do
	line=$(grep -n -- "--> trace: $f" flush.lua | cut -d: -f1)
	awk -v l="$line" '$4 == l { found = 1 } END { exit !found }' expect.traces || fail "no trace of $f was compiled"
done
awk '$4 == 1 { found = 1 } END { exit !found }' expect.traces || fail "the chunk's trace was not compiled"
n=$(awk '{ print $1 }' expect.traces | sort | uniq -d | head -1)
[ -n "$n" ] && echo "trace number $n was given to more than one trace"

probe without wait LJP_WAIT=30
free_without=$(grep '^free trace numbers' probe.out)
gdb_bt_live "$PROBE_PID"
kill_tree "$PROBE_PID"
# the module holds no prototype (nor so its traces) alive
[ "$free_with" = "$free_without" ] || fail "with the module '$free_with', without '$free_without'"
echo "$free_with, with the module as without"
baseline_fails "gdb after the flushes, stock luajit" gdb gdb.out
pass "flushed, replaced and freed traces leave no name in gdb or jitstack; the live trace is named"
