# SPDX-License-Identifier: MIT
# The counter-check: with nothing published (JITUNWIND=none) glibc
# backtrace() stops at the first JIT frame, and the C++ exception cannot
# cross it (the runtime terminates the process).  So the passes above are the
# library's doing.
. "$(dirname "$0")/lib.sh"
JITUNWIND=none limit 30 "$TB/child" backtrace > out
rc=$?
cat out
[ $rc = 1 ] || fail "expected the check to fail without publishing (exit $rc)"
grep -q '^backtrace: .*jit:region$' out || fail "backtrace should end at jit:region"
JITUNWIND=none limit 30 "$TB/child" throw > out 2>&1
rc=$?
[ $rc -ne 0 ] || { cat out; fail "exception crossed unpublished JIT code?"; }
grep -q 'terminate called' out || { cat out; fail "expected std::terminate"; }
pass "without publishing, backtrace stops at JIT code and exceptions terminate"
