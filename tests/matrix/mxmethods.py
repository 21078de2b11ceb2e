# SPDX-License-Identifier: MIT
"""mxmethods.py - the matrix's columns (workload x publishing mode) and rows
(unwinders), and how each unwinder is driven.

Each method's run(ctx, col, cell) starts the workload the way that unwinder
needs it (in-process action, waiting for an attach, a core, spinning under
a profiler), runs the tool, and returns an Outcome: the frames it reported
(or samples, or a verdict) and the expected frames the workload wrote.
Judging happens in matrix.py, by mxjudge.judge.
"""
import os
import re
import shutil
import subprocess

import mxjudge as J
from mxrun import SAMPLE_BOUND, Skip, Timeout

DEPTH = 8          # the probe's recursion: ~40 native frames, 10 VM frames
CHILD_DEPTH = 2
SPIN_SECS = 1.5    # a sampler's first round; more rounds until MIN_SAMPLES (mxrun.Cell.sample)
TOOL_TIMEOUT = 120  # seconds a debugger or profiler may take before it is killed (times the load scale)
MIN_SAMPLES = 10    # samples in the spinning function a profile is judged on, at the least
WAIT_SECS = 300     # how long a waiting workload waits for its tool (times the load scale)
LLVM_LIBUNWIND = "/usr/lib/llvm-14/lib/libunwind.so.1"  # as tests/tests.mk
PROBE_MODE = {"backtrace": 1, "wait": 2, "abort": 3, "throw": 4, "spin": 5, "unwind": 6,
              "unw": 7, "unwstep": 8, "crash": 10, "uaf": 11, "malloc": 12, "libbacktrace": 13,
              "fault": 14}
LONG_SPIN = 60      # for tools that attach to a spinning workload (times the load scale): it is
                    # killed when they are done
# AddressSanitizer's report of the use-after-free: the fatal stack by its
# slow unwinder (_Unwind_Backtrace), the allocation and free stacks by its
# fast frame-pointer unwinder, none of them cut short (the default keeps 30
# frames of an allocation's stack; the probe's has ~40)
ASAN_OPTIONS = ("detect_leaks=0:fast_unwind_on_fatal=0:fast_unwind_on_malloc=1:"
                "malloc_context_size=256")
LIBPROFILER = "/usr/lib/%s-linux-gnu/libprofiler.so.0" % os.uname().machine


class Column:
    """inline: the JIT inlines guest calls (tinyjit --inline), so the rows
    that can show inline frames are judged on the guest frames too."""

    def __init__(self, id, label, workload, tj_args=(), env=None, publishes=False, arch="x86-64",
                 inline=False):
        self.id, self.label, self.workload = id, label, workload
        self.tj_args, self.env = list(tj_args), dict(env or {})
        self.publishes, self.arch, self.inline = publishes, arch, inline


