# SPDX-License-Identifier: MIT
# gdb attached to a running child (`gdb -p PID -ex bt`) reads the JIT entries
# already on the descriptor's list and shows every frame of the child's
# stack by name, JIT frames of all three kinds included, at depth 1 and 3;
# the jit:fp frame carries the source line of the table the child published.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
for d in 1 3; do
	start_child "$TB/child" wait --depth $d
	gdb_bt_live "$CHILD_PID"
	kill_tree "$CHILD_PID"
	check_frames child.expect < frames || { cat gdb.out; fail "gdb bt at depth $d"; }
	want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
	grep -q " in jit:fp () at $want\$" gdb.out || { grep 'jit:' gdb.out; fail "jit:fp is not shown at $want"; }
	echo "jit:fp at $want"
done
pass "gdb bt of a live process names fp, cfi and region JIT frames and jit:fp's line"
