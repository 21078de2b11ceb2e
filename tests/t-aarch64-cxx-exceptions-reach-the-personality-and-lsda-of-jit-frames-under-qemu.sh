# SPDX-License-Identifier: MIT
# AArch64, under qemu-user: tests/personality.cc cross-built, its blobs in
# AArch64 code, published with personality routines and LSDAs
# (ju_blob.personality, .lsda: "zPLR"/"zPR" CIEs), a C++ exception thrown
# below them (libgcc, the unwinder channel):
#   - chain: each blob's own personality is called for its frame, in both
#     phases, innermost first, with its blob's region start and LSDA, and
#     again with the personalities swapped at the same addresses;
#   - catch: __gxx_personality_v0 with an LSDA of GCC's format lands in the
#     blob's own catch (...) landing pad, and the C++ caller's catch does
#     not run.
# Published without (--none), no personality is called and the C++ caller
# catches: exit 1 each, which shows the checks can fail.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/aarch64.sh"
need_aarch64
A64=$BUILD/aarch64/personality
need_file "$A64" "make tests-aarch64 builds it"
file "$A64" | grep -q 'ARM aarch64' || fail "$A64 is not an AArch64 program"
run() { (ulimit -c 0 && exec timeout -k 5 60 qemu-aarch64 "$A64" "$@"); }
for mode in chain catch; do
	run $mode > $mode.out 2>&1
	rc=$?
	cat $mode.out
	[ $rc = 0 ] || fail "$mode: the unwinder did not do as the blobs' personality and LSDA say (exit $rc)"
	run $mode --none > $mode.none.out 2>&1
	rc=$?
	cat $mode.none.out
	[ $rc = 1 ] || fail "$mode --none: without personality the check should fail (exit $rc)"
	echo "$mode: PASS; $mode --none: FAIL as it must"
done
pass "AArch64 under qemu: C++ exceptions reach the personality routines of JIT frames with their LSDAs, and land where an LSDA says"
