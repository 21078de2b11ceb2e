# SPDX-License-Identifier: MIT
"""mxluajit.py - the matrix's LuaJIT block: Debian's stock luajit (a JIT
no one here wrote) running the LuaJIT integration's workloads
(integrations/luajit/tests), without the jitunwind module and with it.

The workloads are the integration tests' own: probe.lua's hot loop, whose
trace calls C (ljprobe.c) that unwinds, waits for a tool or aborts for a
core; guest.lua, the same through a small Lua function the trace inlines;
spin.lua, two loops of known weight for the profilers.  What their stacks
hold comes from them alone:
  - ljprobe.c writes its own frames, the return address into the trace
    and where each object is loaded (its expect file);
  - tracelog.lua writes LuaJIT's own trace events (which trace lives where,
    and the line it starts at);
  - the scripts mark the lines a trace or an inlined function is named
    after (`--> trace: hot`, `--> guest: step`, `--> call: step`).
The stack is then: ljp_inner, ljp_probe, the trace (named
"lua:hot@probe.lua:LINE (trace N)" where the tool names JIT code),
lua_pcall, luajit's own unnamed functions (docall, pmain, lj_vm_cpcall: the
binary is stripped), lua_cpcall, main.  The C frames are placed by their
symbols in the loaded objects; the interpreter's between lua_pcall and
lua_cpcall are judged by address, as any frames in luajit's code.

Only the rows that have a way into a stock binary run (ROWS); the others
are listed with the reason in NOT_RUN.
"""
import os
import re
import shutil
import subprocess
import sys

import mxjudge as J
import mxmethods as M
from mxrun import SAMPLE_BOUND, NotApplicable, Skip, Timeout

HERE = os.path.dirname(os.path.abspath(__file__))
LJT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "integrations", "luajit", "tests")
sys.path.insert(0, LJT)
import ljjudge  # noqa: E402

LUAJIT = "luajit"
SPIN_SECS = 2    # of CPU time (os.clock): as many samples however loaded the machine
MIN_LEAVES = 50  # samples a profiler must take of spin.lua (bpftrace takes ~130 in its second)

COLUMNS = [
    M.Column("lj-none", "Debian's stock luajit 2.1.0-beta3, no module: nothing published", "luajit"),
    M.Column("lj-module", "luajit -l jitunwind, every channel (JITUNWIND=all)", "luajit",
             env={"JITUNWIND": "all"}, publishes=True),
    M.Column("lj-guest", "the same on guest.lua, whose trace inlines a Lua function: the module's "
             "guest frames (inline frames)", "luajit", env={"JITUNWIND": "all"}, publishes=True,
             inline=True),
]


# ---- the workloads ------------------------------------------------------------------

def missing(ctx):
    """Why the block cannot run here, or None."""
    if os.uname().machine != "x86_64":
        return "the LuaJIT module publishes traces on x86-64 only (integrations/luajit/README.md, Limits)"
    if not shutil.which(LUAJIT):
        return "luajit is not installed (Debian package luajit)"
    for name in ("jitunwind.so", "libljprobe.so"):
        path = os.path.join(ctx.build, "luajit", name)
        if not os.path.exists(path):
            return "%s is missing (make luajit)" % os.path.relpath(path)
    return None


def need_luajit(ctx):
    why = missing(ctx)
    if why:
        raise Skip(why)


def script_of(col, spin=False):
    return "spin.lua" if spin else "guest.lua" if col.inline else "probe.lua"


def workload(ctx, col, cell, mode, spin=False, secs=SPIN_SECS, env=None):
    """(command, environment) of luajit running the column's script, from
    the cell's directory (so that the chunk's name is the script's own),
    with the module where the column has it; LJP_MODE=mode."""
    need_luajit(ctx)
    for f in os.listdir(LJT):
        if f.endswith(".lua"):
            shutil.copy(os.path.join(LJT, f), cell.path(f))
    lj_b = os.path.join(ctx.build, "luajit")
    extra = dict(col.env, LUA_CPATH=os.path.join(lj_b, "?.so") + ";;",
                 LJP_LIB=os.path.join(lj_b, "libljprobe.so"), LJP_MODE=mode,
                 LJP_EXPECT=cell.path("expect"), LJP_WAIT=str(int(cell.limit(M.WAIT_SECS))))
    extra.update(env or {})
    cmd = [LUAJIT] + (["-l", "jitunwind"] if col.publishes else []) + [script_of(col, spin)]
    return cmd + ([M.secs(secs)] if spin else []), cell.env(extra)


