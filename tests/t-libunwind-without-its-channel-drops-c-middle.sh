# SPDX-License-Identifier: MIT
# The counter-check: with the libunwind channel off (JITUNWIND=unwinder, so
# only libgcc knows the JIT code) libunwind finds no unwind info for the JIT
# frames and falls back to the rbp chain, which skips c_middle: its caller
# jit:cfi keeps no frame pointer.  The frames it reports must be exactly what
# a frame-pointer walk sees, so the pass above is the channel's doing.
. "$(dirname "$0")/lib.sh"
for action in unw unwstep; do
	for d in 1 3; do
		JITUNWIND=unwinder limit 30 "$TB/child-nongnu" $action --depth $d > out 2>&1
		rc=$?
		cat out
		[ $rc = 1 ] || fail "$action --depth $d: expected the check to fail without the channel (exit $rc)"
		line=$(grep -E '^(unw_backtrace|unw_step):' out) || fail "$action: no frame line"
		case $line in *c_middle*) fail "$action --depth $d: c_middle was found without the channel" ;; esac
		case $line in *"c_mid2 jit:cfi jit:fp c_outer"*) ;;
		*) fail "$action --depth $d: expected the rbp chain to go from jit:cfi straight to jit:fp" ;; esac
		echo "$line" | cut -d: -f2- | tr ' ' '\n' | check_frames child.expect --fp ||
			fail "$action --depth $d: the frames are not the frame-pointer walk"
	done
done
pass "without its channel libunwind falls back to the rbp chain and drops c_middle"
