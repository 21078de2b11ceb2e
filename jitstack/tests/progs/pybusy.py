# pybusy.py - a Python program whose main thread never rests: it recurses
# DEPTH deep, spins SPIN times in the innermost call (its chain then stays,
# only the innermost frame moves), and returns, again and again, while the
# Python frame reader reads it without stopping it
# (t-python-frames-of-a-running-thread-*.sh).  Without the spin its chain
# changes every few microseconds, and a reader 100 times slower sees it
# whole only while the thread waits for a core.
# The lines a frame can be at end with "#@TAG".
#   python3 pybusy.py [DEPTH [SPIN]]
# SPDX-License-Identifier: MIT
import os
import sys

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 12
SPIN = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def down(n):  #@down-def
    if n:  #@down-test
        return down(n - 1)  #@down-call
    for _ in range(SPIN):  #@down-spin
        pass  #@down-spin-body
    return n  #@down-bottom


os.write(1, b"ready\n")
while True:  #@loop-while
    down(DEPTH)  #@loop
