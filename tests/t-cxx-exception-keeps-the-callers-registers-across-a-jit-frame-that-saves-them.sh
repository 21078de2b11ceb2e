# SPDX-License-Identifier: MIT
# A JIT frame with an asmjit-style prologue (push rbp; mov rbp,rsp; push rbx;
# push r12) that clobbers rbx and r12, published as a frame-pointer frame
# that lists those saved registers, between a C++ throw and its catch: after
# the catch the caller's values in its callee-saved registers are intact
# (the caller's result is checked against the same formula computed
# directly).  Published without the saved registers, the same program gets
# wrong values, which shows the check can fail.  The same with the saving
# done by a shim and the clobbering code a region frame of the shim's that
# lists the saved registers (--region).
. "$(dirname "$0")/lib.sh"
need_file "$TB/fp-saved-regs" "make tests builds it"
limit 60 "$TB/fp-saved-regs" > out 2>&1
rc=$?
cat out
[ $rc = 77 ] && skip "$(tail -1 out)"
[ $rc = 0 ] || fail "the caller's callee-saved registers were not restored across the JIT frame"
limit 60 "$TB/fp-saved-regs" --undescribed > out.undescribed 2>&1
rc=$?
cat out.undescribed
[ $rc = 1 ] || fail "without the saved registers described the caller should get wrong values (exit $rc)"
limit 60 "$TB/fp-saved-regs" --region > out.region 2>&1
rc=$?
cat out.region
[ $rc = 0 ] || fail "--region: the caller's callee-saved registers were not restored across the region frame"
limit 60 "$TB/fp-saved-regs" --region --undescribed > out.region-undescribed 2>&1
rc=$?
cat out.region-undescribed
[ $rc = 1 ] || fail "--region without the saved registers described the caller should get wrong values (exit $rc)"
pass "a C++ exception across a JIT frame, or a region frame of a shim, that saves rbx and r12 leaves the caller's registers intact"
