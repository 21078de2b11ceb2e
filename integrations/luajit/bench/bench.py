#!/usr/bin/env python3
"""bench.py BUILD [ROUNDS] - what the LuaJIT module costs (docs/BENCHMARKS.md,
"LuaJIT traces").

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
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROGS = os.path.join(ROOT, "integrations", "luajit", "tests", "programs")
REPORT = ('local s = require("jitunwind").stats() '
          'io.stderr:write(string.format("stats %d %d %d %d %d\\n", s.publishes, s.publish_ns, '
          's.publish_ns_max, s.handler_ns, s.handler_ns_max))')


def run(prog, module, env):
    cmd = ["luajit"] + (["-l", "jitunwind"] if module else []) + ["-e", "dofile(%r)" % prog if prog else ""]
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


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    env = dict(os.environ, LUA_CPATH=os.path.join(build, "luajit", "?.so") + ";;")
    env.pop("JITUNWIND", None)
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
            n, pub, pub_max, hnd, hnd_max = st
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
