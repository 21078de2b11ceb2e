# SPDX-License-Identifier: MIT
# gdb attached to a JIT that freed code and reused some of its addresses
# (tests/reuse_child.c: 2000 blobs in one arena, a few unpublished in the
# middle, new code published at some of their addresses) names only what
# is published now: each thread parked in new code shows that blob's name,
# `info symbol` at a reused address names only the new blob, and at a freed
# address that nothing took again names nothing -- never a dead blob.  The
# control: `info symbol` in blobs never unpublished names them.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
need_file "$TB/reuse-child" "make tests"
start_child "$TB/reuse-child" wait
reuse_gdb -p "$CHILD_PID"
kill_tree "$CHILD_PID"
reuse_judge gdb || fail "gdb names dead JIT code, or misses live code (above)"
pass "gdb: new frames named after the new blobs; freed addresses unnamed, reused ones only by the new blob"