def nm_functions(path):
    """{name: (value, size)} of path's defined functions, from its symbol
    table and its dynamic one (luajit is stripped: main and the lua_* API
    are in .dynsym)."""
    syms = {}
    for flags in (["-S"], ["-D", "-S"]):
        out = subprocess.run(["nm", "--defined-only"] + flags + [path], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] in "tTwWiI":
                syms.setdefault(re.split(r"@", p[3])[0], (int(p[0], 16), int(p[1], 16)))
    return syms


def code_range(path, base):
    """[lo, hi) of path's executable segment, loaded at base."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if p and p[0] == "LOAD" and "E" in p[6:-1]:
            lo = base + int(p[2], 16)
            return lo, lo + int(p[5], 16)
    raise RuntimeError("%s has no executable segment" % path)


def call_graph_expect(cell, col):
    """The Expect of the probe's stack (module docstring), from the files
    the workload wrote and its script's marks."""
    path, script = cell.path("expect"), cell.path(script_of(col))
    if not os.path.exists(path) or not os.path.exists(path + ".traces"):
        raise RuntimeError("the workload wrote no expect file (or no trace events)")
    modules = {}
    with open(path) as f:
        for line in f:
            p = line.split(None, 2)
            if len(p) == 3 and p[0] == "module":
                modules.setdefault(p[2].strip(), int(p[1], 16))
    exe = next((m for m in modules if os.path.basename(m) == LUAJIT), None)
    probe = next((m for m in modules if os.path.basename(m) == "libljprobe.so"), None)
    if not exe or not probe:
        raise RuntimeError("the expect file names no luajit or libljprobe.so: %s" % sorted(modules))
    try:
        trace, lo, hi = ljjudge.expected_trace(path, script)
    except SystemExit as e:  # ljjudge reports what it cannot find that way
        raise RuntimeError(str(e))

    def c(name, where):
        value, size = nm_functions(where)[name]
        base = modules[where]
        return J.Spec(name, base + value, base + value + max(size, 1), "c")
    code_lo, code_hi = code_range(exe, modules[exe])
    frames = [c("ljp_inner", probe), c("ljp_probe", probe), J.Spec(trace, lo, hi, "jit"),
              c("lua_pcall", exe), J.Spec("luajit's own code", code_lo, code_hi, "c", opt=True, many=True),
              c("lua_cpcall", exe), c("main", exe)]
    blobs = {trace_name(script, n, start): (tlo, thi, thi)
             for n, tlo, thi, start in ljjudge.traces(path)}
    e = J.Expect(frames, blobs, exe)
    e.guests = guests_of(script, trace) if col.inline else None
    return e


def trace_name(script, n, start):
    """A trace's name as the module gives it, from the script's marks;
    a trace starting at an unmarked line is known by its number only."""
    mark = ljjudge.markers(script).get(start)
    return "lua:%s@%s:%d (trace %d)" % (mark, os.path.basename(script), start, n) if mark else \
        "trace %d" % n


def mark_line(script, mark):
    with open(script) as f:
        for i, line in enumerate(f, 1):
            if "--> " + mark in line:
                return i
    raise RuntimeError("%s has no `--> %s` mark" % (script, mark))


def guests_of(script, trace):
    """guest.lua's guest frames, innermost first: step, inlined into the
    trace, at the line it is defined on (LuaJIT tells no line inside it),
    then the trace at the line of the call of step."""
    base = os.path.basename(script)
    step = mark_line(script, "guest: step")
    call = mark_line(script, "call: step")
    return [("lua:step@%s:%d" % (base, step), "%s:%d" % (base, step), True),
            (trace, "%s:%d" % (base, call), False)]


# ---- stacks -------------------------------------------------------------------------

def in_process(mode):
    """ljprobe.c unwinds itself (glibc backtrace(), libgcc's
    _Unwind_Backtrace) and prints "0xPC NAME" lines, NAME from dladdr,
    which knows no JIT code: the trace is judged by its address."""
    def run(ctx, col, cell):
        cmd, env = workload(ctx, col, cell, mode)
        rc, out = cell.run(cmd, env=env, workload=True, name="workload")
        note = "" if rc == 0 else "the workload exited %d" % rc
        return M.Outcome(call_graph_expect(cell, col), frames=J.parse_addr_name(out), note=note)
    return run


def live(make_cmd, parse, names=False, inline_dups=False, guests=None):
    """A tool attached to the workload waiting in ljp_inner."""
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        cmd, env = workload(ctx, col, cell, "wait")
        proc, pid = cell.start(cmd, r"ready (\d+)", env)
        try:
            rc, out = cell.run(cmd_of(pid, shutil.which(LUAJIT)), timeout=M.TOOL_TIMEOUT)
        finally:
            cell.stop(proc)
        expect = call_graph_expect(cell, col)
        return M.Outcome(expect, frames=parse(out), names_jit=names and col.publishes,
                         inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc,
                         guests=M.guests_of(col, expect, guests, out))
    return run


