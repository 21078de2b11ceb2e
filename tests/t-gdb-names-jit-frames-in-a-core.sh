# SPDX-License-Identifier: MIT
# gdb reads the descriptor again from a core file: the child aborts in its
# innermost frame, and `gdb PROGRAM CORE -ex bt` names every frame through
# the JIT code, with jit:fp's source line.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
need_core_in_cwd
make_core "$TB/child" abort --depth 2
gdb_bt_core "$TB/child" "$CORE"
check_frames child.expect < frames || { cat gdb.out; fail "gdb bt on the core"; }
want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
grep -q " in jit:fp () at $want\$" gdb.out || { grep 'jit:' gdb.out; fail "jit:fp is not shown at $want"; }
pass "gdb bt on a core names the JIT frames and shows jit:fp at $want"
