#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench.py BUILD [ROUNDS] - what the LuaJIT module costs (docs/BENCHMARKS.md,
"LuaJIT traces").
bench.py BUILD ROUNDS guest [CG_ROUNDS] - what its guest frames cost: the
module with them and without (JITUNWIND_LUA_GUEST_FRAMES=0); see guest().
ROUNDS 0: callgrind only; CG_ROUNDS 0: no callgrind.

For each of the tests' programs (integrations/luajit/tests/programs/*.lua):
  - the time each trace's publishing takes inside the module
    (jitunwind.stats(): ju_publish alone, and the whole trace-stop handler,
    names included), mean and worst, over the program's traces;
  - the program's run time without and with the module (and of an empty
    program: what loading the module costs), ROUNDS runs each
    (default 11), interleaved (without, with, without, ...) so that a
    machine shared with others disturbs both alike: median, and the spread
    as min..max.
Prints Markdown tables.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROGS = os.path.join(ROOT, "integrations", "luajit", "tests", "programs")
REPORT = ('local s = require("jitunwind").stats() '
          'io.stderr:write(string.format("stats %d %d %d %d %d %d %d\\n", s.publishes, s.publish_ns, '
          's.publish_ns_max, s.handler_ns, s.handler_ns_max, s.guest_publishes, s.inlines))')
# callgrind on the programs that run for less than a second natively:
# strings.lua (2.5 s) takes about 5 minutes under callgrind
CG_SKIP = ("strings.lua",)


def run(prog, module, env, tool=()):
    cmd = list(tool) + ["luajit"] + (["-l", "jitunwind"] if module else []) + ["-e", "dofile(%r)" % prog if prog else ""]
    if module and prog:
        cmd += ["-e", REPORT]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=PROGS, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr[-300:]))
    stats = None
    for line in p.stderr.splitlines():
        if line.startswith("stats "):
            stats = [int(x) for x in line.split()[1:]]
    return dt, stats


def spread(xs, fmt):
    """median (min..max) of xs, each formatted by fmt"""
    return "%s (%s..%s)" % (fmt % statistics.median(xs), fmt % min(xs), fmt % max(xs))


def callgrind_counts(path):
    """The run's instructions in all, and inclusive in the module's publish
    (l_publish: the frame read from the code, the guest frames converted,
    ju_publish) and in the library's ju_publish alone."""
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                       capture_output=True, text=True)
    # ju_publish(), jitunwind.h's macro, calls ju_publish_sz
    incl = {"ju_publish": 0, "ju_publish_sz": 0, "l_publish": 0}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:(\w+)(?: \[.*\])?$", line)
        if m and m.group(2) in incl:
            # the same function may be listed twice (with and without its
            # file): the counts agree
            incl[m.group(2)] = max(incl[m.group(2)], int(m.group(1).replace(",", "")))
    return total, incl["l_publish"], max(incl["ju_publish"], incl["ju_publish_sz"])


def guest(env, rounds, cg_rounds):
    """The module with guest frames (on) and without (off), ROUNDS runs of
    each program in each mode, interleaved (on, off, on, ...): the time
    ju_publish and the whole handler take per trace (jitunwind.stats() of
    each run: its sum over the run's traces / its traces) and the run time,
    median and min..max over the runs.  Then CG_ROUNDS runs of each mode
    under callgrind, interleaved: instructions per trace in ju_publish and in
    the module's l_publish, and of the whole run (which holds the handler's
    Lua half, the snapshots read and matched).  A program's trace count can
    move between runs (LuaJIT randomizes its penalties for aborted traces),
    hence per trace."""
    progs = sorted(p for p in os.listdir(PROGS) if p.endswith(".lua"))
    modes = (("on", "1"), ("off", "0"))
    envs = {m: dict(env, JITUNWIND_LUA_GUEST_FRAMES=v) for m, v in modes}
    rows = []
    for prog in progs if rounds > 0 else ():
        r = {m: {"t": [], "pub": [], "hnd": [], "n": [], "gp": [], "inl": []} for m, _ in modes}
        run(prog, True, envs["on"])  # warm the page cache
        for _ in range(rounds):
            for m, _ in modes:
                dt, st = run(prog, True, envs[m])
                n = st[0]
                r[m]["t"].append(dt * 1e3)
                r[m]["pub"].append(st[1] / n / 1e3)
                r[m]["hnd"].append(st[3] / n / 1e3)
                r[m]["n"].append(n)
                r[m]["gp"].append(st[5])
                r[m]["inl"].append(st[6])
        rows.append((prog, r))
    if rows:
        print_guest_times(rows, rounds)
    if cg_rounds > 0:
        cg_guest(progs, modes, envs, cg_rounds)


