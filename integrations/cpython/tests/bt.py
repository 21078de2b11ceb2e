# bt.py - glibc backtrace() called, through ctypes, from the trace of a hot
# loop; then the last stack it took, as backtrace_symbols_fd writes it
# (one frame a line, on stdout), after a line "depth N".
#
#   bt.py [LIB]    LIB: a shared library whose ubt_walk(pcs, max) takes
#                  the stack instead (ubt.c: _Unwind_Backtrace)
#
# SPDX-License-Identifier: MIT
import ctypes
import sys

libc = ctypes.CDLL(None)
backtrace = ctypes.CDLL(sys.argv[1]).ubt_walk if len(sys.argv) > 1 else libc.backtrace
backtrace.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
backtrace.restype = ctypes.c_int
frames = (ctypes.c_void_p * 256)()
depth = 0


def probe(x):
    global depth
    depth = backtrace(frames, 256)  # mark: backtrace
    return x


def hot(n):
    total = 0
    for i in range(n):
        total += probe(i)
    return total


if __name__ == "__main__":
    hot(1000)
    print("depth", depth)
    sys.stdout.flush()
    libc.backtrace_symbols_fd(frames, depth, 1)
