# SPDX-License-Identifier: MIT
# gdb, attached to probe.lua waiting in C called from its trace, and on the
# core of the same program aborting there: the probe, the trace by the name
# its source gives it (lua:hot@probe.lua:LINE (trace N)), lua_pcall, ...,
# lua_cpcall, main; the trace's frame shows the line it starts at.  Live,
# gdb's values of the callee-saved registers in lua_pcall's frame (rbx,
# rbp, r12-r15: the interpreter's frame and BC_JLOOP keep them, the trace's
# CFI says where) are the ones lua_pcall really has when the interpreter
# returns to it.  Baseline, which must fail: stock luajit (gdb reads the
# return address at rsp inside the trace).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
for how in with without; do
	probe $how wait LJP_WAIT=20
	gdb_bt_live "$PROBE_PID"
	kill_tree "$PROBE_PID"
	if [ $how = with ]; then
		judge_frames gdb gdb.out || { cat gdb.out; fail "gdb live"; }
		name=$(judge name expect probe.lua)
		line=$(grep -n -- '--> trace: hot' probe.lua | cut -d: -f1)
		grep -qF "in $name () at probe.lua:$line" gdb.out || { grep lua: gdb.out; fail "the trace is not shown at probe.lua:$line"; }
	else
		baseline_fails "gdb live, stock luajit" gdb gdb.out
	fi
	probe $how abort
	gdb_bt_core "$LUAJIT" "$CORE"
	if [ $how = with ]; then
		judge_frames gdb gdb.out || { cat gdb.out; fail "gdb on the core"; }
	else
		baseline_fails "gdb core, stock luajit" gdb gdb.out
	fi
done

# The caller's registers, unwound through the trace, against their values
# when lua_pcall gets control back (LJP_WAIT=2: the probe returns).
probe with wait LJP_WAIT=3
cat > regs.gdb <<'G'
set pagination off
frame function lua_pcall
info registers rbx rbp r12 r13 r14 r15 rsp
tbreak *$pc
continue
info registers rbx rbp r12 r13 r14 r15 rsp
G
limit 60 "$GDB" -nx -batch -p "$PROBE_PID" -x regs.gdb > regs.out 2>&1
kill_tree "$PROBE_PID"
awk '/^(rbx|rbp|r1[2-5]|rsp) / { print $1, $2 }' regs.out > regs.txt
[ "$(wc -l < regs.txt)" = 14 ] || { cat regs.out; fail "gdb printed no registers"; }
head -7 regs.txt > unwound.txt; tail -7 regs.txt > real.txt
diff unwound.txt real.txt > regs.diff || { cat regs.diff; fail "registers unwound through the trace differ from lua_pcall's own"; }
echo "lua_pcall's callee-saved registers, unwound through the trace and real: $(tr '\n' ' ' < real.txt)"
pass "gdb names the trace and reaches main, live and in a core, with the caller's registers; stock luajit does not"
