# SPDX-License-Identifier: MIT
# The same as ...-live.sh from the core of tests/reuse_child.c: jitstack
# --core names only the blobs published when it aborted, in its stacks and
# in the functions --images lists.
. "$(dirname "$0")/lib.sh"
need_file "$TB/reuse-child" "make tests"
make_core "$TB/reuse-child" abort
limit 60 "$JS" --core "$CORE" --json > js.json || fail "jitstack --core exited $?"
limit 60 "$JS" --core "$CORE" --images > images.txt || fail "jitstack --core --images exited $?"
python3 "$ROOT/tests/check_reuse.py" judge jitstack reuse.expect js.json images.txt ||
	fail "jitstack on the core names dead JIT code, or misses live code (above)"
pass "core: new frames named after the new blobs; freed addresses in no function, reused ones in the new blob only"
