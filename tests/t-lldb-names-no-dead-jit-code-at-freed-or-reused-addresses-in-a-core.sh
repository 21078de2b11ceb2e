# SPDX-License-Identifier: MIT
# The same as ...-live.sh from a core: lldb reads the descriptor's list from
# the core of tests/reuse_child.c and names only the blobs published when it
# aborted.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
need_core_in_cwd
need_file "$TB/reuse-child" "make tests"
make_core "$TB/reuse-child" abort
reuse_lldb "$TB/reuse-child" "$CORE"
reuse_judge lldb || fail "lldb on the core names dead JIT code, or misses live code (above)"
pass "lldb on a core: new frames named after the new blobs; freed addresses unnamed, reused ones only by the new blob"
