# A Lua error thrown while a trace is on the C stack (trace_error.lua: the
# string.rep helper the trace calls runs out of room) is caught by pcall,
# three times out of three, by stock luajit and with the module's default
# channels: LuaJIT's own FDE over its machine code has the personality
# (lj_err.c err_unwind_jit) that leaves the trace through its exit stub.
# With the unwinder channel asked for (JITUNWIND=unwinder,gdb), libgcc
# finds the trace's own FDE first, which carries no personality (the
# library has no field for one: docs/INTEGRATING.md), and LuaJIT panics.
# That is why the channel is opt-in; this test holds it to the truth, and
# fails the day the hazard is gone, when the channel can become the default.
. "$(dirname "$0")/lib.sh"
caught() { grep -c '^pcall	[0-9]	false	not enough memory$' "$1"; }
limit 60 luajit trace_error.lua > stock.out 2>&1
[ $? = 0 ] && [ "$(caught stock.out)" = 3 ] || { cat stock.out; fail "stock luajit does not catch the error: the workload is wrong"; }
limit 60 luajit -l jitunwind trace_error.lua > default.out 2>&1
[ $? = 0 ] && [ "$(caught default.out)" = 3 ] || { cat default.out; fail "with the module's default channels the error is not caught"; }
echo "stock luajit and the module (channels: gdb) catch all 3 errors thrown on the trace"
JITUNWIND=unwinder,gdb limit 60 luajit -l jitunwind trace_error.lua > unwinder.out 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(caught unwinder.out)" = 3 ]; then
	fail "with the unwinder channel the error is caught now: the hazard is gone, make the channel the default"
fi
grep -q 'PANIC' unwinder.out || { cat unwinder.out; fail "with the unwinder channel: exit $rc but no PANIC"; }
echo "with JITUNWIND=unwinder,gdb: exit $rc, $(grep PANIC unwinder.out) (the known hazard)"
pass "errors thrown on a trace are caught with the module's defaults; the opt-in unwinder channel's hazard is as documented"