COLUMNS = [
    Column("nofp-none", "no-FP stencils, nothing published", "probe",
           ["--frames=nofp", "--cfi=region", "--publish=none"]),
    Column("fp-none", "FP stencils, nothing published (CPython PR #143548)", "probe",
           ["--frames=fp", "--cfi=region", "--publish=none"]),
    Column("fp-region", "FP + region CFI (tinyjit's default) + all channels", "probe",
           ["--frames=fp", "--cfi=region", "--publish=all"], publishes=True),
    Column("nofp-exact", "no-FP + exact CFI + all channels", "probe",
           ["--frames=nofp", "--cfi=exact", "--publish=all"], publishes=True),
    Column("fp-exact", "FP + exact CFI + all channels", "probe",
           ["--frames=fp", "--cfi=exact", "--publish=all"], publishes=True),
    # W^X by double mapping: the code written through a RW view and run, and
    # published, at a RX view of the same pages (tinyjit --wx)
    Column("wx-dual", "FP + exact CFI + all channels, code run from a memfd's RX view (W^X, as .NET)",
           "probe", ["--frames=fp", "--cfi=exact", "--publish=all", "--wx=dual"], publishes=True),
    Column("wx-dual-anon", "the same, the RX view a second mapping of anonymous shared memory", "probe",
           ["--frames=fp", "--cfi=exact", "--publish=all", "--wx=dual-anon"], publishes=True),
    # guest calls inlined (tinyjit --inline): one native frame runs two VM
    # frames, published as an inline tree (docs/API.md, "Guest frames")
    Column("inline-fp-exact", "FP + exact CFI + all channels, small guest calls inlined (--inline)",
           "probe", ["--frames=fp", "--cfi=exact", "--publish=all", "--inline"], publishes=True,
           inline=True),
    Column("inline-nofp-exact", "no-FP + exact CFI + all channels, small guest calls inlined",
           "probe", ["--frames=nofp", "--cfi=exact", "--publish=all", "--inline"], publishes=True,
           inline=True),
    Column("child-all", "the library's child: hand-written blobs, all channels", "child",
           env={"JITUNWIND": "all"}, publishes=True),
    Column("child-none", "the library's child, nothing published", "child",
           env={"JITUNWIND": "none"}),
    # tinyjit for AArch64 under qemu-user (mxaarch64.py: which rows run there)
    Column("a64-fp-none", "AArch64 (qemu-user): FP stencils, nothing published", "probe",
           ["--frames=fp", "--cfi=region", "--publish=none"], arch="aarch64"),
    Column("a64-fp-region", "AArch64 (qemu-user): FP + region CFI + in-memory channels", "probe",
           ["--frames=fp", "--cfi=region", "--publish=default"], publishes=True, arch="aarch64"),
    Column("a64-nofp-exact", "AArch64 (qemu-user): no-FP + exact CFI + in-memory channels", "probe",
           ["--frames=nofp", "--cfi=exact", "--publish=default"], publishes=True, arch="aarch64"),
    Column("a64-fp-exact", "AArch64 (qemu-user): FP + exact CFI + in-memory channels", "probe",
           ["--frames=fp", "--cfi=exact", "--publish=default"], publishes=True, arch="aarch64"),
]

# tinyjit for AArch64 on a real arm64 kernel: the system VM
# (tests/aarch64-system), where `matrix.py --system aarch64` runs these
# columns natively, with the rows mxaarch64.SYSTEM_ROWS lists.  Never run
# on this host.
SYSTEM_COLUMNS = [
    Column("sys-fp-none", "AArch64 kernel (system VM): FP stencils, nothing published", "probe",
           ["--frames=fp", "--cfi=region", "--publish=none"], arch="aarch64-system"),
    Column("sys-fp-region", "AArch64 kernel (system VM): FP + region CFI + all channels", "probe",
           ["--frames=fp", "--cfi=region", "--publish=all"], publishes=True, arch="aarch64-system"),
    Column("sys-nofp-exact", "AArch64 kernel (system VM): no-FP + exact CFI + all channels", "probe",
           ["--frames=nofp", "--cfi=exact", "--publish=all"], publishes=True, arch="aarch64-system"),
    Column("sys-fp-exact", "AArch64 kernel (system VM): FP + exact CFI + all channels", "probe",
           ["--frames=fp", "--cfi=exact", "--publish=all"], publishes=True, arch="aarch64-system"),
]


class Ctx:
    """Paths to everything the methods run."""

    def __init__(self, root, build):
        self.root, self.build = root, build
        b = lambda *p: os.path.join(build, *p)
        self.tinyjit = {"plain": b("tinyjit", "tinyjit"), "nongnu": b("tinyjit", "tinyjit-libunwind"),
                        "llvm": b("matrix", "tinyjit-llvm"), "asan": b("matrix", "tinyjit-asan"),
                        "libbacktrace": b("matrix", "tinyjit-libbacktrace")}
        self.child = {"plain": b("tests", "child"), "nongnu": b("tests", "child-nongnu"),
                      "llvm": b("tests", "child-llvm"), "asan": b("matrix", "child-asan"),
                      "libbacktrace": b("matrix", "child-libbacktrace")}
        self.probe_tj = os.path.join(root, "tinyjit", "examples", "probe.tj")
        self.step_tj = os.path.join(root, "tests", "matrix", "step.tj")
        self.tool = lambda name: b("matrix", name)
        self.jitstack = b("jitstack", "jitstack")


