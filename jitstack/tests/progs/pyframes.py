# pyframes.py - a Python program whose two threads stop at known lines,
# for the Python frame reader's tests (t-python-*.sh).
# SPDX-License-Identifier: MIT
#
# Every line a frame stops at ends with "#@TAG"; pyframes.expect lists
# each thread's frames by those tags.  The main thread goes through a C
# function calling back into Python (sorted with a key, a lambda) and a
# recursion DEPTH deep; the other, started by _thread (so that no frame of
# threading.py lies under it), calls a method from a generator.  Both
# print "parked NATIVE-TID ROLE" and sleep at the same line.
#   python3 pyframes.py [DEPTH]
import _thread
import os
import sys
import threading
import time

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 3
both = threading.Barrier(2)


def park(role):
    both.wait()
    # one write(2), so that the two threads' lines never mix
    os.write(1, b"parked %d %s\n" % (threading.get_native_id(), role.encode()))
    time.sleep(1000)  #@park


def deep(n):
    if n:
        return deep(n - 1)  #@deep-call
    return park("main")  #@deep-park


class Box:
    def meth(self):
        return park("gen")  #@meth


def produce(box):
    yield box.meth()  #@produce


def worker():
    for _ in produce(Box()):  #@worker
        pass


def main():
    _thread.start_new_thread(worker, ())
    return sorted([1], key=lambda x: deep(DEPTH))  #@main-sorted


main()  #@module-main
