# SPDX-License-Identifier: MIT
"""mxstep_lldb.py - every instruction in lldb: imported by lldb (lldb-16
--no-lldbinit -b -o 'command script import mxstep_lldb.py' -- tinyjit ...
step.tj 9), it does the whole run when loaded.

Launches the target to its SIGTRAP (probe mode 9: the expect file
MX_EXPECT is written and its code published), breaks on the first
instruction of the JIT function MX_FUNC and single-steps (`thread
step-inst`) from there through its body, its native call and its return
until the pc is back in another JIT function.  At every position it prints
"@ 0xPC" and then what `bt` prints; the harness (mxsteps.py) parses and
judges each.  With MX_REMOTE=HOST:PORT it connects to a gdb stub instead
of launching the program (the AArch64 columns: qemu-user, mxaarch64.py).
"""
import os
import sys

import lldb

# the expect file is read as the harness reads it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxjudge import read_blobs  # noqa: E402

MAX_STEPS = 20000


def command(debugger, thread, cmd):
    """The command's output, as typed with `thread` selected (the
    interpreter's own context is the import's, which has no process)."""
    res = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand(cmd, lldb.SBExecutionContext(thread), res, False)
    if not res.Succeeded():
        raise RuntimeError("%s: %s" % (cmd, res.GetError().strip()))
    return res.GetOutput()


def run(debugger):
    debugger.SetAsync(False)
    target = debugger.GetSelectedTarget()
    error = lldb.SBError()
    remote = os.environ.get("MX_REMOTE")
    if remote:  # qemu-user's gdb stub: the guest waits at its first instruction
        process = target.ConnectRemote(debugger.GetListener(), "connect://" + remote, "gdb-remote",
                                       error)
        if error.Success():
            error = process.Continue()
    else:
        info = target.GetLaunchInfo()
        info.SetEnvironmentEntries(["%s=%s" % kv for kv in os.environ.items()], True)
        process = target.Launch(info, error)
    if not error.Success():
        raise RuntimeError("launch: %s" % error.GetCString())
    print("# mx-step: lldb, pid %d" % process.GetProcessID())
    thread = process.GetSelectedThread()
    if thread.GetStopReason() != lldb.eStopReasonSignal:  # the program's SIGTRAP
        raise RuntimeError("the program did not stop at its SIGTRAP")
    code = {n: b[:2] for n, b in read_blobs(os.environ["MX_EXPECT"]).items()}
    lo, hi = code[os.environ["MX_FUNC"]]
    bp = target.BreakpointCreateByAddress(lo)
    process.Continue()
    thread = process.GetSelectedThread()
    if thread.GetFrameAtIndex(0).GetPC() != lo:
        raise RuntimeError("the breakpoint at %#x was not hit" % lo)
    target.BreakpointDelete(bp.GetID())
    step = 0
    for step in range(MAX_STEPS):
        here = thread.GetFrameAtIndex(0).GetPC()
        elsewhere = any(a <= here < b for a, b in code.values()) and not lo <= here < hi
        if step > 0 and elsewhere:
            break  # back in the caller's code
        print("@ %#x" % here)
        print(command(debugger, thread, "bt"), end="")
        thread.StepInstruction(False)
    print("# %d positions" % step)
    process.Kill()


def __lldb_init_module(debugger, internal_dict):
    try:
        run(debugger)
    except (RuntimeError, KeyError, OSError) as e:
        print("# mx-step: lldb: %s" % e, flush=True)
        os._exit(1)
