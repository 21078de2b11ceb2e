# SPDX-License-Identifier: MIT
# LLVM libunwind (linked ahead of libgcc_s, so its _Unwind_Backtrace is the
# one called) sees every frame: the channel registered the arena's section
# with __unw_add_dynamic_eh_frame_section.
. "$(dirname "$0")/lib.sh"
need_file /usr/lib/llvm-14/lib/libunwind.so.1 "package libunwind-14"
nm -D "$TB/child-llvm" | grep -q ' U _Unwind_Backtrace' || fail "child-llvm does not import _Unwind_Backtrace"
ldd "$TB/child-llvm" | grep -q 'libunwind.so.1' || fail "child-llvm is not linked with LLVM libunwind"
limit 30 "$TB/child-llvm" unwind --depth 2 > out || { cat out; fail "LLVM _Unwind_Backtrace"; }
cat out
pass "LLVM libunwind walks through JIT frames"
