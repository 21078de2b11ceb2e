# SPDX-License-Identifier: MIT
# glibc backtrace() (libgcc underneath) reports every frame of the child's
# stack, JIT frames of all three kinds included, at depth 1 and 3.
. "$(dirname "$0")/lib.sh"
for d in 1 3; do
	limit 30 "$TB/child" backtrace --depth $d > out || { cat out; fail "backtrace, depth $d"; }
	cat out
done
pass "backtrace() walks through fp, cfi and region JIT frames"
