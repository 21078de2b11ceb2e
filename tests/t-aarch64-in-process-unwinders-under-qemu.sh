# SPDX-License-Identifier: MIT
# AArch64, under qemu-user: the child cross-built for AArch64 publishes its
# hand-written AArch64 blobs (frame record, raw CFI, region rule under a
# shim's frame); glibc backtrace(), libgcc's _Unwind_Backtrace and a C++
# exception get through all three, at depth 1 and 3, packed and spaced.
# Counter-check: with nothing published backtrace() loses the stack and the
# exception is never caught.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/aarch64.sh"
need_aarch64
for d in 1 3; do
	for spacing in "" --spaced; do
		for a in backtrace unwind throw; do
			a64_child $a --depth $d $spacing > out 2>&1 || { cat out; fail "$a, depth $d $spacing"; }
			grep -q '^result: PASS' out || { cat out; fail "$a, depth $d $spacing: no PASS"; }
		done
		echo "depth $d ${spacing:-packed}: backtrace, _Unwind_Backtrace, throw pass"
	done
done
cat out
file "$A64_CHILD" | grep -q 'ARM aarch64' || fail "$A64_CHILD is not an AArch64 program"

JITUNWIND=none a64_child backtrace > none.out 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^result: FAIL' none.out || { cat none.out; fail "backtrace with nothing published: exit $rc, want a FAIL"; }
JITUNWIND=none a64_child throw > none.out 2>&1
rc=$?
[ $rc -ne 0 ] && ! grep -q '^result: PASS' none.out || { cat none.out; fail "exception with nothing published: exit $rc, want it uncaught"; }
echo "nothing published: backtrace() stops, the exception is not caught (exit $rc)"
pass "AArch64 under qemu: backtrace(), _Unwind_Backtrace and a C++ exception cross fp, cfi and region JIT frames"
