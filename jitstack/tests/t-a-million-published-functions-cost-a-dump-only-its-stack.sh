# SPDX-License-Identifier: MIT
# A process that published a million functions through the library
# (bench/scale/scalejit: 15,625 GDB images of 64) and sleeps under one of
# them: jitstack -p names that JIT frame and reaches main, within 96 MiB
# of address space (ulimit -v), copying only the image that holds the
# frame (--stats).  Reading every image took 283 MB: that dump fails here.
. "$(dirname "$0")/lib.sh"
SJ=$BUILD/bench/scalejit
need_file "$SJ" "make bench-scale-build"
start_child sj.out "$SJ" gdb 1000000
bounded limit 60 "$JS" -p "$CHILD_PID" --stats > out 2> err
rc=$?
[ $rc -eq 0 ] || { cat out err; fail "jitstack exited $rc within 96 MiB"; }
grep -Eq '^#[0-9]+ +0x[0-9a-f]+ scale_fn_500000\+0x[0-9a-f]+ \(\[jit 0x' out ||
	{ cat out err; fail "the JIT frame is not named scale_fn_500000"; }
grep -Eq ' park\+0x[0-9a-f]+ \(scalejit\)' out && grep -Eq ' main\+0x[0-9a-f]+ \(scalejit\)' out ||
	{ cat out; fail "the stack does not reach park and main below the JIT frame"; }
copied=$(sed -n 's/.*; \([0-9]*\) images copied.*/\1/p' err)
[ -n "$copied" ] && [ "$copied" -le 2 ] || { cat err; fail "$copied images copied for a stack with one JIT frame"; }
note "$copied image copied of 15,625"
pass "scale_fn_500000 named, main reached, in 96 MiB"
