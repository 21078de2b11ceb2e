# SPDX-License-Identifier: MIT
# nongnu libunwind (linked in, as memray and heaptrack do) reports every frame
# of the child's stack with unw_backtrace and with an unw_step loop, at depth
# 1 and 3: the libunwind channel registered each arena with _U_dyn_register.
# With JITUNWIND=libunwind it is the only channel, so nothing else helps.
. "$(dirname "$0")/lib.sh"
ldd "$TB/child-nongnu" | grep -q 'libunwind\.so\.8' || fail "child-nongnu is not linked with nongnu libunwind"
for env in all libunwind; do
	for action in unw unwstep; do
		for d in 1 3; do
			JITUNWIND=$env limit 30 "$TB/child-nongnu" $action --depth $d > out 2>&1 ||
				{ cat out; fail "JITUNWIND=$env $action --depth $d"; }
			cat out
		done
	done
done
pass "libunwind's unw_backtrace and unw_step walk through fp, cfi and region JIT frames"