class Outcome:
    """What a tool reported: one stack (frames), samples (a share of them
    must be right), several stacks that must all be right ({label: frames}),
    or a verdict of its own."""

    def __init__(self, expect, frames=None, samples=None, verdict=None, names_jit=False,
                 inline_dups=False, note="", stacks=None, guests=None, guest_lines=True):
        self.expect, self.frames, self.samples, self.verdict = expect, frames, samples, verdict
        self.names_jit, self.inline_dups, self.note = names_jit, inline_dups, note
        self.stacks = stacks
        # in an inline column, from a tool that shows inline frames: its
        # guest frames [(name, "FILE:LINE" or None)] (for samples, one such
        # list a sample); guest_lines False: it shows no lines
        self.guests, self.guest_lines = guests, guest_lines


# ---- workloads -------------------------------------------------------------------

def need_file(path, why):
    if not os.path.exists(path):
        raise Skip("%s is missing (%s)" % (os.path.relpath(path), why))


def need_cmd(name, package):
    if not shutil.which(name):
        raise Skip("%s is not installed (Debian package %s)" % (name, package))


def secs(x):
    return "%.1f" % x


def workload(ctx, col, cell, action, flavor="plain", env=None, spin=SPIN_SECS):
    """(command, environment, executable) of the column's workload doing
    `action` (spin: for `spin` seconds), and where its expect file will be."""
    expect = cell.path("expect")
    extra = dict(col.env)
    extra.update(env or {})
    if flavor == "llvm" and not os.path.exists(LLVM_LIBUNWIND):
        raise Skip("LLVM libunwind is not installed (Debian package libunwind-14)")
    if col.workload == "probe":
        exe = ctx.tinyjit[flavor]
        need_file(exe, "make tinyjit tinyjit-libunwind matrix-tools")
        extra.update(TJ_PROBE_EXPECT=expect, TJ_PROBE_WAIT=str(int(cell.limit(WAIT_SECS))),
                     TJ_PROBE_SPIN=secs(spin))
        cmd = [exe] + col.tj_args + [ctx.probe_tj, str(PROBE_MODE[action]), str(DEPTH)]
    else:
        exe = ctx.child[flavor]
        need_file(exe, "make tests matrix-tools")
        cmd = [exe, action, "--depth", str(CHILD_DEPTH), "--expect", expect]
        if action == "spin":
            cmd.append(secs(spin))
    return cmd, cell.env(extra), exe


def load_expect(col, cell, exe):
    path = cell.path("expect")
    if not os.path.exists(path):
        raise RuntimeError("the workload wrote no expect file")
    if col.workload == "probe":
        return J.load_probe_expect(path, exe)
    return J.load_child_expect(path)


READY = {"probe": r"tinyjit probe: pid (\d+) waiting", "child": r"ready (\d+)"}


def start_waiting(ctx, col, cell, prefix=(), flavor="plain"):
    cmd, env, exe = workload(ctx, col, cell, "wait", flavor)
    proc, pid = cell.start(list(prefix) + cmd, READY[col.workload], env)
    return proc, pid, exe, load_expect(col, cell, exe)


def make_core(ctx, col, cell):
    cmd, env, exe = workload(ctx, col, cell, "abort")
    core = cell.core(cmd, env)
    return core, exe, load_expect(col, cell, exe)


# ---- in-process unwinders --------------------------------------------------------

def needed(exe):
    out = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def check_linked(exe, flavor):
    """The binary must use the unwinder the row names: LLVM libunwind ahead
    of libgcc_s (else _Unwind_Backtrace is libgcc's), or nongnu libunwind."""
    libs = needed(exe)
    if flavor == "llvm" and not ("libunwind.so.1" in libs and (
            "libgcc_s.so.1" not in libs or libs.index("libunwind.so.1") < libs.index("libgcc_s.so.1"))):
        raise RuntimeError("%s does not link LLVM libunwind ahead of libgcc_s: %s" % (exe, libs))
    if flavor == "nongnu" and "libunwind.so.8" not in libs:
        raise RuntimeError("%s does not link nongnu libunwind: %s" % (exe, libs))
    if flavor == "asan" and not any(l.startswith("libasan.so") for l in libs):
        raise RuntimeError("%s does not link AddressSanitizer's runtime: %s" % (exe, libs))


def in_process(action, flavor="plain", parse=J.parse_bracketed):
    """The workload unwinds itself and prints the frames (the probe as
    "[0xADDR]" lines, parsed by `parse`; the child names them itself)."""
    def run(ctx, col, cell):
        cmd, env, exe = workload(ctx, col, cell, action, flavor)
        check_linked(exe, flavor)
        rc, out = cell.run(cmd, env=env, workload=True, name="workload")
        expect = load_expect(col, cell, exe)
        frames = parse(out) if col.workload == "probe" else J.parse_child_names(out)
        note = "" if rc in (0, 1) else "the workload exited %d" % rc
        return Outcome(expect, frames=frames, note=note)
    return run


