# cpyprobe.py - the unwind matrix's CPython workload
# (tests/matrix/mxcpython.py): hot's loop calls the C extension _cpyprobe
# (cpyprobe.c) directly from its trace; at the CPYP_AT-th iteration the
# probe writes its expect file and does CPYP_MODE (unwinds itself, waits
# for a tool, aborts for a core, or spins for a sampler).  The judge reads
# the line marked "# mark: enter": the loop's backward jump, where the
# trace starts, which names the executor "py:hot (cpyprobe.py:ENTER)".
#
#   cpyprobe.py [N]   warm hot's loop up (its trace is built after 16
#                     iterations), then run hot(N) (default 2000) and
#                     print its result
#
# SPDX-License-Identifier: MIT
import sys

import _cpyprobe

probe = _cpyprobe.probe


def hot(n):
    total = 0
    for i in range(n):
        total += probe(i)  # mark: call
        total -= 1  # mark: enter
    return total


if __name__ == "__main__":
    _cpyprobe.setup(hot.__code__)
    hot(100)
    print(hot(int(sys.argv[1]) if len(sys.argv) > 1 else 2000), flush=True)
