# A C library's _Unwind_Backtrace (ubt.c, built here with the system's
# compiler, loaded by ctypes), called from the trace of bt.py's hot loop,
# walks through the executor (libgcc reads its frames from the unwinder
# channel) to Py_BytesMain (python's main tail-calls it) and
# __libc_start_main; glibc names the frames (backtrace_symbols_fd).
# Baseline, which must fail: the stock JIT (libgcc finds no FDE for the
# executor and the walk stops there).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_cmd cc
cc -O2 -g -shared -fPIC -o ubt.so "$CYT/ubt.c" || fail "cannot build ubt.c"

run_bt() { # PYTHON
	limit 60 "$1" bt.py "$PWD/ubt.so" > bt.out 2>&1
	echo "exit $?" >> bt.out
}
# reaches: the walk left ubt_walk, got past the executor to python's main
# and libc's start.
reaches() {
	grep -q '^exit 0$' bt.out && grep -q '(ubt_walk+0x' bt.out && grep -q '(Py_BytesMain+0x' bt.out &&
		grep -q '(__libc_start_main+0x' bt.out
}
run_bt "$PYRUN"
reaches || { cat bt.out; fail "_Unwind_Backtrace from the trace does not reach main and __libc_start_main"; }
! grep 'python: jitunwind' bt.out || fail "an executor was not published"
cat bt.out
run_bt "$PY_STOCK"
if reaches; then
	cat bt.out
	fail "_Unwind_Backtrace reaches main on the stock JIT too, so the check proves nothing"
fi
echo "stock JIT: FAIL as it must ($(head -1 bt.out), last frame: $(grep -v '^exit' bt.out | tail -1))"
pass "_Unwind_Backtrace from a C library called in a trace reaches main and __libc_start_main; on the stock JIT it does not"
