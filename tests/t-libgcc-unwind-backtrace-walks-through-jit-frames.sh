# SPDX-License-Identifier: MIT
# libgcc's _Unwind_Backtrace sees every frame through the JIT code.
. "$(dirname "$0")/lib.sh"
limit 30 "$TB/child" unwind --depth 2 > out || { cat out; fail "_Unwind_Backtrace"; }
cat out
pass "libgcc _Unwind_Backtrace walks through JIT frames"
