# SPDX-License-Identifier: MIT
# lldb attached to the running guest child shows the blob's guest functions
# as inlined frames (`guest:run [inlined] guest:leaf at leaf.py:30`), at
# the lines of guest.expect.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
start_ready child.out '^ready' guest-child "$TB/guest-child" wait
lldb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"
guest_judge lldb.out || { cat lldb.out; fail "lldb bt"; }
pass "lldb shows the guest frames of a live process at their lines"
