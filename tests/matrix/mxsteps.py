"""mxsteps.py - every instruction: single-step through one JIT function and
judge the stack libdwfl and libunwind-ptrace report at each position.

tests/matrix/step.tj stops for the tracer (mx-step-*) once its code is
published; the tracer steps tj:leaf from its first instruction through its
body, its native call (probe(0): tj_rt_host -> h_probe) and its return (the
shim's epilogue), unwinding at every instruction.

The expected stack at each position is built from the workload's expect
file (written when it stopped: the frames from tj:main down to main) and
where the pc is:
  in tj:leaf         tj:leaf, [shim], tj:main ...
  in its trampolines tj:leaf (the trampoline), tj:leaf (its call site), ...
  in tj_rt_host      tj_rt_host, tj:leaf, [shim], tj:main ...
  in h_probe         h_probe, tj_rt_host, tj:leaf, ...
  in tj_shim_call    tj_shim_call, tj:main ...  (tj:leaf has returned)
"""
import re

import mxjudge as J
from mxmethods import COLUMNS, need_file

UNWINDERS = [  # (id, label, tool, flags)
    ("dwfl-jit", "libdwfl + GDB JIT images", "mx-step-dwfl", ["--jit"]),
    ("unw-ptrace-jit", "libunwind-ptrace + GDB JIT images", "mx-step-unw-ptrace", ["--jit"]),
    ("dwfl", "libdwfl as shipped", "mx-step-dwfl", []),
    ("unw-ptrace", "libunwind-ptrace as shipped", "mx-step-unw-ptrace", []),
]
# where 100 % is required: the unwinders given the JIT code's CFI, in the
# modes whose CFI is exact at every instruction
REQUIRED = {("dwfl-jit", "nofp-exact"), ("dwfl-jit", "fp-exact"),
            ("unw-ptrace-jit", "nofp-exact"), ("unw-ptrace-jit", "fp-exact")}
STEP_COLUMNS = [c for c in COLUMNS if c.workload == "probe"]


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


def run_one(ctx, col, unwinder, cell):
    uid, label, tool, flags = unwinder
    path = ctx.tool(tool)
    need_file(path, "make matrix-tools")
    exe = ctx.tinyjit["plain"]
    expect_path = cell.path("expect")
    env = cell.env({"TJ_PROBE_EXPECT": expect_path})
    cmd = [path] + flags + ["--expect", expect_path, "--func", "tj:leaf", "--", exe] + col.tj_args + \
        [ctx.step_tj, "9"]
    rc, out = cell.run(cmd, env=env, timeout=120, name="mx-step")
    m = re.search(r"pid (\d+)", out)
    if m:
        cell.pids.add(int(m.group(1)))
    if rc != 0:
        raise RuntimeError("mx-step failed (exit %d): %s" % (rc, out.strip().splitlines()[-1:]))
    expect = J.load_probe_expect(expect_path, exe)
    names_jit = bool(flags) and col.publishes
    res = {"total": 0, "good": 0, "jit_total": 0, "jit_good": 0, "unmodelled": 0, "first_bad": None}
    lo, hi, _ = expect.blobs["tj:leaf"]
    for pc, frames in parse_positions(out):
        want = expected_at(pc, expect)
        if want is None:  # counted as wrong: the model must know every position
            res["unmodelled"] += 1
            res["total"] += 1
            res["first_bad"] = res["first_bad"] or "pc %#x (%s): not a position the model knows" % (
                pc, expect.function_at(pc))
            continue
        ok, why = J.judge(frames, J.Expect(want, expect.blobs, expect.exe, expect.base),
                          names_jit=names_jit, first_only=True)
        in_jit = lo <= pc < hi
        res["total"] += 1
        res["jit_total"] += in_jit
        res["good"] += ok
        res["jit_good"] += ok and in_jit
        if not ok and not res["first_bad"]:
            where = "tj:leaf+%#x" % (pc - lo) if in_jit else expect.function_at(pc)
            res["first_bad"] = "at %s: %s" % (where, why)
    return res