def core(make_cmd, parse, names=False, inline_dups=False, guests=None):
    """A tool on the core of the workload aborting in ljp_inner."""
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        cmd, env = workload(ctx, col, cell, "abort")
        core_file = cell.core(cmd, env)
        rc, out = cell.run(cmd_of(core_file, shutil.which(LUAJIT)), timeout=M.TOOL_TIMEOUT)
        expect = call_graph_expect(cell, col)
        return M.Outcome(expect, frames=parse(out), names_jit=names and col.publishes,
                         inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc,
                         guests=M.guests_of(col, expect, guests, out))
    return run


# ---- profilers: samples in trace code -------------------------------------------------

class Leaves:
    """What a profiler of spin.lua must show: the samples taken in trace
    code named by their trace.  hot and cool: the names of the traces that
    start at each loop's marked line (tracelog.lua's record)."""

    def __init__(self, hot, cool):
        self.hot, self.cool = set(hot), set(cool)


def spin_expect(cell):
    path, script = cell.path("expect"), cell.path("spin.lua")
    if not os.path.exists(path + ".traces"):
        raise RuntimeError("the workload wrote no trace events")
    lines = {mark: mark_line(script, "trace: " + mark) for mark in ("hot", "cool")}
    names = {mark: [trace_name(script, n, start) for n, _, _, start in ljjudge.traces(path)
                    if start == line] for mark, line in lines.items()}
    if not names["hot"] or not names["cool"]:
        raise RuntimeError("LuaJIT compiled no trace of hot's or cool's loop: %s" % names)
    return Leaves(names["hot"], names["cool"])


