# SPDX-License-Identifier: MIT
# lldb (lldb-16), attached to probe.lua waiting in C called from its trace,
# and on the core of the same program aborting there: the probe, the trace
# by the name its source gives it, lua_pcall, ..., lua_cpcall, main.
# Baseline, which must fail: stock luajit (lldb's fallback, frame pointers,
# finds none in a trace: LuaJIT's traces and interpreter use rbp as a
# general register, vm_x64.dasc RB).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
for how in with without; do
	probe $how wait LJP_WAIT=30
	lldb_bt_live "$PROBE_PID"
	kill_tree "$PROBE_PID"
	if [ $how = with ]; then
		judge_frames lldb lldb.out || { cat lldb.out; fail "lldb live"; }
	else
		baseline_fails "lldb live, stock luajit" lldb lldb.out
	fi
	probe $how abort
	lldb_bt_core "$LUAJIT" "$CORE"
	if [ $how = with ]; then
		judge_frames lldb lldb.out || { cat lldb.out; fail "lldb on the core"; }
	else
		baseline_fails "lldb core, stock luajit" lldb lldb.out
	fi
done
pass "lldb names the trace and reaches main, live and in a core; stock luajit does not"
