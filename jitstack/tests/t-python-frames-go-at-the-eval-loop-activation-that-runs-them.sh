# SPDX-License-Identifier: MIT
# python/merge.c places each piece of a thread's chain of Python frames
# (up to an entry frame) just inside the eval loop activation that runs
# it, innermost piece at the innermost activation, leaves out the frames a
# JIT frame above the activation already shows as its guest frames (never
# a Python function twice), and warns where the placement is not exact:
# the cases of pymerge.cases, each with the stack a reader expects.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/pymerge_check" "make $JTB/pymerge_check"
limit 60 "$JTB/pymerge_check" < "$ROOT/jitstack/tests/pymerge.cases" > out || { cat out; fail "a merge differs"; }
pass "$(cat out)"
