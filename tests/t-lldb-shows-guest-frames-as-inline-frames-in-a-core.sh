# SPDX-License-Identifier: MIT
# lldb reads the guest frames from a core file of the guest child, aborted
# under guest:leaf, at the lines of guest.expect.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
need_core_in_cwd
# a child that cannot publish leaves no core: that is a failure, not a skip
"$TB/guest-child" dump > dump.out 2>&1 || { cat dump.out; fail "guest-child cannot publish its blob"; }
make_core "$TB/guest-child" abort
lldb_bt_core "$TB/guest-child" "$CORE"
guest_judge lldb.out || { cat lldb.out; fail "lldb bt on the core"; }
pass "lldb shows the guest frames in a core at their lines"
