# SPDX-License-Identifier: MIT
"""mxcpython.py - the matrix's CPython block: CPython 3.13's own JIT (a JIT
no one here wrote), built three ways by integrations/cpython: the stock JIT
(`make cpython-stock`: nothing published), with our patches (`make
cpython`: every executor published, JITUNWIND=all), and with them and
frame pointers (`make cpython-fp`).

The workload is cpyprobe.py (integrations/cpython/tests): hot's loop calls
the C extension _cpyprobe (cpyprobe.c, built here against each
interpreter's own headers) directly from its trace; the probe unwinds
itself, waits for a tool, aborts for a core or spins for a sampler.  What
the stack holds comes from the workload alone:
  - cpyprobe.c writes its own frames, its return address into the trace,
    the traced function's code (qualname, file), the executor of that code
    holding the return address (CPython's own jit_code and jit_size) and
    where each object is loaded (its expect file);
  - the script marks the line its trace starts at (`# mark: enter`), which
    names the executor "py:hot (cpyprobe.py:ENTER)" (integrations/cpython,
    "What an executor is").
The stack is then: cpyp_inner, cpyp_probe, the executor (the stencil copy
that made the call), the executor again (its trampoline, which entered the
first stencil), _PyEval_EvalFrameDefault, the interpreter's own functions
(PyEval_EvalCode, run_mod, ..., Py_RunMain: judged by their addresses in
python's code, or by their names there where a tool gives only names),
Py_BytesMain (python's main tail-calls it).

Only the rows that have a way into a CPython process run (ROWS); the
others are listed with the reason in NOT_RUN.
"""
import os
import shutil
import subprocess
import threading

import mxjudge as J
import mxluajit
import mxmethods as M
from mxrun import SAMPLE_BOUND, NotApplicable, Skip, Timeout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CYT = os.path.join(ROOT, "integrations", "cpython", "tests")
NONGNU = "/usr/lib/%s-linux-gnu/libunwind.so.8" % os.uname().machine
SCRIPT = "cpyprobe.py"

COLUMNS = [
    M.Column("cpy-stock", "CPython 3.13.5's stock JIT (make cpython-stock): nothing published", "cpython",
             env={"JITUNWIND": "all"}),
    M.Column("cpy-jit", "CPython 3.13.5 with the jitunwind patches (make cpython): every executor "
             "published, every channel (JITUNWIND=all)", "cpython", env={"JITUNWIND": "all"},
             publishes=True),
    M.Column("cpy-fp", "the same configured --with-jit-frame-pointers and compiled with frame pointers "
             "(make cpython-fp)", "cpython", env={"JITUNWIND": "all"}, publishes=True),
]
# each column's interpreter: $(BUILD)/NAME/dir names its build directory
BUILD_OF = {"cpy-stock": "cpython-stock", "cpy-jit": "cpython", "cpy-fp": "cpython-fp"}


# ---- the interpreters and the probe ------------------------------------------------

def interpreter(ctx, col):
    """The column's python, or None when it is not built."""
    dir_file = os.path.join(ctx.build, BUILD_OF[col.id], "dir")
    if not os.path.exists(dir_file):
        return None
    with open(dir_file) as f:
        python = os.path.join(f.read().strip(), "python")
    return python if os.path.exists(python) else None


def missing(ctx):
    """Why the block cannot run here, or None (a column whose interpreter
    is not built is skipped on its own)."""
    if os.uname().machine != "x86_64":
        return "the CPython integration publishes executors on x86-64 only (integrations/cpython/README.md)"
    if not shutil.which("gcc"):
        return "gcc is not installed (it builds the probe, cpyprobe.c)"
    for col in COLUMNS[:2]:
        if not interpreter(ctx, col):
            return "%s is not built (make %s)" % (BUILD_OF[col.id], BUILD_OF[col.id])
    return None


_build_lock = threading.Lock()


