# SPDX-License-Identifier: MIT
"""mxsteps.py - every instruction: single-step through one JIT function and
judge the stack libdwfl, libunwind-ptrace, gdb and lldb report at each
position.

tests/matrix/step.tj stops for the tracer (mx-step-*, or gdb and lldb
driven by mxstep_gdb.py and mxstep_lldb.py) once its code is published; the
tracer steps tj:leaf from its first instruction through its body, its
native call (probe(0): tj_rt_host -> h_probe) and its return (the shim's
epilogue), unwinding at every instruction (the debuggers: `bt`).

The expected stack at each position is built from the workload's expect
file (written when it stopped: the frames from tj:main down to main) and
where the pc is:
  in tj:leaf         tj:leaf, [shim], tj:main ...
  in its trampolines tj:leaf (the trampoline), tj:leaf (its call site), ...
  in tj_rt_host      tj_rt_host, tj:leaf, [shim], tj:main ...
  in h_probe         h_probe, tj_rt_host, tj:leaf, ...
  in tj_shim_call    tj_shim_call, tj:main ...  (tj:leaf has returned)
"""
import os
import re

import mxaarch64
import mxjudge as J
from mxmethods import COLUMNS, need_cmd, need_file
from mxrun import NotApplicable

UNWINDERS = [  # (id, label, tool, flags); the quick form runs the first two
    ("dwfl-jit", "libdwfl + GDB JIT images", "mx-step-dwfl", ["--jit"]),
    ("unw-ptrace-jit", "libunwind-ptrace + GDB JIT images", "mx-step-unw-ptrace", ["--jit"]),
    ("dwfl", "libdwfl as shipped", "mx-step-dwfl", []),
    ("unw-ptrace", "libunwind-ptrace as shipped", "mx-step-unw-ptrace", []),
    ("gdb", "gdb (stepi, bt)", "gdb", []),
    ("lldb", "lldb (thread step-inst, bt)", "lldb", []),
]
# where 100 % is required: the unwinders given the JIT code's CFI (the
# debuggers read it from the GDB JIT images), in the modes whose CFI is
# exact at every instruction
REQUIRED = {(u, c) for u in ("dwfl-jit", "unw-ptrace-jit", "gdb", "lldb")
            for c in ("nofp-exact", "fp-exact")}
# AArch64 under qemu-user: gdb-multiarch through qemu's gdb stub is the one
# tracer that reaches the guest (mxaarch64.py)
REQUIRED |= {("gdb", c) for c in ("a64-nofp-exact", "a64-fp-exact")}
DEBUGGERS = {"gdb", "lldb"}
# Not the W^X columns: the step is a breakpoint written into the code with
# ptrace, and the kernel forces such a write only into a private (copy-on-
# write) mapping; into the shared RX view it fails (EIO; so does a write
# through /proc/PID/mem: docs/API.md, W^X).  Their code is fp-exact's.
# The inline columns neither: step.tj's tj:leaf, which the tracer breaks at
# by its blob, is inlined into its caller there (its code has no blob of its
# own to stop at); their stencils are exact CFI's, which fp-exact and
# nofp-exact step.
STEP_COLUMNS = [c for c in COLUMNS if c.workload == "probe" and not c.inline
                and not any(a.startswith("--wx=") for a in c.tj_args)]
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_positions(text):
    positions, cur = [], None
    for line in text.splitlines():
        if line.startswith("@ "):
            cur = (int(line[2:], 16), [])
            positions.append(cur)
        elif line.startswith("0x") and cur:
            p = line.split(None, 1)
            name = p[1].strip() if len(p) > 1 else None
            cur[1].append((int(p[0], 16), None if name == "??" else name))
    return positions


def expected_at(pc, expect):
    """The expected frames at pc (see the module's comment), or None where
    the pc is somewhere this model does not know."""
    lo, hi, tramp = expect.blobs["tj:leaf"]
    names = [s.name for s in expect.frames]
    tail = expect.frames[names.index("tj:main"):]
    leaf, shim = expect.blob("tj:leaf"), expect.c("tj_shim_call", opt=True)
    if lo <= pc < hi:
        prefix = [leaf, leaf] if pc >= tramp else [leaf]
        return prefix + [shim] + tail
    fn = expect.function_at(pc)
    if fn == "tj_shim_call":
        return [expect.c("tj_shim_call")] + tail
    if fn == "tj_rt_host":
        return [expect.c("tj_rt_host"), leaf, shim] + tail
    if fn == "h_probe":
        return [expect.c("h_probe"), expect.c("tj_rt_host"), leaf, shim] + tail
    return None


