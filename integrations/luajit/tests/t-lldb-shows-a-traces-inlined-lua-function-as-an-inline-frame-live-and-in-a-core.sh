# SPDX-License-Identifier: MIT
# lldb (lldb-16), attached to guest.lua waiting in C that its trace calls
# through the Lua function step, which LuaJIT inlined into the trace, and on
# the core of the same program aborting there: step is an inline frame of
# the trace ("`lua:hot@... (trace N) [inlined] lua:step@... at LINE"), at the
# line it is defined on, and the next frame is the trace's own, at the line
# of the call of step -- all lines read from the workload's marks.  lldb
# reads the inline tree from the DW_TAG_inlined_subroutine entries of the
# trace's GDB JIT image.  Without guest frames (JITUNWIND_LUA_GUEST_FRAMES=0)
# lldb shows no step frame, which must fail the same check.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
PROBE_SCRIPT=guest.lua
guest_marks

# lldb's last listing (it prints frame #0 when it attaches, then bt's):
# the inline frame of step inside the trace, then, as the next frame, the
# trace at the call's line; and main below them.
check() { # FILE
	awk -v def="$def" -v call="$call" -v start="$start" '
		/frame #0:/ { s = ok = seen_main = 0 }
		/frame #[0-9]+:/ && index($0, "`lua:hot@guest.lua:" start " (trace ") &&
		    $0 ~ (" \\[inlined\\] lua:step@guest.lua:" def " at guest.lua:" def "(:[0-9]+)?$") { s = NR; next }
		/frame #[0-9]+:/ && s && NR == s + 1 &&
		    $0 ~ ("`lua:hot@guest.lua:" start " \\(trace [0-9]+\\) at guest.lua:" call "(:[0-9]+)?$") { ok = 1 }
		/frame #[0-9]+:/ && /`main \+ / { seen_main = 1 }
		END { exit !(ok && seen_main) }' "$1" || { grep 'frame #' "$1"; return 1; }
}

for frames in 1 0; do
	export JITUNWIND_LUA_GUEST_FRAMES=$frames
	probe with wait LJP_WAIT=30
	lldb_bt_live "$PROBE_PID"
	kill_tree "$PROBE_PID"
	cp lldb.out lldb-live-$frames.out
	probe with abort
	lldb_bt_core "$LUAJIT" "$CORE"
	cp lldb.out lldb-core-$frames.out
done
for where in live core; do
	check lldb-$where-1.out ||
		fail "lldb $where: step is not an inline frame of the trace at guest.lua:$def, called at guest.lua:$call"
	if check lldb-$where-0.out > /dev/null; then
		fail "lldb $where: the check passes without guest frames too, so it proves nothing"
	fi
	echo "lldb $where without guest frames: FAIL as it must ($(grep -c 'lua:step' lldb-$where-0.out) step frames)"
done
grep 'frame #[0-9]*:.*lua:' lldb-live-1.out | tail -2
pass "lldb shows the Lua function step, inlined into the trace, as an inline frame at its line, the trace at the call's line, live and in a core"