def probe_dir(ctx, col, flavor):
    """The directory of _cpyprobe.so built for the column's interpreter
    (flavor nongnu: with nongnu libunwind, for unw_backtrace and unw_step),
    built once (again when cpyprobe.c, tests/probe-frames.h or the
    interpreter is newer)."""
    python = interpreter(ctx, col)
    if not python:
        raise Skip("%s is not built (make %s)" % (BUILD_OF[col.id], BUILD_OF[col.id]))
    src_c = os.path.join(CYT, "cpyprobe.c")
    src_h = os.path.join(os.path.dirname(HERE), "probe-frames.h")
    out = os.path.join(ctx.build, "matrix", "cpython", "%s-%s" % (BUILD_OF[col.id], flavor))
    so = os.path.join(out, "_cpyprobe.so")
    with _build_lock:
        if os.path.exists(so) and os.path.getmtime(so) >= max(os.path.getmtime(src_c),
                                                                os.path.getmtime(src_h),
                                                                os.path.getmtime(python)):
            return out
        os.makedirs(out, exist_ok=True)
        src = os.path.dirname(python)
        cmd = ["gcc", "-shared", "-fPIC", "-O2", "-g", "-fno-omit-frame-pointer",
               "-mno-omit-leaf-frame-pointer", "-I" + os.path.join(src, "Include"), "-I" + src,
               "-o", so + ".tmp", src_c]
        if flavor == "nongnu":
            cmd[1:1] = ["-DCPYP_NONGNU"]
            cmd.append("-lunwind")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cpyprobe.c does not build: %s" % r.stderr[-500:])
        os.replace(so + ".tmp", so)
    return out


def workload(ctx, col, cell, mode, flavor="plain", secs=M.SPIN_SECS, env=None):
    """(command, environment) of the column's python running cpyprobe.py
    from the cell's directory, the probe doing `mode` (spin: for `secs`
    seconds).  flavor llvm and nongnu preload that unwinder (nongnu: also
    so that the library finds _U_dyn_register when its context opens, at
    the first executor)."""
    why = missing(ctx)
    if why:
        raise Skip(why)
    pdir = probe_dir(ctx, col, "nongnu" if flavor == "nongnu" else "plain")
    shutil.copy(os.path.join(CYT, SCRIPT), cell.path(SCRIPT))
    extra = dict(col.env, PYTHON_JIT="1", PYTHONPATH=pdir, CPYP_MODE=mode, CPYP_EXPECT=cell.path("expect"),
                 CPYP_WAIT=str(int(cell.limit(M.WAIT_SECS))), CPYP_SPIN=M.secs(secs),
                 LD_LIBRARY_PATH=ctx.build + (":" + os.environ["LD_LIBRARY_PATH"]
                                              if os.environ.get("LD_LIBRARY_PATH") else ""))
    if flavor == "llvm":
        M.need_file(M.LLVM_LIBUNWIND, "Debian package libunwind-14")
        extra["LD_PRELOAD"] = M.LLVM_LIBUNWIND
    elif flavor == "nongnu":
        M.need_file(NONGNU, "Debian package libunwind8")
        extra["LD_PRELOAD"] = NONGNU
    extra.update(env or {})
    return [interpreter(ctx, col), SCRIPT], cell.env(extra)


def mark_line(script, mark):
    with open(script) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# mark: " + mark):
                return i
    raise RuntimeError("%s has no `# mark: %s`" % (script, mark))


def read_expect(path):
    """The probe's expect file as {key: [fields...]} (module lines: a list
    of (base, path))."""
    if not os.path.exists(path):
        raise RuntimeError("the workload wrote no expect file")
    out = {"module": []}
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "module":
                out["module"].append((int(p[1], 16), line.split(None, 2)[2].strip()))
            elif p[0] == "c":
                out.setdefault("c", []).append(p[1])
            else:
                out[p[0]] = p[1:]
    return out


def call_graph_expect(cell, col):
    """The Expect of the probe's stack (module docstring), from the files
    the workload wrote and its script's marks."""
    e = read_expect(cell.path("expect"))
    if e.get("executor", ["none"])[0] == "none":
        raise RuntimeError("the probe returned to %s, in no executor of hot's code (the call was "
                           "not made from its trace)" % e.get("ret", ["?"])[0])
    lo, hi = (int(x, 16) for x in e["executor"])
    qualname, filename = e["code"]
    base = os.path.basename(filename)
    executor = "py:%s (%s:%d)" % (qualname, base, mark_line(cell.path(base), "enter"))
    modules = dict((path, b) for b, path in reversed(e["module"]))
    exe = next((m for m in modules if os.path.basename(m) == "python"), None)
    probe = next((m for m in modules if os.path.basename(m).startswith("_cpyprobe")), None)
    if not exe or not probe:
        raise RuntimeError("the expect file names no python or _cpyprobe: %s" % sorted(modules))
    py_syms = mxluajit.nm_functions(exe)

    def c(name, where, syms=None):
        value, size = (syms or mxluajit.nm_functions(where))[name]
        b = modules[where]
        return J.Spec(name, b + value, b + value + max(size, 1), "c")
    code_lo, code_hi = mxluajit.code_range(exe, modules[exe])
    frames = [c("cpyp_inner", probe), c("cpyp_probe", probe), J.Spec(executor, lo, hi, "jit"),
              J.Spec(executor, lo, hi, "jit"), c("_PyEval_EvalFrameDefault", exe, py_syms),
              J.Spec("python's own code", code_lo, code_hi, "c", opt=True, many=True,
                     names={J.base_name(n) for n in py_syms}),
              c("Py_BytesMain", exe, py_syms)]
    return J.Expect(frames, {executor: (lo, hi, hi)}, exe)