# ---- AddressSanitizer ------------------------------------------------------------

def asan_report(ctx, col, cell):
    """Run the use-after-free under AddressSanitizer: (its report's stacks, expect)."""
    cmd, env, exe = workload(ctx, col, cell, "uaf", "asan", {"ASAN_OPTIONS": ASAN_OPTIONS})
    check_linked(exe, "asan")
    rc, out = cell.run(cmd, env=env, workload=True, name="workload")
    if "AddressSanitizer" not in out:
        raise RuntimeError("no AddressSanitizer report (exit %d): %s" % (rc, out.strip()[-300:]))
    return J.parse_asan(out), load_expect(col, cell, exe)


def asan_alloc_free(ctx, col, cell):
    stacks, expect = asan_report(ctx, col, cell)
    return Outcome(expect, stacks={k: stacks.get(k, []) for k in ("allocated", "freed")})


def asan_access(ctx, col, cell):
    stacks, expect = asan_report(ctx, col, cell)
    return Outcome(expect, frames=stacks.get("access", []))


def cxx_exception(ctx, col, cell):
    cmd, env, exe = workload(ctx, col, cell, "throw")
    rc, out = cell.run(cmd, env=env, workload=True, name="workload")
    if col.workload == "probe":
        caught = rc == 0 and "caught C++ exception" in out
    else:
        caught = rc == 0 and "result: PASS" in out
    why = "caught near main" if caught else (
        "std::terminate: the unwinder found no handler" if "terminate called" in out else "exit %d" % rc)
    return Outcome(None, verdict=caught, note=why)


# ---- tools on a live process -----------------------------------------------------

def guests_of(col, expect, guests, out):
    """The guest frames a tool showed, where the column inlines and the
    tool can show inline frames (guests: its parser)."""
    if not (col.inline and guests):
        return None
    if not expect.guests:
        raise RuntimeError("the workload wrote no guest frames")
    return guests(out)


def live_tool(make_cmd, parse, names=False, inline_dups=False, flavor="plain", guests=None):
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        proc, pid, exe, expect = start_waiting(ctx, col, cell, flavor=flavor)
        try:
            rc, out = cell.run(cmd_of(pid, exe), timeout=TOOL_TIMEOUT)
        finally:
            cell.stop(proc)
        return Outcome(expect, frames=parse(out), names_jit=names and col.publishes,
                       inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc,
                       guests=guests_of(col, expect, guests, out))
    return run


def core_tool(make_cmd, parse, names=False, inline_dups=False, guests=None):
    def run(ctx, col, cell):
        cmd_of = make_cmd(ctx)
        core, exe, expect = make_core(ctx, col, cell)
        rc, out = cell.run(cmd_of(core, exe), timeout=TOOL_TIMEOUT)
        return Outcome(expect, frames=parse(out), names_jit=names and col.publishes,
                       inline_dups=inline_dups, note="" if rc == 0 else "exit %d" % rc,
                       guests=guests_of(col, expect, guests, out))
    return run


