# SPDX-License-Identifier: MIT
# A program linked with -static (the archive, libgcc_eh and glibc all in the
# executable) has one unwinder, its own copy of libgcc's; the library must
# register with it, not with a libgcc_s it loads and the program never asks.
# glibc backtrace(), _Unwind_Backtrace and a C++ exception thrown in
# the innermost frame and caught in main all get through the JIT frames (the
# child checks its own stack against the frames it built).
. "$(dirname "$0")/lib.sh"
need_file "$TB/child-static" "not built under SAN=1: AddressSanitizer has no static runtime"
for action in backtrace unwind throw; do
	limit 60 "$TB/child-static" $action > out 2>&1 || { cat out; fail "child-static $action"; }
	tail -2 out
done
pass "a -static program's backtrace(), _Unwind_Backtrace and C++ exceptions see the JIT frames"
