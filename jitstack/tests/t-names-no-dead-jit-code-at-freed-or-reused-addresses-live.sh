# SPDX-License-Identifier: MIT
# jitstack -p on a JIT that freed code and reused some of its addresses
# (tests/reuse_child.c: 2000 blobs in one arena, a few unpublished in the
# middle, new code at some of their addresses): each thread parked in new
# code shows that blob's name, called from park_caller; the functions
# --images lists cover a reused address with the new blob only and a freed,
# not reused address with nothing; blobs never unpublished are listed.
. "$(dirname "$0")/lib.sh"
need_file "$TB/reuse-child" "make tests"
start_child child.out "$TB/reuse-child" wait
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
limit 60 "$JS" -p "$CHILD_PID" --images > images.txt || fail "jitstack --images exited $?"
python3 "$ROOT/tests/check_reuse.py" judge jitstack reuse.expect js.json images.txt ||
	fail "jitstack names dead JIT code, or misses live code (above)"
pass "live: new frames named after the new blobs; freed addresses in no function, reused ones in the new blob only"
