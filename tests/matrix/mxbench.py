# SPDX-License-Identifier: MIT
"""mxbench.py - what each unwinder costs on the probe's stack, side by side in
one run (`make matrix-bench`), written as a Markdown section.

The workload is the probe in the default mode (FP stencils, region CFI, all
channels) at the matrix's depth.  Three kinds of number, each a median:
  in-process   one unwind of the whole stack, timed inside the probe
               (TJ_PROBE_REPEAT: N unwinds in one process)
  attached     one unwind by a remote unwinder library that is already
               attached and has read the modules and JIT images (mx-* --repeat)
  whole tool   one complete run of the tool as a user types it (start, attach
               or open the core, unwind, print, exit), REPEATS runs
"""
import os
import re
import statistics
import time

import mxrun
import mxsteps
from mxmethods import ASAN_OPTIONS, COLUMNS, make_core, start_waiting

IN_PROCESS_REPEAT = 2000
ATTACHED_REPEAT = 200
REPEATS = 7


def median_wall(cell, cmd, n=REPEATS, timeout=120, env=None, ok_rc=(0,), workload=False):
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        rc, out = cell.run(cmd, timeout=timeout, env=env, workload=workload)
        times.append(time.monotonic() - t0)
        if rc not in ok_rc:
            raise RuntimeError("%s: exit %d: %s" % (cmd[0], rc, out[-200:]))
    return statistics.median(times) * 1e6


def fmt_us(us):
    return "%.1f µs" % us if us < 1000 else "%.1f ms" % (us / 1000)


