# SPDX-License-Identifier: MIT
# A C++ exception thrown in the innermost frame is caught near main, after
# the unwinder's two phases crossed every JIT frame.
. "$(dirname "$0")/lib.sh"
limit 30 "$TB/child" throw --depth 2 > out 2>&1 || { cat out; fail "exception not caught"; }
grep -q '^result: PASS' out || { cat out; fail "no PASS line"; }
cat out
pass "C++ exception crosses JIT frames"
