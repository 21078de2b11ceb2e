# SPDX-License-Identifier: MIT
# JIT blobs published with a personality routine (ju_blob.personality) and
# an LSDA (ju_blob.lsda), a C++ exception thrown below them (libgcc, the
# unwinder channel; tests/personality.cc):
#   - chain: each blob's own personality is called for its frame, in both
#     phases, innermost first, with its blob's region start and LSDA; a
#     blob without one between them is passed over; swapped personalities
#     at the same addresses are called swapped (a freed place keeps its CIE,
#     so it is not reused by a blob of another one);
#   - catch: __gxx_personality_v0 with an LSDA of GCC's format lands in the
#     blob's own catch (...) landing pad, and the C++ caller's catch does
#     not run.
# Published without (--none), no personality is called and the C++ caller
# catches: exit 1 each, which shows the checks can fail.
. "$(dirname "$0")/lib.sh"
need_file "$TB/personality" "make tests builds it"
for mode in chain catch; do
	limit 60 "$TB/personality" $mode > $mode.out 2>&1
	rc=$?
	cat $mode.out
	[ $rc = 0 ] || fail "$mode: the unwinder did not do as the blobs' personality and LSDA say (exit $rc)"
	limit 60 "$TB/personality" $mode --none > $mode.none.out 2>&1
	rc=$?
	cat $mode.none.out
	[ $rc = 1 ] || fail "$mode --none: without personality the check should fail (exit $rc)"
done
pass "C++ exceptions reach the personality routines of JIT frames with their LSDAs, and land where an LSDA says"