def gdb_cmd(ctx):
    need_cmd("gdb", "gdb")
    return lambda pid, exe: ["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "set pagination off", "-ex", "bt"]


def gdb_core_cmd(ctx):
    need_cmd("gdb", "gdb")
    return lambda core, exe: ["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex", "bt", exe, core]


def lldb_cmd(ctx):
    need_cmd("lldb-16", "lldb-16")
    return lambda pid, exe: ["lldb-16", "--no-lldbinit", "-b", "-p", str(pid), "-o", "bt"]


def lldb_core_cmd(ctx):
    need_cmd("lldb-16", "lldb-16")
    return lambda core, exe: ["lldb-16", "--no-lldbinit", "-b", "-c", core, exe, "-o", "bt"]


def eu_stack_cmd(ctx):
    need_cmd("eu-stack", "elfutils")
    return lambda pid, exe: ["eu-stack", "-p", str(pid)]


def eu_stack_core_cmd(ctx):
    need_cmd("eu-stack", "elfutils")
    return lambda core, exe: ["eu-stack", "--core=" + core, "--executable=" + exe]


def mx_cmd(tool, *flags):
    def make(ctx):
        path = ctx.tool(tool)
        need_file(path, "make matrix-tools")
        return lambda pid, exe: [path, "-p", str(pid)] + list(flags)
    return make


def mx_core_cmd(tool, *flags):
    def make(ctx):
        path = ctx.tool(tool)
        need_file(path, "make matrix-tools")
        return lambda core, exe: [path, "--core", core, "--exe", exe] + list(flags)
    return make


def need_jitstack(ctx):
    if not os.path.exists(ctx.jitstack):
        raise Skip("jitstack not built (no BUILD/jitstack/jitstack)")


def jitstack_cmd(ctx):
    need_jitstack(ctx)
    return lambda pid, exe: [ctx.jitstack, "-p", str(pid), "--json"]


def jitstack_core_cmd(ctx):
    need_jitstack(ctx)
    return lambda core, exe: [ctx.jitstack, "--core", core, "--exe", exe, "--json"]


# ---- samplers ----------------------------------------------------------------------

def spin_pid(out):
    m = re.search(r"tinyjit probe: pid (\d+) spinning", out)
    return int(m.group(1)) if m else None


def fp_walk(ctx, col, cell):
    tool = ctx.tool("mx-fpwalk")
    need_file(tool, "make matrix-tools")
    cmd, env, exe = workload(ctx, col, cell, "spin")
    # the child says nothing: it spins once its expect file is there
    ready = r"tinyjit probe: pid (\d+) spinning" if col.workload == "probe" else None
    proc, pid = cell.start(cmd, ready, env)
    try:
        rc, out = cell.run([tool, "-p", str(pid), "-n", "40", "-i", "10"], timeout=TOOL_TIMEOUT)
    finally:
        cell.stop(proc)
    return Outcome(load_expect(col, cell, exe), samples=J.parse_samples(out))


def perf_env(cell):
    # perf keeps a build-id cache in $HOME/.debug: keep it in the cell
    return cell.env({"HOME": cell.dir})


def perf_samples(cell, data, pid, chains=False):
    """The samples of perf script; chains: also each sample's JIT functions
    from the perf map's chains of guest names."""
    rc, text = cell.run(["perf", "script", "-i", data, "-F", "pid,ip,sym"], env=perf_env(cell),
                        timeout=TOOL_TIMEOUT, name="perf-script")
    if pid is None:
        m = re.match(r"\s*(\d+)", text)
        pid = int(m.group(1)) if m else None
    if pid:
        cell.pids.add(pid)
    if chains:
        return J.parse_perf(text, pid), J.perf_chains(text, pid)
    return J.parse_perf(text, pid)


def perf_record(cell, args, cmd, env):
    full = ["perf", "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-o", cell.path("perf.data")] \
        + args + ["--"] + cmd
    env = dict(env, HOME=cell.dir)
    rc, out = cell.run(full, env=env, timeout=TOOL_TIMEOUT, name="perf-record")
    if not os.path.exists(cell.path("perf.data")) or "perf_event_paranoid" in out:
        raise Skip("perf record failed (exit %d): %s" % (rc, out.strip().splitlines()[-1:] or ""))
    return spin_pid(out)


def spinning(col, cell, names_jit, take):
    """A profile of the spinning workload, sampled in rounds until
    MIN_SAMPLES of its samples are in the spinning function (or the bound):
    take(spin seconds) returns (samples, expect, anything else)."""
    def count(r):
        samples, expect = r[0], r[1]
        return len(J.relevant(samples, expect, names_jit)), len(samples), "in " + expect.frames[0].name
    return cell.sample(take, count, MIN_SAMPLES, SPIN_SECS)


def perf_fp(ctx, col, cell):
    need_cmd("perf", "linux-perf")

    def take(spin):
        cmd, env, exe = workload(ctx, col, cell, "spin", spin=spin)
        pid = perf_record(cell, ["-g", "-F", "999"], cmd, env)
        samples, chains = perf_samples(cell, cell.path("perf.data"), pid, chains=True)
        return samples, load_expect(col, cell, exe), chains
    samples, expect, chains = spinning(col, cell, col.publishes, take)
    return Outcome(expect, samples=samples, names_jit=col.publishes,
                   guests=guests_of(col, expect, lambda _: chains, None), guest_lines=False)


def perf_dwarf(ctx, col, cell):
    need_cmd("perf", "linux-perf")

    def take(spin):
        cmd, env, exe = workload(ctx, col, cell, "spin", spin=spin)
        pid = perf_record(cell, ["-k", "1", "--call-graph", "dwarf,16384", "-F", "499"], cmd, env)
        return perf_inject_samples(cell, pid), load_expect(col, cell, exe)
    samples, expect = spinning(col, cell, col.publishes, take)
    return Outcome(expect, samples=samples, names_jit=col.publishes)


def perf_inject_samples(cell, pid):
    """perf inject --jit on the cell's perf.data, then its samples."""
    data = cell.path("perf.data")
    jit = cell.path("perf.jit.data")
    rc, out = cell.run(["perf", "inject", "--jit", "-i", data, "-o", jit], env=perf_env(cell),
                       timeout=TOOL_TIMEOUT, name="perf-inject")
    if rc != 0:
        raise RuntimeError("perf inject --jit failed: " + out[-300:])
    return perf_samples(cell, jit, pid)


def bpftrace_prog(pid, cell, need):
    """Sample pid at 199 Hz for a second (~199 samples on an idle core),
    then on until it has `need` samples, within SAMPLE_BOUND seconds at the
    cell's load."""
    return ("profile:hz:199 /pid == %d/ { @[ustack(perf)] = count(); @n++; } "
            "interval:ms:100 { @ticks++; if (@ticks >= 10 && @n >= %d) { exit(); } "
            "if (@ticks >= %d) { exit(); } } END { clear(@n); clear(@ticks); }"
            % (pid, need, max(10, int(10 * cell.limit(SAMPLE_BOUND)))))


def bpftrace(ctx, col, cell):
    """The eBPF profilers' route: a profile probe takes the user stack with
    the kernel's frame-pointer walk, bpftrace names it (perf map for JIT
    code) while the workload still runs."""
    need_cmd("bpftrace", "bpftrace")
    cmd, env, exe = workload(ctx, col, cell, "spin", spin=cell.limit(LONG_SPIN))
    ready = r"tinyjit probe: pid (\d+) spinning" if col.workload == "probe" else None
    proc, pid = cell.start(cmd, ready, env)
    prog = bpftrace_prog(pid, cell, 2 * MIN_SAMPLES)
    try:
        rc, out = cell.run(["bpftrace", "-e", prog], timeout=TOOL_TIMEOUT, name="bpftrace")
    finally:
        cell.stop(proc)
    if rc != 0 and "Attaching" not in out:
        raise Skip("bpftrace cannot attach here (exit %d): %s" % (rc, out.strip().splitlines()[-1:]))
    expect = load_expect(col, cell, exe)
    samples = J.parse_bpftrace(out)
    if rc == 0 and len(samples) < MIN_SAMPLES:  # it ran to its bound
        raise Timeout("bpftrace took %d samples of the spinning workload in its %s, but %d are "
                      "required" % (len(samples), cell.scaled(SAMPLE_BOUND), MIN_SAMPLES))
    return Outcome(expect, samples=samples, names_jit=col.publishes,
                   guests=guests_of(col, expect, J.bpftrace_chains, out), guest_lines=False)


def heaptrack(ctx, col, cell):
    """An allocation profiler on nongnu libunwind (memray's route): the
    stack heaptrack recorded for the workload's one malloc."""
    need_cmd("heaptrack", "heaptrack")
    need_cmd("heaptrack_print", "heaptrack")
    cmd, env, exe = workload(ctx, col, cell, "malloc")
    rc, out = cell.run(["heaptrack"] + cmd, env=env, timeout=TOOL_TIMEOUT, name="heaptrack")
    # heaptrack.NAME.PID.zst (or .gz): the workload ran as heaptrack's child
    data = [f for f in os.listdir(cell.dir) if re.match(r"heaptrack\..*\.\d+\.(zst|gz)$", f)]
    if not data:
        raise RuntimeError("heaptrack wrote no data (exit %d): %s" % (rc, out.strip()[-300:]))
    cell.pids.add(int(data[0].rsplit(".", 2)[1]))
    expect = load_expect(col, cell, exe)
    inner = expect.frames[0].name
    rc, text = cell.run(["heaptrack_print", "-f", cell.path(data[0]), "--print-peaks", "0",
                         "--print-temporary", "0", "--print-allocators", "1", "--merge-backtraces", "0",
                         "--filter-bt-function", inner], timeout=TOOL_TIMEOUT, name="heaptrack_print")
    return Outcome(expect, frames=J.parse_heaptrack(text))


def gperftools(ctx, col, cell):
    """gperftools' CPU profiler (CPUPROFILE=, SIGPROF), read from its raw
    profile: every sample's pcs as recorded."""
    need_file(LIBPROFILER, "Debian package libgoogle-perftools4")
    prof = cell.path("cpu.prof")

    def take(spin):
        cmd, env, exe = workload(ctx, col, cell, "spin", spin=spin, env={
            "LD_PRELOAD": LIBPROFILER, "CPUPROFILE": prof, "CPUPROFILE_FREQUENCY": "500",
            "TCMALLOC_STACKTRACE_METHOD_VERBOSE": "1"})
        if os.path.exists(prof):
            os.unlink(prof)
        rc, out = cell.run(cmd, env=env, workload=True, name="workload")
        if not os.path.exists(prof):
            raise RuntimeError("no profile written (exit %d): %s" % (rc, out.strip()[-300:]))
        return J.parse_cpuprofile(prof), load_expect(col, cell, exe), out
    samples, expect, out = spinning(col, cell, False, take)
    m = re.search(r"Chosen stacktrace method is (\S+)", out)
    return Outcome(expect, samples=samples, note="unwinder: " + (m.group(1) if m else "?"))


def valgrind(ctx, col, cell):
    need_cmd("valgrind", "valgrind")
    need_cmd("vgdb", "valgrind")
    prefix = cell.path("vgdb")
    vg = ["valgrind", "--tool=none", "-q", "--vgdb=yes", "--vgdb-prefix=" + prefix, "--num-callers=500"]
    proc, pid, exe, expect = start_waiting(ctx, col, cell, prefix=vg)
    try:
        rc, out = cell.run(["vgdb", "--vgdb-prefix=" + prefix, "--pid=%d" % pid, "v.info", "scheduler"],
                           timeout=TOOL_TIMEOUT)
    finally:
        cell.stop(proc)
    return Outcome(expect, frames=J.parse_valgrind(out))


# ---- the rows ------------------------------------------------------------------------

class Method:
    def __init__(self, id, label, run, how):
        self.id, self.label, self.run, self.how = id, label, run, how


METHODS = [
    Method("glibc-backtrace", "glibc backtrace()", in_process("backtrace"),
           "in-process; probe mode 1 / child backtrace"),
    Method("libgcc", "libgcc _Unwind_Backtrace", in_process("unwind"),
           "in-process; probe mode 6 / child unwind"),
    Method("llvm-libunwind", "LLVM libunwind _Unwind_Backtrace", in_process("unwind", "llvm"),
           "in-process; linked ahead of libgcc_s: tinyjit-llvm / child-llvm"),
    Method("unw-backtrace", "nongnu libunwind unw_backtrace", in_process("unw", "nongnu"),
           "in-process; tinyjit-libunwind mode 7 / child-nongnu unw"),
    Method("unw-step", "nongnu libunwind unw_step", in_process("unwstep", "nongnu"),
           "in-process; tinyjit-libunwind mode 8 / child-nongnu unwstep"),
    Method("cxx-exception", "C++ exception", cxx_exception,
           "thrown in the innermost frame, caught near main (probe mode 4 / child throw)"),
    Method("crash-reporter", "crash reporter (SIGSEGV handler, _Unwind_Backtrace)", in_process("crash"),
           "in-process; a SIGSEGV handler on an alternate stack unwinds through the signal frame "
           "(probe mode 10 / child crash)"),
    Method("asan-access", "AddressSanitizer fatal stack (slow unwinder)", asan_access,
           "use-after-free under ASan, fast_unwind_on_fatal=0: the access's stack by _Unwind_Backtrace "
           "(tinyjit-asan mode 11 / child-asan uaf)"),
    Method("asan-alloc-free", "AddressSanitizer alloc/free stacks (fast unwinder)", asan_alloc_free,
           "the same report's allocation and free stacks, both by ASan's frame-pointer unwinder"),
    Method("libbacktrace", "libbacktrace backtrace_full", in_process("libbacktrace", "libbacktrace",
                                                                     J.parse_libbacktrace),
           "in-process; GCC's libbacktrace (tinyjit-libbacktrace mode 13 / child-libbacktrace)"),
    Method("fp-walk", "manual frame-pointer walk", fp_walk,
           "mx-fpwalk: 40 ptrace samples of a spinning workload, rbp chain"),
    Method("unw-ptrace", "libunwind-ptrace", live_tool(mx_cmd("mx-unw-ptrace"), J.parse_addr_name),
           "mx-unw-ptrace -p PID: libunwind-ptrace as shipped"),
    Method("unw-ptrace-jit", "libunwind-ptrace + GDB JIT images",
           live_tool(mx_cmd("mx-unw-ptrace", "--jit"), J.parse_addr_name, names=True),
           "mx-unw-ptrace -p PID --jit: FDEs of the GDB JIT images through find_proc_info"),
    Method("dwfl-live", "libdwfl live + GDB JIT images",
           live_tool(mx_cmd("mx-dwfl", "--jit", "--inline"), J.parse_addr_name, names=True,
                     guests=J.guests_addr_name),
           "mx-dwfl -p PID --jit --inline: ptrace attach, images as modules; inline frames from "
           "libdw's scopes, as eu-stack -i"),
    Method("dwfl-core", "libdwfl core + GDB JIT images",
           core_tool(mx_core_cmd("mx-dwfl", "--jit", "--inline"), J.parse_addr_name, names=True,
                     guests=J.guests_addr_name),
           "mx-dwfl --core --jit --inline: images read from the core"),
    Method("eu-stack-live", "eu-stack live", live_tool(eu_stack_cmd, J.parse_eu_stack), "eu-stack -p PID"),
    Method("eu-stack-core", "eu-stack core", core_tool(eu_stack_core_cmd, J.parse_eu_stack),
           "eu-stack --core"),
    Method("gdb-live", "gdb live", live_tool(gdb_cmd, J.parse_gdb, names=True, inline_dups=True,
                                             guests=J.guests_gdb),
           "gdb -batch -p PID -ex bt"),
    Method("gdb-core", "gdb core", core_tool(gdb_core_cmd, J.parse_gdb, names=True, inline_dups=True,
                                             guests=J.guests_gdb),
           "gdb -batch EXE CORE -ex bt"),
    Method("lldb-live", "lldb live", live_tool(lldb_cmd, J.parse_lldb, names=True, inline_dups=True,
                                               guests=J.guests_lldb),
           "lldb-16 -b -p PID -o bt"),
    Method("lldb-core", "lldb core", core_tool(lldb_core_cmd, J.parse_lldb, names=True, inline_dups=True,
                                               guests=J.guests_lldb),
           "lldb-16 -b -c CORE EXE -o bt"),
    Method("perf-fp", "perf -g (frame pointers + perf map)", perf_fp,
           "perf record -g; perf script; samples in the spinning probe"),
    Method("perf-dwarf", "perf --call-graph dwarf + jitdump", perf_dwarf,
           "perf record -k 1 --call-graph dwarf; perf inject --jit; perf script"),
    Method("bpftrace", "bpftrace ustack (eBPF, frame pointers + perf map)", bpftrace,
           "bpftrace profile:hz:199 @[ustack(perf)] on the spinning workload, 1 s, or until 20 "
           "samples on a loaded machine"),
    Method("heaptrack", "heaptrack (nongnu libunwind)", heaptrack,
           "heaptrack WORKLOAD (probe mode 12 / child malloc); heaptrack_print of the malloc's stack"),
    Method("gperftools", "gperftools CPU profiler", gperftools,
           "LD_PRELOAD=libprofiler.so CPUPROFILE=FILE on the spinning workload; the raw profile's "
           "samples (its unwinder here: nongnu libunwind)"),
    Method("valgrind", "valgrind", valgrind,
           "valgrind --tool=none; vgdb v.info scheduler (valgrind's own unwinder)"),
    Method("jitstack-live", "jitstack live", live_tool(jitstack_cmd, J.parse_jitstack, names=True,
                                                       guests=J.guests_jitstack),
           "jitstack -p PID --json"),
    Method("jitstack-core", "jitstack core", core_tool(jitstack_core_cmd, J.parse_jitstack, names=True,
                                                       guests=J.guests_jitstack),
           "jitstack --core CORE --exe EXE --json"),
]
