# spin.py - a hot loop that spends its time in its own trace: float
# arithmetic and comparisons, which the JIT's stencils do inline, no call
# out of the loop.  For the profilers: spin's executor must be the
# hottest function.  Prints "ready" once the loop is warm (traced), then
# spins for SECS seconds.  The line marked "# mark: NAME" is read by the
# tests (lib.sh mark); "enter" as in hot.py.
#
#   spin.py [SECS]   default 3
#
# SPDX-License-Identifier: MIT
import sys
import time


def spin(n):
    x = 0.5
    y = 0.0
    for i in range(n):
        y = y * 0.5 + x
        if y > 2.0:
            y = 0.0
        x = x + 1.0  # mark: enter
    return y


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    spin(1000)
    print("ready", flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        spin(200000)
