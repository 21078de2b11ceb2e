# SPDX-License-Identifier: MIT
# The counter-check: with the channels off (JITUNWIND=none) gdb names no JIT
# frame and cannot show the expected stack, live or in a core.  So the names
# in the other gdb tests come from the library's registrations.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
JITUNWIND=none start_child "$TB/child" wait
gdb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"
grep -q 'in c_inner ()\|c_inner ()' gdb.out || { cat gdb.out; fail "gdb did not even reach c_inner"; }
grep -q 'jit:' gdb.out && { cat gdb.out; fail "gdb named JIT frames with nothing published"; }
check_frames child.expect < frames > judge.out && { cat gdb.out judge.out; fail "the stack matched without publishing"; }
# The core half runs where cores can be written (not under ASan, which turns
# them off): the live half above already made the point.
case $(cat /proc/sys/kernel/core_pattern) in
core|core.*|core-*) ;;
*) pass "without publishing, gdb names no JIT frame (live; cores go elsewhere here)" ;;
esac
rm -f core core.*
(ulimit -c unlimited && JITUNWIND=none exec "$TB/child" abort) > child.out 2>&1
CORE=$(ls core core.* 2>/dev/null | head -1)
[ -n "$CORE" ] || pass "without publishing, gdb names no JIT frame (live; no core was written here)"
gdb_bt_core "$TB/child" "$CORE"
grep -q 'c_inner' gdb.out || { cat gdb.out; fail "gdb did not even reach c_inner in the core"; }
grep -q 'jit:' gdb.out && { cat gdb.out; fail "gdb named JIT frames in a core with nothing published"; }
pass "without publishing, gdb names no JIT frame, live or in a core"
