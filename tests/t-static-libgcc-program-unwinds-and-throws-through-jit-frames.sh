# SPDX-License-Identifier: MIT
# A program linked with -static-libgcc -static-libstdc++ and the archive has
# two unwinders: its own copy of libgcc's, which its C++ exceptions use, and
# the libgcc_s.so.1 glibc's backtrace() loads.  The library registers with
# both.
# glibc backtrace(), _Unwind_Backtrace and a C++ exception thrown in
# the innermost frame and caught in main all get through the JIT frames (the
# child checks its own stack against the frames it built).
. "$(dirname "$0")/lib.sh"
need_file "$TB/child-static-libgcc" "make tests builds it"
for action in backtrace unwind throw; do
	limit 60 "$TB/child-static-libgcc" $action > out 2>&1 || { cat out; fail "child-static-libgcc $action"; }
	tail -2 out
done
pass "a -static-libgcc program's backtrace(), _Unwind_Backtrace and C++ exceptions see the JIT frames"
