#!/bin/sh
# SPDX-License-Identifier: MIT
# python_cost.sh BUILD - what a Python-aware sample costs against a
# native-only one: `jitstack record --mode ptrace --idle -F 200 -d 2
# --stats` on Debian's python3 running jitstack/tests/progs/pyframes.py
# (two threads parked under 8 and 4 Python frames), with
# the Python frames and with --no-python, the two runs of a round back to
# back, RUNS rounds.  For each run: jitstack's own CPU time per sample
# (its user + system time over its samples), the median time a sample
# held its thread stopped and the median whole sample (stop, unwind, name,
# and the Python frames read and placed), from --stats; and the Python
# frames' own time per walk.  Prints, per column, the median over the
# rounds and the range.  Results go to docs/BENCHMARKS.md by hand.
# Knob: JS_BENCH_PY_RUNS (rounds, default 5).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export JS=$BUILD/jitstack/jitstack ROOT RUNS=${JS_BENCH_PY_RUNS:-5}
[ -x "$JS" ] || { echo "python_cost.sh: $JS is missing (make jitstack)"; exit 2; }
[ -x /usr/bin/python3 ] || { echo "python_cost.sh: /usr/bin/python3 is missing"; exit 2; }
python3 - <<'PY'
import os, re, statistics as st, subprocess as sp, time

JS, ROOT, RUNS = os.environ["JS"], os.environ["ROOT"], int(os.environ["RUNS"])
w = sp.Popen(["/usr/bin/python3", os.path.join(ROOT, "jitstack/tests/progs/pyframes.py"), "3"],
             stdout=sp.PIPE, text=True)
try:
    for _ in range(2):
        w.stdout.readline()  # "parked TID ROLE", a line per thread
    time.sleep(0.3)
    runs = {"python": [], "native": []}
    for r in range(RUNS):
        for name in ("native", "python") if r % 2 else ("python", "native"):
            cmd = [JS, "record", "-p", str(w.pid), "--mode", "ptrace", "--idle", "-F", "200", "-d", "2",
                   "-o", "/dev/null", "--stats"] + (["--no-python"] if name == "native" else [])
            t0 = os.times()
            p = sp.run(cmd, stderr=sp.PIPE, text=True)
            t1 = os.times()
            err = p.stderr
            n = int(re.search(r"(\d+) thread samples", err).group(1))
            cpu = (t1.children_user - t0.children_user + t1.children_system - t0.children_system) / n * 1e6
            stop = float(re.search(r"thread stopped .*?median ([\d.]+) us", err).group(1))
            whole = float(re.search(r"whole sample .*?median ([\d.]+) us", err).group(1))
            m = re.search(r"Python frames .*?: (\d+) walks, ([\d.]+) ms", err)
            walk = float(m.group(2)) * 1e3 / int(m.group(1)) if m else None
            runs[name].append((cpu, stop, whole, walk))
    def col(name, i):
        v = [x[i] for x in runs[name] if x[i] is not None]
        return "%.1f us (%.1f .. %.1f)" % (st.median(v), min(v), max(v)) if v else "-"
    print("| %d rounds | own CPU per sample | thread stopped (median) | whole sample (median) | Python frames per walk |" % RUNS)
    print("|---|---:|---:|---:|---:|")
    for name, what in (("native", "`--no-python`"), ("python", "with the Python frames")):
        print("| %s | %s | %s | %s | %s |" % (what, col(name, 0), col(name, 1), col(name, 2), col(name, 3)))
    ratio = [p[0] / q[0] for p, q in zip(runs["python"], runs["native"])]
    print("\nown CPU per sample, with the Python frames / without, a round each: median %.2fx (%.2f .. %.2f)" %
          (st.median(ratio), min(ratio), max(ratio)))
finally:
    w.kill()
    w.wait()
PY
