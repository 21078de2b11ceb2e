# SPDX-License-Identifier: MIT
# glibc backtrace() and libgcc's _Unwind_Backtrace, called from C that a
# trace calls through the FFI (probe.lua), reach main through the trace when
# the module publishes it to libgcc's registry: the probe, the trace (by its
# address: backtrace names no JIT code), lua_pcall, ..., lua_cpcall, main.
# That registry is the `unwinder` channel, on by default, JITUNWIND unset
# (each trace carries LuaJIT's own personality: see
# t-errors-thrown-on-a-trace-are-caught-as-without-the-module).
# Baselines, which must fail: stock luajit, whose one FDE over all its
# machine code gives libgcc garbage (the unwind dies or stops in the trace),
# and the module without the unwinder channel (JITUNWIND=gdb).
. "$(dirname "$0")/lib.sh"
unset JITUNWIND
for mode in backtrace unwind; do
	probe with $mode
	grep -q '^done' probe.out || { cat probe.out; fail "$mode: the probe did not finish"; }
	judge_frames bt probe.out --by-address || { cat probe.out; fail "$mode through the published trace"; }
	echo "$mode with the module (its default channels, JITUNWIND unset): PASS"

	probe without $mode
	echo "stock luajit: exit $PROBE_RC"
	baseline_fails "$mode, stock luajit" bt probe.out --by-address
	probe with $mode JITUNWIND=gdb
	baseline_fails "$mode, module without the unwinder channel (JITUNWIND=gdb)" bt probe.out --by-address
done
pass "backtrace() and _Unwind_Backtrace reach main through the trace with the module's default channels, not without the unwinder channel"