# ---- stacks -------------------------------------------------------------------------

UNWINDER_LIB = {"plain": "libgcc_s.so", "llvm": "libunwind.so.1"}


def in_process(mode, flavor="plain"):
    """cpyprobe.c unwinds itself and prints "0xPC NAME" lines, NAME from
    dladdr, which knows no JIT code: the executor is judged by its
    address.  For _Unwind_Backtrace the probe's own dladdr says whose it
    called (libgcc's, or LLVM libunwind's where that is preloaded)."""
    def run(ctx, col, cell):
        cmd, env = workload(ctx, col, cell, mode, flavor)
        rc, out = cell.run(cmd, env=env, workload=True, name="workload")
        if mode == "unwind":
            line = next((l for l in out.splitlines() if l.startswith("_Unwind_Backtrace from ")), "")
            if UNWINDER_LIB[flavor] not in os.path.basename(line):
                raise RuntimeError("the probe's _Unwind_Backtrace is not %s's (%s)" % (
                    UNWINDER_LIB[flavor], line or "no line says whose it is"))
        note = "" if rc == 0 else "the workload exited %d" % rc
        return M.Outcome(call_graph_expect(cell, col), frames=J.parse_addr_name(out), note=note)
    return run


def live(make_cmd, parse, names=False, inline_dups=False, flavor="plain"):
    """A tool attached to the workload waiting in cpyp_inner."""
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        cmd, env = workload(ctx, col, cell, "wait", flavor)
        proc, pid = cell.start(cmd, r"ready (\d+)", env)
        try:
            rc, out = cell.run(cmd_of(pid, cmd[0]), timeout=M.TOOL_TIMEOUT)
        finally:
            cell.stop(proc)
        return M.Outcome(call_graph_expect(cell, col), frames=parse(out), names_jit=names and col.publishes,
                         inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc)
    return run


def core(make_cmd, parse, names=False, inline_dups=False):
    """A tool on the core of the workload aborting in cpyp_inner."""
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        cmd, env = workload(ctx, col, cell, "abort")
        core_file = cell.core(cmd, env)
        rc, out = cell.run(cmd_of(core_file, cmd[0]), timeout=M.TOOL_TIMEOUT)
        return M.Outcome(call_graph_expect(cell, col), frames=parse(out), names_jit=names and col.publishes,
                         inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc)
    return run


# ---- samplers: the probe spinning in cpyp_inner --------------------------------------

def sampled(col, cell, names_jit, take):
    """Samples in rounds until MIN_SAMPLES of them hold cpyp_inner (or the
    bound): take(spin seconds) returns (samples, expect)."""
    def count(r):
        samples, expect = r
        return len(J.relevant(samples, expect, names_jit)), len(samples), "in cpyp_inner"
    return cell.sample(take, count, M.MIN_SAMPLES, M.SPIN_SECS)


def perf_fp(ctx, col, cell):
    M.need_cmd("perf", "linux-perf")

    def take(secs):
        cmd, env = workload(ctx, col, cell, "spin", secs=secs)
        pid = M.perf_record(cell, ["-g", "-F", "999"], cmd, env)
        return M.perf_samples(cell, cell.path("perf.data"), pid), call_graph_expect(cell, col)
    samples, expect = sampled(col, cell, col.publishes, take)
    return M.Outcome(expect, samples=samples, names_jit=col.publishes)


def perf_dwarf(ctx, col, cell):
    M.need_cmd("perf", "linux-perf")

    def take(secs):
        cmd, env = workload(ctx, col, cell, "spin", secs=secs)
        pid = M.perf_record(cell, ["-k", "1", "--call-graph", "dwarf,16384", "-F", "499"], cmd, env)
        return M.perf_inject_samples(cell, pid), call_graph_expect(cell, col)
    samples, expect = sampled(col, cell, col.publishes, take)
    return M.Outcome(expect, samples=samples, names_jit=col.publishes)


