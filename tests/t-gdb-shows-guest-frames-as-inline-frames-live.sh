# SPDX-License-Identifier: MIT
# A blob that inlines guest functions (ju_blob.inlines) shows as one frame
# per guest function in gdb attached to the running process: guest:leaf,
# guest:mid and guest:run for the one native frame, each at the line the
# published tree and line table give (guest.expect, derived by the child).
# The same blob published without its tree shows as guest:run alone.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
for mode in "" --no-inlines; do
	start_ready child.out '^ready' guest-child "$TB/guest-child" wait $mode
	gdb_bt_live "$CHILD_PID"
	kill_tree "$CHILD_PID"
	guest_judge gdb.out || { cat gdb.out; fail "gdb bt ${mode:-with the tree}"; }
done
pass "gdb shows the guest frames of a live process at their lines"
