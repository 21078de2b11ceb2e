# SPDX-License-Identifier: MIT
# gdb that starts the child itself hears every registration through its
# breakpoint on __jit_debug_register_code (not only the list it reads when
# attaching), and still names every frame when the child aborts.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
limit 120 "$GDB" -nx -batch -ex "set pagination off" -ex run -ex bt \
	--args "$TB/child" abort --depth 2 > gdb.out 2>&1
gdb_frames < gdb.out > frames
grep -q 'SIGABRT' gdb.out || { cat gdb.out; fail "the child did not stop on SIGABRT under gdb"; }
check_frames child.expect < frames || { cat gdb.out; fail "gdb bt after run"; }
pass "gdb running the child names the JIT frames it was told about at run time"