def bpftrace(ctx, col, cell):
    M.need_cmd("bpftrace", "bpftrace")
    cmd, env = workload(ctx, col, cell, "spin", secs=cell.limit(M.LONG_SPIN))
    proc, pid = cell.start(cmd, r"spinning (\d+)", env)
    prog = M.bpftrace_prog(pid, cell, 2 * M.MIN_SAMPLES)
    try:
        rc, out = cell.run(["bpftrace", "-e", prog], timeout=M.TOOL_TIMEOUT, name="bpftrace")
    finally:
        cell.stop(proc)
    if rc != 0 and "Attaching" not in out:
        raise Skip("bpftrace cannot attach here (exit %d): %s" % (rc, out.strip().splitlines()[-1:]))
    samples = J.parse_bpftrace(out)
    if rc == 0 and len(samples) < M.MIN_SAMPLES:  # it ran to its bound
        raise Timeout("bpftrace took %d samples of the spinning probe in its %s, but %d are required" % (
            len(samples), cell.scaled(SAMPLE_BOUND), M.MIN_SAMPLES))
    return M.Outcome(call_graph_expect(cell, col), samples=samples, names_jit=col.publishes)


def fp_walk(ctx, col, cell):
    tool = ctx.tool("mx-fpwalk")
    M.need_file(tool, "make matrix-tools")
    cmd, env = workload(ctx, col, cell, "spin", secs=cell.limit(M.LONG_SPIN))
    proc, pid = cell.start(cmd, r"spinning (\d+)", env)
    try:
        rc, out = cell.run([tool, "-p", str(pid), "-n", "40", "-i", "10"], timeout=M.TOOL_TIMEOUT)
    finally:
        cell.stop(proc)
    return M.Outcome(call_graph_expect(cell, col), samples=J.parse_samples(out))


# ---- the rows ---------------------------------------------------------------------------

ROWS = {
    "glibc-backtrace": in_process("backtrace"),
    "libgcc": in_process("unwind"),
    "llvm-libunwind": in_process("unwind", "llvm"),
    "unw-backtrace": in_process("unw", "nongnu"),
    "unw-step": in_process("unwstep", "nongnu"),
    "fp-walk": fp_walk,
    "unw-ptrace": live(M.mx_cmd("mx-unw-ptrace"), J.parse_addr_name),
    "unw-ptrace-jit": live(M.mx_cmd("mx-unw-ptrace", "--jit"), J.parse_addr_name, names=True),
    "dwfl-live": live(M.mx_cmd("mx-dwfl", "--jit"), J.parse_addr_name, names=True),
    "dwfl-core": core(M.mx_core_cmd("mx-dwfl", "--jit"), J.parse_addr_name, names=True),
    "eu-stack-live": live(M.eu_stack_cmd, J.parse_eu_stack),
    "eu-stack-core": core(M.eu_stack_core_cmd, J.parse_eu_stack),
    "gdb-live": live(M.gdb_cmd, J.parse_gdb, names=True, inline_dups=True),
    "gdb-core": core(M.gdb_core_cmd, J.parse_gdb, names=True, inline_dups=True),
    "lldb-live": live(M.lldb_cmd, J.parse_lldb, names=True, inline_dups=True),
    "lldb-core": core(M.lldb_core_cmd, J.parse_lldb, names=True, inline_dups=True),
    "perf-fp": perf_fp,
    "perf-dwarf": perf_dwarf,
    "bpftrace": bpftrace,
    "jitstack-live": live(M.jitstack_cmd, J.parse_jitstack, names=True),
    "jitstack-core": core(M.jitstack_core_cmd, J.parse_jitstack, names=True),
}

NOT_RUN = {
    "cxx-exception": "not wired: a C++ exception thrown through the interpreter's C frames would skip "
                     "their clean-up (CPython lets none cross it); a Python exception raised through "
                     "a trace is the integration's shapes test (integrations/cpython/tests)",
    "crash-reporter": "not wired: cpyprobe.c installs no SIGSEGV handler",
    "asan-access": "the interpreter is a cached build, not built with AddressSanitizer",
    "asan-alloc-free": "the interpreter is a cached build, not built with AddressSanitizer",
    "libbacktrace": "not wired: cpyprobe.c does not call libbacktrace",
    "heaptrack": "not wired: the workload makes no allocation of its own below a trace",
    "gperftools": "not wired: its CPU profiler is preloaded into the tinyjit workloads only",
    "valgrind": "not wired: the workload is not run under valgrind",
}


def run(method, ctx, col, cell):
    if method.id not in ROWS:
        raise NotApplicable(NOT_RUN.get(method.id, "not wired"))
    return ROWS[method.id](ctx, col, cell)