def print_guest_times(rows, rounds):
    print("Guest frames on and off, %d interleaved runs of each (median, min..max):\n" % rounds)
    print("| program | traces | with guest frames | guest frames | ju_publish per trace, on | off "
          "| handler per trace, on | off | run time, on | off |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for prog, r in rows:
        on, off = r["on"], r["off"]
        print("| %s | %s | %s | %s | %s µs | %s µs | %s µs | %s µs | %s ms | %s ms |" % (
            prog, spread(on["n"], "%d"), spread(on["gp"], "%d"), spread(on["inl"], "%d"),
            spread(on["pub"], "%.1f"), spread(off["pub"], "%.1f"),
            spread(on["hnd"], "%.1f"), spread(off["hnd"], "%.1f"),
            spread(on["t"], "%.1f"), spread(off["t"], "%.1f")))


def cg_guest(progs, modes, envs, cg_rounds):
    cg = []
    with tempfile.TemporaryDirectory() as tmp:
        for prog in progs:
            if prog in CG_SKIP:
                continue
            r = {m: {"n": [], "gp": [], "lp": [], "jp": [], "tot": []} for m, _ in modes}
            for i in range(cg_rounds):
                for m, _ in modes:
                    out = os.path.join(tmp, "cg.%s.%d" % (m, i))
                    _, st = run(prog, True, envs[m], ("valgrind", "--tool=callgrind", "-q",
                                                      "--callgrind-out-file=" + out))
                    tot, lp, jp = callgrind_counts(out)
                    n = st[0]
                    r[m]["n"].append(n)
                    r[m]["gp"].append(st[5])
                    r[m]["lp"].append(lp / n)
                    r[m]["jp"].append(jp / n)
                    r[m]["tot"].append(tot / 1e6)
            cg.append((prog, r))
    print("\nInstructions (callgrind), %d interleaved runs of each (median, min..max):\n" % cg_rounds)
    print("| program | traces, on | with guest frames | traces, off | ju_publish per trace, on | off "
          "| l_publish per trace, on | off | whole run (M), on | off | (on - off) / traces |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for prog, r in cg:
        on, off = r["on"], r["off"]
        extra = (statistics.median(on["tot"]) - statistics.median(off["tot"])) * 1e6 / statistics.median(on["n"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            prog, spread(on["n"], "%d"), spread(on["gp"], "%d"), spread(off["n"], "%d"),
            spread(on["jp"], "%.0f"), spread(off["jp"], "%.0f"),
            spread(on["lp"], "%.0f"), spread(off["lp"], "%.0f"),
            spread(on["tot"], "%.2f"), spread(off["tot"], "%.2f"), "{:,.0f}".format(extra)))
    print("\nCallgrind: not run on %s (minutes under callgrind)." % ", ".join(CG_SKIP))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    env = dict(os.environ, LUA_CPATH=os.path.join(build, "luajit", "?.so") + ";;")
    env.pop("JITUNWIND", None)
    env.pop("JITUNWIND_LUA_GUEST_FRAMES", None)
    if len(sys.argv) > 3 and sys.argv[3] == "guest":
        guest(env, rounds, int(sys.argv[4]) if len(sys.argv) > 4 else 5)
        return
    progs = [None] + sorted(p for p in os.listdir(PROGS) if p.endswith(".lua"))
    rows, costs = [], []
    for prog in progs:
        without, with_ = [], []
        st = None
        run(prog, False, env)  # warm the page cache
        for _ in range(rounds):
            without.append(run(prog, False, env)[0])
            dt, st = run(prog, True, env)
            with_.append(dt)
        if prog:
            n, pub, pub_max, hnd, hnd_max = st[:5]
            costs.append((prog, n, pub / n / 1e3, pub_max / 1e3, hnd / n / 1e3, hnd_max / 1e3))
        m0, m1 = statistics.median(without), statistics.median(with_)
        rows.append((prog or "(empty: loading only)", m0, min(without), max(without), m1, min(with_), max(with_), (m1 - m0) / m0 * 100))
    print("Publishing, per trace (the last run's jitunwind.stats()):\n")
    print("| program | traces | ju_publish mean | ju_publish max | handler per trace | handler max |")
    print("|---|---:|---:|---:|---:|---:|")
    for prog, n, pm, px, hm, hx in costs:
        print("| %s | %d | %.1f µs | %.1f µs | %.1f µs | %.1f µs |" % (prog, n, pm, px, hm, hx))
    print("\nRun time, %d interleaved runs each (median, min..max):\n" % rounds)
    print("| program | without the module | with the module | difference of medians |")
    print("|---|---:|---:|---:|")
    for prog, m0, lo0, hi0, m1, lo1, hi1, d in rows:
        print("| %s | %.1f ms (%.1f..%.1f) | %.1f ms (%.1f..%.1f) | %+.1f%% |" % (
            prog, m0 * 1e3, lo0 * 1e3, hi0 * 1e3, m1 * 1e3, lo1 * 1e3, hi1 * 1e3, d))


if __name__ == "__main__":
    main()
