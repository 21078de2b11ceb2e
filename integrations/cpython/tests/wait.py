# wait.py - hot.py's loop with a C call that blocks: small() calls
# time.sleep(delay) on every iteration, delay 0 but for the last, when it
# is 60 s, so the process waits in C called from the trace of hot's loop,
# which inlined small() (for a debugger to attach to, or a core).  Prints
# "ready" as the loop starts; the lines marked "# mark: NAME" are read by
# the tests (lib.sh mark), "enter" as in hot.py.
#
#   wait.py [N]    N iterations (default 2000)
#
# SPDX-License-Identifier: MIT
import sys
import time


def small(x, delay):
    time.sleep(delay)  # mark: sleep
    return x


def hot(n, delays):
    total = 0
    for i in range(n):
        total += small(i, delays[i])  # mark: call
        total -= 1  # mark: enter
    return total


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    hot(100, [0.0] * 100)
    print("ready", flush=True)
    print(hot(n, [0.0] * (n - 1) + [60.0]))  # mark: main
