# pybusy.py - a Python program whose main thread never rests: it recurses
# DEPTH deep and back, again and again, while the Python frame reader
# reads it without stopping it (t-python-frames-of-a-running-thread-*.sh).
# The lines a frame can be at end with "#@TAG".
#   python3 pybusy.py [DEPTH]
# SPDX-License-Identifier: MIT
import os
import sys

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 12


def down(n):  #@down-def
    if n:  #@down-test
        return down(n - 1)  #@down-call
    return n  #@down-bottom


os.write(1, b"ready\n")
while True:  #@loop-while
    down(DEPTH)  #@loop
