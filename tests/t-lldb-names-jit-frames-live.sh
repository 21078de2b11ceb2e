# SPDX-License-Identifier: MIT
# lldb attached to a running child reads the GDB JIT interface too (it loads
# each image with its section addresses as load addresses) and shows every
# frame by name, jit:fp with its source line.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
start_child "$TB/child" wait --depth 2
lldb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"
check_frames child.expect < frames || { cat lldb.out; fail "lldb bt"; }
want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
grep -q "\`jit:fp at $want\$" lldb.out || { grep 'jit:' lldb.out; fail "jit:fp is not shown at $want"; }
pass "lldb bt of a live process names the JIT frames and shows jit:fp at $want"