def judge_leaves(samples, want):
    """(ok, why): of the samples' innermost frames, at least half must be
    named by hot's trace (hot's loop does ten times cool's work), and hot's
    three times cool's (the spin.lua test's measure)."""
    names = [s[0][1] if s else None for s in samples]
    hot = sum(n in want.hot for n in names)
    cool = sum(n in want.cool for n in names)
    why = "%d of %d samples in hot's trace (%s), %d in cool's" % (
        hot, len(names), ", ".join(sorted(want.hot)), cool)
    if len(names) < MIN_LEAVES:
        return False, "%d samples, but %d are required" % (len(names), MIN_LEAVES)
    if 2 * hot < len(names) or hot <= 3 * cool:
        other = [n for n in names if n not in want.hot | want.cool]
        common = max(set(other), key=other.count) if other else None
        need = max((len(names) + 1) // 2, 3 * cool + 1)
        return False, why + ", but %d in hot's are required (half of all, and more than three times " \
            "cool's); most other samples: %s" % (need, common or "?")
    return True, why


def outcome_of_leaves(cell, samples, note=""):
    ok, why = judge_leaves(samples, spin_expect(cell))
    return M.Outcome(None, verdict=ok, note=why + (" (%s)" % note if note else ""))


def spinning(cell, take):
    """spin.lua's samples, in rounds until MIN_LEAVES (or the bound):
    take(seconds of spin.lua's CPU time) returns them."""
    return cell.sample(take, lambda s: (len(s), len(s), "of spin.lua"), MIN_LEAVES, SPIN_SECS)


def perf_fp(ctx, col, cell):
    M.need_cmd("perf", "linux-perf")

    def take(secs):
        cmd, env = workload(ctx, col, cell, "spin", spin=True, secs=secs)
        pid = M.perf_record(cell, ["-g", "-F", "999"], cmd, env)
        return M.perf_samples(cell, cell.path("perf.data"), pid)
    return outcome_of_leaves(cell, spinning(cell, take))


def perf_dwarf(ctx, col, cell):
    M.need_cmd("perf", "linux-perf")

    def take(secs):
        cmd, env = workload(ctx, col, cell, "spin", spin=True, secs=secs)
        pid = M.perf_record(cell, ["-k", "1", "--call-graph", "dwarf,16384", "-F", "499"], cmd, env)
        return M.perf_inject_samples(cell, pid)
    return outcome_of_leaves(cell, spinning(cell, take))


def bpftrace(ctx, col, cell):
    M.need_cmd("bpftrace", "bpftrace")
    cmd, env = workload(ctx, col, cell, "spin", spin=True, secs=cell.limit(M.LONG_SPIN))
    proc, pid = cell.start(cmd, r"(?m)^spinning$", env)
    prog = M.bpftrace_prog(pid, cell, 2 * MIN_LEAVES)
    try:
        rc, out = cell.run(["bpftrace", "-e", prog], timeout=M.TOOL_TIMEOUT, name="bpftrace")
    finally:
        cell.stop(proc)
    if rc != 0 and "Attaching" not in out:
        raise Skip("bpftrace cannot attach here (exit %d): %s" % (rc, out.strip().splitlines()[-1:]))
    samples = J.parse_bpftrace(out)
    if rc == 0 and len(samples) < MIN_LEAVES:  # it ran to its bound
        raise Timeout("bpftrace took %d samples of spin.lua in its %s, but %d are required" % (
            len(samples), cell.scaled(SAMPLE_BOUND), MIN_LEAVES))
    return outcome_of_leaves(cell, samples)


# ---- the rows ---------------------------------------------------------------------------

ROWS = {
    "glibc-backtrace": in_process("backtrace"),
    "libgcc": in_process("unwind"),
    "unw-ptrace-jit": live(M.mx_cmd("mx-unw-ptrace", "--jit"), J.parse_addr_name, names=True),
    "dwfl-live": live(M.mx_cmd("mx-dwfl", "--jit", "--inline"), J.parse_addr_name, names=True,
                      guests=J.guests_addr_name),
    "dwfl-core": core(M.mx_core_cmd("mx-dwfl", "--jit", "--inline"), J.parse_addr_name, names=True,
                      guests=J.guests_addr_name),
    "eu-stack-live": live(M.eu_stack_cmd, J.parse_eu_stack),
    "eu-stack-core": core(M.eu_stack_core_cmd, J.parse_eu_stack),
    "gdb-live": live(M.gdb_cmd, J.parse_gdb, names=True, inline_dups=True, guests=J.guests_gdb),
    "gdb-core": core(M.gdb_core_cmd, J.parse_gdb, names=True, inline_dups=True, guests=J.guests_gdb),
    "lldb-live": live(M.lldb_cmd, J.parse_lldb, names=True, inline_dups=True, guests=J.guests_lldb),
    "lldb-core": core(M.lldb_core_cmd, J.parse_lldb, names=True, inline_dups=True, guests=J.guests_lldb),
    "perf-fp": perf_fp,
    "perf-dwarf": perf_dwarf,
    "bpftrace": bpftrace,
    "jitstack-live": live(M.jitstack_cmd, J.parse_jitstack, names=True, guests=J.guests_jitstack),
    "jitstack-core": core(M.jitstack_core_cmd, J.parse_jitstack, names=True, guests=J.guests_jitstack),
}

STOCK = "the workload is Debian's stock luajit, which cannot be relinked"
NOT_RUN = {
    "llvm-libunwind": STOCK + " with LLVM libunwind ahead of libgcc_s (preloading it would also "
                      "replace libgcc's _Unwind_RaiseException and frame registry in LuaJIT's own error "
                      "handling)",
    "unw-backtrace": STOCK + " with nongnu libunwind (preloading it would also replace libgcc's "
                     "_Unwind_* functions in LuaJIT's own error handling)",
    "unw-step": STOCK + " with nongnu libunwind (preloading it would also replace libgcc's _Unwind_* "
                "functions in LuaJIT's own error handling)",
    "asan-access": STOCK + " with AddressSanitizer",
    "asan-alloc-free": STOCK + " with AddressSanitizer",
    "libbacktrace": "not wired: ljprobe.c does not call libbacktrace",
    "crash-reporter": "not wired: ljprobe.c installs no SIGSEGV handler",
    "cxx-exception": "LuaJIT lets no C++ exception cross a trace (its own rule); the integration's "
                     "test of a Lua error thrown while a trace is on the C stack covers its "
                     "personality routine",
    "fp-walk": "not run: LuaJIT's traces and interpreter keep no frame pointer (rbp is a general "
               "register, vm_x64.dasc), with or without the module",
    "unw-ptrace": "not run: libunwind-ptrace as shipped walks the rbp chain, which LuaJIT keeps in "
                  "no trace, with or without the module",
    "heaptrack": "not wired: the LuaJIT workloads make no allocation of their own below a trace",
    "gperftools": "not wired: its CPU profiler is preloaded into the tinyjit workloads only",
    "valgrind": "not wired: the LuaJIT workloads are not run under valgrind",
}


# Not run in a column, and why (N/A)
NOT_IN = {
    ("perf-fp", "lj-guest"): "the profilers run spin.lua, which inlines no Lua function (lj-module); "
    "in a trace that inlines one, the module names the ranges of the inlined code from LuaJIT's "
    "snapshots, which the workload cannot tell, so a profile's share of them has no expected value",
}
NOT_IN[("perf-dwarf", "lj-guest")] = NOT_IN[("bpftrace", "lj-guest")] = NOT_IN[("perf-fp", "lj-guest")]


def run(method, ctx, col, cell):
    if (method.id, col.id) in NOT_IN:
        raise NotApplicable(NOT_IN[(method.id, col.id)])
    return ROWS[method.id](ctx, col, cell)
