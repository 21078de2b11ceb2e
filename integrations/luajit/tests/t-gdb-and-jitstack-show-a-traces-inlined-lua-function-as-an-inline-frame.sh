# SPDX-License-Identifier: MIT
# gdb, attached to guest.lua waiting in C that its trace calls through the
# Lua function step, which LuaJIT inlined into the trace, and on the core of
# the same program aborting there: step is an inline frame of the trace, at
# the line it is defined on (jit.util tells no line inside it), and the
# trace's frame is at the line of the call of step -- both lines read from
# the workload's marks.  Without guest frames (JITUNWIND_LUA_GUEST_FRAMES=0,
# the module as it was before) gdb shows no step frame, which must fail.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
PROBE_SCRIPT=guest.lua
guest_marks

# The two frames, innermost first: the inline frame of step (gdb prints
# an inline frame's pc only when it is the innermost), then the trace's.
check() { # WHAT FILE
	awk -v def="$def" -v call="$call" -v start="$start" '
		/^#/ && $0 ~ ("lua:step@guest.lua:" def " \\(\\) at guest.lua:" def "$") { s = NR; next }
		/^#/ && s && NR == s + 1 && $0 ~ ("^#[0-9]+ +lua:hot@guest.lua:" start " \\(trace [0-9]+\\) \\(\\) at guest.lua:" call "$") { ok = 1 }
		END { exit !ok }' "$2" || { grep '^#' "$2"; return 1; }
	grep -q ' main ' "$2" || { grep '^#' "$2"; echo "$1: no main"; return 1; }
}

for frames in 1 0; do
	export JITUNWIND_LUA_GUEST_FRAMES=$frames
	probe with wait LJP_WAIT=20
	gdb_bt_live "$PROBE_PID"
	[ -x "$BUILD/jitstack/jitstack" ] && limit 60 "$BUILD/jitstack/jitstack" -p "$PROBE_PID" > jitstack-$frames.out 2>&1
	kill_tree "$PROBE_PID"
	cp gdb.out gdb-live-$frames.out
	probe with abort
	gdb_bt_core "$LUAJIT" "$CORE"
	cp gdb.out gdb-core-$frames.out
done
for where in live core; do
	check "gdb $where" gdb-$where-1.out || fail "gdb $where: step is not an inline frame of the trace at guest.lua:$def, called at guest.lua:$call"
	if check "gdb $where" gdb-$where-0.out > /dev/null; then
		fail "gdb $where: the check passes without guest frames too, so it proves nothing"
	fi
	echo "gdb $where without guest frames: FAIL as it must ($(grep -c 'lua:step' gdb-$where-0.out) step frames)"
done
# jitstack -p: the same two frames, step marked [inlined]
if [ -x "$BUILD/jitstack/jitstack" ]; then
	js() { grep -A1 "lua:step@guest.lua:$def .* at guest.lua:$def \[inlined\]" "$1" |
		grep -q "lua:hot@guest.lua:$start (trace [0-9]*).* at guest.lua:$call"; }
	js jitstack-1.out || { cat jitstack-1.out; fail "jitstack: step is not an [inlined] frame of the trace"; }
	js jitstack-0.out && fail "jitstack: the check passes without guest frames too"
	echo "jitstack -p: step [inlined] in the trace; without guest frames: none, as it must"
else
	echo "jitstack -p: not checked: $BUILD/jitstack/jitstack is missing (make jitstack)"
fi
grep '^#' gdb-live-1.out | sed -n 1,8p
pass "gdb and jitstack show the Lua function step, inlined into the trace, as an inline frame at its line, the trace at the call's line, live and in a core"
