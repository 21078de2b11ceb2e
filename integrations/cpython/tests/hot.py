# hot.py - the CPython tests' workload: a hot loop whose trace inlines a
# Python function (small) that calls C (os.getpid), where the debuggers
# stop.  The tests read the lines marked "# mark: NAME" (lib.sh mark);
# "enter" is the loop's last line, where its backward jump is: the trace
# starts at that jump, and is named after its line.
#
#   hot.py [N]     warm hot's loop up (its trace is built after 16
#                  iterations), call os.getppid once (where a debugger
#                  sets its breakpoints), then run hot(N) and print its
#                  result (default 1000)
#
# SPDX-License-Identifier: MIT
import os
import sys


def small(x):
    return os.getpid() + x  # mark: getpid


def hot(n):
    total = 0
    x = 1
    for i in range(n):
        total += small(i)  # mark: call
        total -= x  # mark: enter
    return total


if __name__ == "__main__":
    hot(1000)
    os.getppid()
    print(hot(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