def parse_debugger_positions(text, parse):
    """mxstep_gdb.py / mxstep_lldb.py: "@ 0xPC", then `bt` as the debugger
    prints it (parsed by `parse`); a frame #0 printed without its address
    (gdb, at the start of a line) is at the position's pc."""
    positions = []
    for block in re.split(r"^@ ", text, flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        pc = int(head, 16)
        frames = parse(rest)
        if frames and frames[0][0] is None:
            frames[0] = (pc, frames[0][1])
        positions.append((pc, frames))
    return positions


def step_command(ctx, tool, flags, expect_path, program):
    """The tracer's command line, and how to read its output."""
    if tool == "gdb":
        need_cmd("gdb", "gdb")
        return (["gdb", "-nx", "-batch", "-x", os.path.join(HERE, "mxstep_gdb.py"), "--args"] + program,
                lambda out: parse_debugger_positions(out, J.parse_gdb))
    if tool == "lldb":
        need_cmd("lldb-16", "lldb-16")
        return (["lldb-16", "--no-lldbinit", "-b", "-o", "command script import " +
                 os.path.join(HERE, "mxstep_lldb.py"), "--"] + program,
                lambda out: parse_debugger_positions(out, J.parse_lldb))
    path = ctx.tool(tool)
    need_file(path, "make matrix-tools")
    return [path] + flags + ["--expect", expect_path, "--func", "tj:leaf", "--"] + program, parse_positions


def run_one(ctx, col, unwinder, cell):
    uid, label, tool, flags = unwinder
    expect_path = cell.path("expect")
    if col.arch == "aarch64":
        if tool not in DEBUGGERS:
            raise NotApplicable("AArch64 under qemu-user: %s cannot trace the guest (only the "
                                "debuggers, through qemu's gdb stub, step it here)" % label)
        script = os.path.join(HERE, "mxstep_%s.py" % tool)
        rc, out, exe = mxaarch64.debugger_steps(ctx, col, cell, tool, script)
        parse = lambda out: parse_debugger_positions(  # noqa: E731
            out, J.parse_gdb if tool == "gdb" else J.parse_lldb)
    else:
        exe = ctx.tinyjit["plain"]
        env = cell.env({"TJ_PROBE_EXPECT": expect_path, "MX_EXPECT": expect_path, "MX_FUNC": "tj:leaf"})
        cmd, parse = step_command(ctx, tool, flags, expect_path, [exe] + col.tj_args + [ctx.step_tj, "9"])
        rc, out = cell.run(cmd, env=env, timeout=120, name="mx-step")
    m = re.search(r"pid (\d+)", out)
    if m:
        cell.pids.add(int(m.group(1)))
    if rc != 0 or "# mx-step: %s: " % tool in out:
        raise RuntimeError("mx-step failed (exit %d): %s" % (rc, out.strip().splitlines()[-1:]))
    expect = J.load_probe_expect(expect_path, exe)
    debugger = tool in DEBUGGERS
    names_jit = (bool(flags) or debugger) and col.publishes
    res = {"total": 0, "good": 0, "jit_total": 0, "jit_good": 0, "unmodelled": 0, "first_bad": None}
    lo, hi, _ = expect.blobs["tj:leaf"]
    for pc, frames in parse(out):
        want = expected_at(pc, expect)
        if want is None:  # counted as wrong: the model must know every position
            res["unmodelled"] += 1
            res["total"] += 1
            res["first_bad"] = res["first_bad"] or "pc %#x (%s): not a position the model knows" % (
                pc, expect.function_at(pc))
            continue
        ok, why = J.judge(frames, J.Expect(want, expect.blobs, expect.exe, expect.base),
                          names_jit=names_jit, first_only=True, inline_dups=debugger)
        in_jit = lo <= pc < hi
        res["total"] += 1
        res["jit_total"] += in_jit
        res["good"] += ok
        res["jit_good"] += ok and in_jit
        if not ok and not res["first_bad"]:
            where = "tj:leaf+%#x" % (pc - lo) if in_jit else expect.function_at(pc)
            res["first_bad"] = "at %s: %s" % (where, why)
    return res
