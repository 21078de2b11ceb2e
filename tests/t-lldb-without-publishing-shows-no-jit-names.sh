# SPDX-License-Identifier: MIT
# The counter-check for lldb: with the channels off it names no JIT frame
# (and, walking frame pointers, loses c_middle behind jit:cfi).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
JITUNWIND=none start_child "$TB/child" wait
lldb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"
grep -q 'c_inner' lldb.out || { cat lldb.out; fail "lldb did not even reach c_inner"; }
grep -q 'jit:' lldb.out && { cat lldb.out; fail "lldb named JIT frames with nothing published"; }
check_frames child.expect < frames > judge.out && { cat lldb.out judge.out; fail "the stack matched without publishing"; }
pass "without publishing, lldb names no JIT frame"
