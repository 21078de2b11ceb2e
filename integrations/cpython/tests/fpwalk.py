# fpwalk.py - hot.py's loop calling the _fpwalk extension (fpwalk.c):
# small() calls _fpwalk.walk(), which follows the frame-pointer chain from
# inside the trace of hot's loop (the trace inlines small()).  The lines
# marked "# mark: NAME" are read by the tests (lib.sh mark), "enter" as in
# hot.py.
#
#   fpwalk.py [N]  warm hot's loop up (its trace is built after 16
#                  iterations), print "pid PID", run hot(N) (default 200)
#                  and print the frame-pointer walk of its last call to
#                  walk(), one return address a line, "0xADDR FILE SYMBOL"
#                  ("-" for what dladdr cannot name); then wait a second
#                  (a tracer names the stacks it took while the process
#                  lives)
#
# SPDX-License-Identifier: MIT
import os
import sys
import time

import _fpwalk


def small(x):
    return _fpwalk.walk()  # mark: walk


def hot(n):
    last, count = None, 0
    for i in range(n):
        last = small(i)  # mark: call
        count += 1  # mark: enter
    return last


if __name__ == "__main__":
    hot(100)
    print("pid", os.getpid())
    for addr, file, sym in hot(int(sys.argv[1]) if len(sys.argv) > 1 else 200):
        print(f"{addr:#x} {file or '-'} {sym or '-'}")
    sys.stdout.flush()
    time.sleep(1)
