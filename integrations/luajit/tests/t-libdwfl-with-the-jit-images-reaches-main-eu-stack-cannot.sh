# SPDX-License-Identifier: MIT
# libdwfl given the GDB JIT interface's images as modules (the matrix's
# mx-dwfl --jit, what jitstack does), live and on a core of probe.lua:
# the probe, the trace by name, lua_pcall, ..., lua_cpcall, main, unwound
# with the trace's CFI.  Baseline, which must fail: stock luajit.
# eu-stack, which takes no JIT images, stops at the trace with or without
# the module: its only way through code without a module is the rbp chain,
# and LuaJIT's traces and interpreter keep no frame pointer (rbp is a
# general register, vm_x64.dasc RB): asserted, so that a change shows.
. "$(dirname "$0")/lib.sh"
DWFL=$BUILD/matrix/mx-dwfl
need_file "$DWFL" "make matrix-tools"
for how in with without; do
	probe $how wait LJP_WAIT=30
	limit 60 "$DWFL" -p "$PROBE_PID" --jit > dwfl.out 2>&1 || { cat dwfl.out; fail "mx-dwfl -p exited $?"; }
	eu=
	command -v eu-stack > /dev/null && { limit 60 eu-stack -p "$PROBE_PID" > eu.out 2>&1; eu=1; }
	kill_tree "$PROBE_PID"
	if [ $how = with ]; then
		judge_frames dwfl dwfl.out || { cat dwfl.out; fail "libdwfl live"; }
	else
		baseline_fails "libdwfl live, stock luajit" dwfl dwfl.out
	fi
	if [ -n "$eu" ]; then
		baseline_fails "eu-stack live, $how the module" eu-stack eu.out
		grep -q 'ljp_probe' eu.out || { cat eu.out; fail "eu-stack did not even reach the probe"; }
	fi
	probe $how abort
	limit 60 "$DWFL" --core "$CORE" --exe "$LUAJIT" --jit > dwfl.out 2>&1 ||
		{ cat dwfl.out; fail "mx-dwfl --core exited $?"; }
	if [ $how = with ]; then
		judge_frames dwfl dwfl.out || { cat dwfl.out; fail "libdwfl on the core"; }
	else
		baseline_fails "libdwfl core, stock luajit" dwfl dwfl.out
	fi
	if [ -n "$eu" ]; then
		limit 60 eu-stack --core="$CORE" --executable="$LUAJIT" > eu.out 2>&1
		baseline_fails "eu-stack core, $how the module" eu-stack eu.out
	fi
done
[ -n "$eu" ] || echo "skip (in part): eu-stack is not installed"
pass "libdwfl with the JIT images reaches main through the trace, live and in a core; stock luajit does not; eu-stack cannot"
