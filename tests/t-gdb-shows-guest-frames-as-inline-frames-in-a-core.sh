# SPDX-License-Identifier: MIT
# gdb reads the guest frames of a blob (ju_blob.inlines) from a core file:
# the child aborts under guest:leaf, and `gdb PROGRAM CORE -ex bt` shows
# guest:leaf, guest:mid and guest:run at the lines of guest.expect.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
need_core_in_cwd
# a child that cannot publish leaves no core: that is a failure, not a skip
"$TB/guest-child" dump > dump.out 2>&1 || { cat dump.out; fail "guest-child cannot publish its blob"; }
make_core "$TB/guest-child" abort
gdb_bt_core "$TB/guest-child" "$CORE"
guest_judge gdb.out || { cat gdb.out; fail "gdb bt on the core"; }
pass "gdb shows the guest frames in a core at their lines"
