#!/bin/sh
# SPDX-License-Identifier: MIT
# top_cost.sh BUILD - what `jitstack top` costs the target, side by side
# with `jitstack record` at the same rate; results go to docs/BENCHMARKS.md
# and jitstack/BENCH.md by hand.
#
# tinyjit runs progs/deep.tj (CPU-bound at the bottom of a 64-frame mixed
# C/JIT stack, about 2 s of work) on CPU 1: alone, under
# `jitstack record --mode perf -o /dev/null`, and under `jitstack top
# --mode perf` on its full screen (in a detached tmux window of 120x40, so
# it draws once a second as it would for a person), the sampler on CPU 0;
# the three runs of a round back to back, rounds interleaved.  Each sampled
# run is divided by the round's unsampled one: the median of those ratios
# is the figure, their range the spread.  Both samplers run with --stats,
# which gives their own CPU time.
# Knob: JS_BENCH_TOP_RUNS (rounds per rate, default 5).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
export JS=$BUILD/jitstack/jitstack TJ=$BUILD/tinyjit/tinyjit ROOT RUNS=${JS_BENCH_TOP_RUNS:-5}
for f in "$JS" "$TJ"; do [ -x "$f" ] || { echo "top_cost.sh: $f is missing (make jitstack tinyjit)"; exit 2; }; done
command -v tmux > /dev/null || { echo "top_cost.sh: tmux is not installed (scripts/install-deps.sh test)"; exit 2; }
W=$(mktemp -d)
export W
touch "$W/.start"
trap 'tmux -S "$W/tmux.sock" kill-server 2>/dev/null; sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
cd "$W" || exit 1

python3 - <<'PY'
import os, re, shutil, statistics as st, subprocess as sp, time

JS, TJ, ROOT, RUNS, W = (os.environ[k] for k in ("JS", "TJ", "ROOT", "RUNS", "W"))
RUNS = int(RUNS)
DEEP = os.path.join(ROOT, "jitstack/tests/progs/deep.tj")
DEPTH = "15"  # 64 frames (deep.tj's header)
pin_t = ["taskset", "-c", "1"] if shutil.which("taskset") and os.cpu_count() > 1 else []
pin_s = ["taskset", "-c", "0"] if pin_t else []
TM = ["tmux", "-S", os.path.join(W, "tmux.sock"), "-f", "/dev/null"]
print("machine: %d CPUs, load %s; %s" % (os.cpu_count(), open("/proc/loadavg").read().split()[0],
      "target on CPU 1, sampler on CPU 0" if pin_t else "no pinning"))

def target(n):
    return sp.Popen(pin_t + [TJ, "--frames=fp", "--cfi=region", DEEP, DEPTH, str(n)], stdout=sp.DEVNULL)

def timed_alone(n):
    t0 = time.perf_counter()
    q = target(n)
    _, _, ru = os.wait4(q.pid, 0)
    return time.perf_counter() - t0

n = max(20000000, int(20000000 * 2.0 / timed_alone(20000000)))  # about 2 s of work

def own_cpu(path):
    m = re.search(r"own CPU time ([0-9.]+) s", open(path).read()) if os.path.exists(path) else None
    return float(m.group(1)) if m else None

def run(kind, hz, i):
    err = os.path.join(W, "%s-%d-%d.err" % (kind, hz, i))
    t0 = time.perf_counter()
    q = target(n)
    s = None
    if kind == "record":
        s = sp.Popen(pin_s + [JS, "record", "--mode", "perf", "-p", str(q.pid), "-F", str(hz), "--stats",
                              "-o", "/dev/null"], stdout=sp.DEVNULL, stderr=open(err, "w"))
    elif kind == "top":
        # top on a terminal: its full screen, redrawn every second
        cmd = " ".join(pin_s + [JS, "top", "--mode", "perf", "-p", str(q.pid), "-F", str(hz), "--stats",
                                "2>" + err])
        sp.run(TM + ["new-session", "-d", "-s", "top%d" % i, "-x", "120", "-y", "40", cmd + "; sleep 1"],
               check=True)
    _, _, ru = os.wait4(q.pid, 0)
    wall = time.perf_counter() - t0
    if s:
        s.wait(timeout=30)
    if kind == "top":  # top ends when its process exits: wait for its --stats
        for _ in range(300):
            if own_cpu(err) is not None:
                break
            time.sleep(0.1)
    return wall, ru.ru_utime + ru.ru_stime, own_cpu(err) if kind != "alone" else None

kinds = ["alone", "record", "top"]
names = {"record": "`jitstack record --mode perf`", "top": "`jitstack top --mode perf` (full screen)"}
print("\ntarget: deep.tj, 64 frames, %d iterations; %d interleaved rounds per rate" % (n, RUNS))
for hz in (99, 1000):
    wall = {k: [] for k in kinds}
    cpu = {k: [] for k in kinds}
    own = {k: [] for k in kinds}
    for i in range(RUNS):
        for k in kinds:
            w, c, o = run(k, hz, i)
            wall[k].append(w), cpu[k].append(c)
            if o is not None:
                own[k].append(o)
    print("\n| %d Hz | wall: median of ratios (min .. max) | target CPU: median of ratios (min .. max) | sampler's own CPU (median) |" % hz)
    print("|---|---:|---:|---:|")
    print("| alone | %.3f s (median) | %.3f s (median) | |" % (st.median(wall["alone"]), st.median(cpu["alone"])))
    for k in kinds[1:]:
        rw = [a / b - 1 for a, b in zip(wall[k], wall["alone"])]
        rc = [a / b - 1 for a, b in zip(cpu[k], cpu["alone"])]
        print("| %s | %+.2f %% (%+.2f .. %+.2f) | %+.2f %% (%+.2f .. %+.2f) | %s |" % (
              names[k], 100 * st.median(rw), 100 * min(rw), 100 * max(rw),
              100 * st.median(rc), 100 * min(rc), 100 * max(rc),
              "%.3f s" % st.median(own[k]) if own[k] else "?"))
PY
