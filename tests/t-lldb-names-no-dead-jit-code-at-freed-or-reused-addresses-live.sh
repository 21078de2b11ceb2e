# SPDX-License-Identifier: MIT
# lldb attached to a JIT that freed code and reused some of its addresses
# (tests/reuse_child.c) names only what is published now: threads parked in
# new code show the new blobs' names, `image lookup -a` at a reused address
# names only the new blob and at a freed, not reused address nothing.  The
# control: lookups in blobs never unpublished name them.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
need_file "$TB/reuse-child" "make tests"
start_child "$TB/reuse-child" wait
reuse_lldb -p "$CHILD_PID"
kill_tree "$CHILD_PID"
reuse_judge lldb || fail "lldb names dead JIT code, or misses live code (above)"
pass "lldb: new frames named after the new blobs; freed addresses unnamed, reused ones only by the new blob"