def run(ctx, run_root, path):
    col = next(c for c in COLUMNS if c.id == "fp-region")
    rows = []  # (unwinder, kind, median µs, note)
    log = []

    def cell(name):
        return mxrun.Cell(run_root, "bench__" + name, log)

    # in-process: the probe times its own unwinder
    for label, action, flavor, mode in [("glibc backtrace()", "backtrace", "plain", 1),
                                        ("libgcc _Unwind_Backtrace", "unwind", "plain", 6),
                                        ("LLVM libunwind _Unwind_Backtrace", "unwind", "llvm", 6),
                                        ("nongnu libunwind unw_backtrace", "unw", "nongnu", 7),
                                        ("nongnu libunwind unw_step", "unwstep", "nongnu", 8),
                                        ("crash reporter _Unwind_Backtrace (in a SIGSEGV handler)",
                                         "crash", "plain", 10),
                                        ("libbacktrace backtrace_full", "libbacktrace", "libbacktrace", 13)]:
        c = cell(action + flavor)
        try:
            exe = ctx.tinyjit[flavor]
            if not os.path.exists(exe):
                rows.append((label, "in-process", None, "%s not built" % os.path.relpath(exe)))
                continue
            env = c.env({"TJ_PROBE_REPEAT": str(IN_PROCESS_REPEAT)})
            rc, out = c.run([exe] + col.tj_args + [ctx.probe_tj, str(mode), "8"], env=env, workload=True)
            m = re.search(r"(\d+) frames, median (\d+) ns over (\d+)", out)
            if not m:
                raise RuntimeError(out[-300:])
            rows.append((label, "in-process", int(m.group(2)) / 1000.0,
                         "%s frames, median of %s unwinds" % (m.group(1), m.group(3))))
        finally:
            c.cleanup()

    # a waiting probe for the attaching tools
    c = cell("live")
    try:
        proc, pid, exe, expect = start_waiting(ctx, col, c)
        frames = len([s for s in expect.frames if not s.opt])
        for label, tool, flags in [("libdwfl + GDB JIT images", "mx-dwfl", ["--jit"]),
                                   ("libunwind-ptrace + GDB JIT images", "mx-unw-ptrace", ["--jit"]),
                                   ("libunwind-ptrace", "mx-unw-ptrace", [])]:
            rc, out = c.run([ctx.tool(tool), "-p", str(pid), "--repeat", str(ATTACHED_REPEAT)] + flags)
            m = re.search(r"open (\d+) ns, open \+ first unwind (\d+) ns, median unwind (\d+) ns", out)
            if m:
                rows.append((label, "attached", int(m.group(3)) / 1000.0,
                             "median of %d; attach and read modules%s: %s" % (
                                 ATTACHED_REPEAT, " and images" if flags else "",
                                 fmt_us(int(m.group(1)) / 1000.0))))
        tools = [("mx-fpwalk (frame-pointer walk)", [ctx.tool("mx-fpwalk"), "-p", str(pid), "-n", "1"]),
                 ("libdwfl + GDB JIT images (mx-dwfl)", [ctx.tool("mx-dwfl"), "-p", str(pid), "--jit"]),
                 ("libunwind-ptrace + images (mx-unw-ptrace)",
                  [ctx.tool("mx-unw-ptrace"), "-p", str(pid), "--jit"]),
                 ("eu-stack -p", ["eu-stack", "-p", str(pid)]),
                 ("gdb -batch -p PID -ex bt", ["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "bt"]),
                 ("lldb-16 -b -p PID -o bt", ["lldb-16", "--no-lldbinit", "-b", "-p", str(pid), "-o", "bt"])]
        if os.path.exists(ctx.jitstack):
            tools.append(("jitstack -p", [ctx.jitstack, "-p", str(pid)]))
        for label, cmd in tools:
            try:
                rows.append((label, "whole tool, live", median_wall(c, cmd), "median of %d runs" % REPEATS))
            except (RuntimeError, mxrun.Timeout, OSError) as e:
                rows.append((label, "whole tool, live", None, str(e)[:120]))
        c.stop(proc)
    finally:
        c.cleanup()

    # a core for the post-mortem tools
    c = cell("core")
    try:
        core, exe, expect = make_core(ctx, col, c)
        tools = [("libdwfl + GDB JIT images (mx-dwfl --core)",
                  [ctx.tool("mx-dwfl"), "--core", core, "--exe", exe, "--jit"]),
                 ("eu-stack --core", ["eu-stack", "--core=" + core, "--executable=" + exe]),
                 ("gdb -batch EXE CORE -ex bt", ["gdb", "-nx", "-batch", "-ex", "bt", exe, core]),
                 ("lldb-16 -b -c CORE -o bt", ["lldb-16", "--no-lldbinit", "-b", "-c", core, exe, "-o", "bt"])]
        if os.path.exists(ctx.jitstack):
            tools.append(("jitstack --core", [ctx.jitstack, "--core", core, "--exe", exe]))
        for label, cmd in tools:
            try:
                rows.append((label, "whole tool, core", median_wall(c, cmd), "median of %d runs" % REPEATS))
            except (RuntimeError, mxrun.Timeout, OSError) as e:
                rows.append((label, "whole tool, core", None, str(e)[:120]))
    finally:
        c.cleanup()

    # whole runs of the workloads the sanitizer and allocation-profiler rows
    # use, beside the same run without the tool
    c = cell("runs")
    try:
        probe = lambda exe, mode: [exe] + col.tj_args + [ctx.probe_tj, str(mode), "8"]
        plain = median_wall(c, probe(ctx.tinyjit["plain"], 12), workload=True)
        rows.append(("tinyjit probe, mode 12 (malloc), no tool", "whole run", plain,
                     "median of %d runs: what the two rows below add to" % REPEATS))
        runs = [("AddressSanitizer use-after-free report (tinyjit-asan)",
                 probe(ctx.tinyjit["asan"], 11), c.env({"ASAN_OPTIONS": ASAN_OPTIONS}), (1,),
                 "three stacks: the access by _Unwind_Backtrace, allocation and free by frame pointers"),
                ("heaptrack (every allocation's stack by unw_backtrace)",
                 ["heaptrack"] + probe(ctx.tinyjit["plain"], 12), None, (0,),
                 "recording only; heaptrack_print's analysis not included")]
        for label, cmd, env, ok_rc, note in runs:
            try:
                rows.append((label, "whole run", median_wall(c, cmd, env=env, ok_rc=ok_rc, workload=True),
                             "median of %d runs; %s" % (REPEATS, note)))
            except (RuntimeError, mxrun.Timeout, OSError) as e:
                rows.append((label, "whole run", None, str(e)[:120]))
    finally:
        # the runs under heaptrack were its children: their pids name its files
        for f in os.listdir(c.dir):
            m = re.match(r"heaptrack\..*\.(\d+)\.(zst|gz)$", f)
            if m:
                c.pids.add(int(m.group(1)))
        c.cleanup()

    # the debuggers' every-instruction runs, per position
    for uid in ("dwfl-jit", "gdb", "lldb"):
        unwinder = next(u for u in mxsteps.UNWINDERS if u[0] == uid)
        c = cell("steps-" + uid)
        try:
            times = []
            for _ in range(3):
                t0 = time.monotonic()
                r = mxsteps.run_one(ctx, col, unwinder, c)
                times.append((time.monotonic() - t0) / max(r["total"], 1))
            rows.append(("%s, every instruction" % unwinder[1], "per position", statistics.median(times) * 1e6,
                         "median of 3 runs of %d positions: one single-step and one whole-stack unwind"
                         % r["total"]))
        except (RuntimeError, mxrun.Timeout, mxrun.Skip, OSError) as e:
            rows.append(("%s, every instruction" % unwinder[1], "per position", None, str(e)[:120]))
        finally:
            c.cleanup()

    # valgrind's own unwinder, asked through vgdb
    c = cell("valgrind")
    try:
        prefix = c.path("vgdb")
        vg = ["valgrind", "--tool=none", "-q", "--vgdb=yes", "--vgdb-prefix=" + prefix, "--num-callers=500"]
        proc, pid, exe, expect = start_waiting(ctx, col, c, prefix=vg)
        rows.append(("valgrind (vgdb v.info scheduler)", "whole tool, live",
                     median_wall(c, ["vgdb", "--vgdb-prefix=" + prefix, "--pid=%d" % pid, "v.info",
                                     "scheduler"]), "median of %d runs; the process runs under valgrind"
                     % REPEATS))
        c.stop(proc)
    except (RuntimeError, mxrun.Timeout, mxrun.Skip, OSError) as e:
        rows.append(("valgrind (vgdb v.info scheduler)", "whole tool, live", None, str(e)[:120]))
    finally:
        c.cleanup()
    mxrun.kill_all()

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    L = ["## BENCH: what each unwinder costs on the probe's stack", "",
         "`make matrix-bench` (`tests/matrix/matrix.py --bench tests/matrix/BENCH.md`), all in one run on "
         "%s (%d CPUs). Workload: `tinyjit --frames=fp --cfi=region --publish=all "
         "tinyjit/examples/probe.tj MODE 8`: %d frames from the probe to `main` (10 of them JIT "
         "frames, the rest C and the shim; the unwinders also report the frames below `main`)."
         % (cpu, os.cpu_count() or 0, frames), "",
         "| unwinder | what is timed | median | notes |", "|---|---|---:|---|"]
    for label, kind, us, note in rows:
        L.append("| %s | %s | %s | %s |" % (label, kind, fmt_us(us) if us is not None else "–", note))
    L += ["", "In-process numbers are one unwind of the whole stack inside the probe "
          "(`TJ_PROBE_REPEAT=%d`); *attached* is one unwind by a library already attached with modules "
          "and images read; *whole tool* is the command as typed, start to exit; *whole run* the "
          "workload's run under the tool; *per position* a debugger's every-instruction run divided "
          "by its positions. Not listed: perf and bpftrace, which unwind in the kernel at each sample "
          "(perf `--call-graph dwarf` at `perf script` time), and gperftools' profiler, whose "
          "unwinds happen in its SIGPROF handler during a fixed-length spin: costs not comparable "
          "per stack; nor the C++ exception, whose throw ends the probe." % IN_PROCESS_REPEAT, ""]
    with open(path, "w") as f:
        f.write("\n".join(L))
    print("\n".join(L))
    return 0
