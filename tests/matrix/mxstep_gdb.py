# SPDX-License-Identifier: MIT
"""mxstep_gdb.py - every instruction in gdb: run as gdb's script (gdb -nx
-batch -x mxstep_gdb.py --args tinyjit ... step.tj 9).  With MX_REMOTE=
HOST:PORT it connects to a gdb stub instead of running the program (the
AArch64 columns: gdb-multiarch and qemu-user, mxaarch64.py).

Runs the program to its SIGTRAP (probe mode 9: the expect file MX_EXPECT
is written and its code published), breaks on the first instruction of
the JIT function MX_FUNC and single-steps (`stepi`) from there through
its body, its native call and its return until the pc is back in another
JIT function.  At every position it prints "@ 0xPC" and then what `bt`
prints; the harness (mxsteps.py) parses and judges each.
"""
import os
import sys

import gdb

# the expect file is read as the harness reads it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxjudge import read_blobs  # noqa: E402

MAX_STEPS = 20000


def pc():
    return int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF


def main():
    for setting in ("pagination off", "confirm off", "width 0", "print frame-arguments none"):
        gdb.execute("set " + setting)
    remote = os.environ.get("MX_REMOTE")
    if remote:  # qemu-user's gdb stub (mxaarch64.py): the guest waits at its first instruction
        gdb.execute("target remote " + remote, to_string=True)
        gdb.execute("continue", to_string=True)
    else:
        gdb.execute("run", to_string=True)  # stops at the program's SIGTRAP
    print("# mx-step: gdb, pid %d" % gdb.selected_inferior().pid)
    code = {n: b[:2] for n, b in read_blobs(os.environ["MX_EXPECT"]).items()}
    lo, hi = code[os.environ["MX_FUNC"]]
    gdb.execute("tbreak *%#x" % lo, to_string=True)
    gdb.execute("continue", to_string=True)
    if pc() != lo:
        raise gdb.GdbError("the breakpoint at %#x was not hit (pc %#x)" % (lo, pc()))
    for step in range(MAX_STEPS):
        here = pc()
        elsewhere = any(a <= here < b for a, b in code.values()) and not lo <= here < hi
        if step > 0 and elsewhere:
            break  # back in the caller's code
        print("@ %#x" % here)
        print(gdb.execute("bt", to_string=True), end="")
        gdb.execute("stepi", to_string=True)
    print("# %d positions" % step)
    gdb.execute("kill", to_string=True)


try:
    main()
except (gdb.error, KeyError, OSError) as e:
    print("# mx-step: gdb: %s" % e)
    gdb.execute("quit 1")
