# SPDX-License-Identifier: MIT
# lldb on a core file reads the descriptor's list from the core and names
# every frame through the JIT code.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
need_core_in_cwd
make_core "$TB/child" abort --depth 2
lldb_bt_core "$TB/child" "$CORE"
check_frames child.expect < frames || { cat lldb.out; fail "lldb bt on the core"; }
want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
grep -q "\`jit:fp at $want\$" lldb.out || { grep 'jit:' lldb.out; fail "jit:fp is not shown at $want"; }
pass "lldb bt on a core names the JIT frames and shows jit:fp at $want"
