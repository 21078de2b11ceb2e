#!/bin/sh
# SPDX-License-Identifier: MIT
# record_modes.sh BUILD - what sampling costs the target, jitstack record's
# two modes side by side with perf; results go to docs/BENCHMARKS.md and
# jitstack/BENCH.md by hand.
#
#   1. target slowdown at 100 Hz and 1 kHz: tinyjit running progs/deep.tj
#      (CPU-bound at the bottom of a 64-frame mixed C/JIT stack, about 2 s
#      of work) alone, under `jitstack record --mode perf`, under
#      `jitstack record --mode ptrace` and under
#      `perf record --call-graph dwarf -F HZ` (when perf is installed), the
#      four runs of a round back to back, the target on CPU 1 and the
#      sampler on CPU 0 (taskset); each sampled run against the round's
#      unsampled one, the median of those ratios is the figure;
#   2. jitstack's own CPU time per sample (getrusage) and the time to unwind
#      and name one 64-frame sample, perf mode at 1 kHz for 5 s;
#   3. samples lost at 1 kHz (PERF_RECORD_LOST) in that run.
# Knob: JS_BENCH_MODE_RUNS (rounds per rate, default 5).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
export JS=$BUILD/jitstack/jitstack TJ=$BUILD/tinyjit/tinyjit ROOT RUNS=${JS_BENCH_MODE_RUNS:-5}
for f in "$JS" "$TJ"; do [ -x "$f" ] || { echo "record_modes.sh: $f is missing (make jitstack tinyjit)"; exit 2; }; done
W=$(mktemp -d)
touch "$W/.start"
trap 'sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
cd "$W" || exit 1

python3 - <<'PY'
import os, re, shutil, statistics as st, subprocess as sp, time

JS, TJ, ROOT, RUNS = os.environ["JS"], os.environ["TJ"], os.environ["ROOT"], int(os.environ["RUNS"])
DEEP = os.path.join(ROOT, "jitstack/tests/progs/deep.tj")
DEPTH = "15"  # 64 frames (deep.tj's header)
pin_t = ["taskset", "-c", "1"] if shutil.which("taskset") and os.cpu_count() > 1 else []
pin_s = ["taskset", "-c", "0"] if pin_t else []
perf = shutil.which("perf")
if perf and sp.run([perf, "record", "-o", "/dev/null", "-e", "cpu-clock", "true"], stdout=sp.DEVNULL,
                   stderr=sp.DEVNULL).returncode:
    perf = None
print("machine: %d CPUs, load %s; %s" % (os.cpu_count(), open("/proc/loadavg").read().split()[0],
      "target on CPU 1, sampler on CPU 0" if pin_t else "no pinning"))

def target(n):
    return sp.Popen(pin_t + [TJ, "--frames=fp", "--cfi=region", DEEP, DEPTH, str(n)], stdout=sp.DEVNULL)

def timed_alone(n):
    t0 = time.perf_counter()
    q = target(n)
    _, _, ru = os.wait4(q.pid, 0)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime

# about 2 s of work
t, _ = timed_alone(20000000)
n = max(20000000, int(20000000 * 2.0 / t))

def sampler(kind, pid, hz):
    if kind == "perf-mode":
        cmd = [JS, "record", "--mode", "perf", "-p", str(pid), "-F", str(hz), "-o", "/dev/null"]
    elif kind == "ptrace-mode":
        cmd = [JS, "record", "--mode", "ptrace", "-p", str(pid), "-F", str(hz), "-o", "/dev/null"]
    else:
        cmd = [perf, "record", "-q", "--call-graph", "dwarf", "-e", "cpu-clock", "-F", str(hz), "-p", str(pid),
               "-o", "perf.data"]
    return sp.Popen(pin_s + cmd, stdout=sp.DEVNULL, stderr=sp.DEVNULL)

def run(kind, hz):
    t0 = time.perf_counter()
    q = target(n)
    s = sampler(kind, q.pid, hz) if kind != "alone" else None
    _, _, ru = os.wait4(q.pid, 0)
    wall = time.perf_counter() - t0
    if s:
        try:
            s.wait(timeout=30)
        except sp.TimeoutExpired:
            s.kill()
    return wall, ru.ru_utime + ru.ru_stime

kinds = ["alone", "perf-mode", "ptrace-mode"] + (["perf-record-dwarf"] if perf else [])
names = {"perf-mode": "`jitstack record --mode perf`", "ptrace-mode": "`jitstack record --mode ptrace`",
         "perf-record-dwarf": "`perf record --call-graph dwarf -e cpu-clock`"}
print("\n## 1. target slowdown (deep.tj, %d rounds, 64 frames, %d iterations)" % (RUNS, n))
if not perf:
    print("(perf is not installed or may not record: its column is left out)")
for hz in (100, 1000):
    wall = {k: [] for k in kinds}
    cpu = {k: [] for k in kinds}
    for _ in range(RUNS):
        for k in kinds:
            w, c = run(k, hz)
            wall[k].append(w), cpu[k].append(c)
    print("\n| %d Hz | wall: median of ratios to the round's unsampled run | wall min vs min | target CPU: median of ratios |" % hz)
    print("|---|---:|---:|---:|")
    print("| alone | %.3f s (median) | %.3f s | %.3f s (median) |" % (st.median(wall["alone"]), min(wall["alone"]),
          st.median(cpu["alone"])))
    for k in kinds[1:]:
        rw = [a / b for a, b in zip(wall[k], wall["alone"])]
        rc = [a / b for a, b in zip(cpu[k], cpu["alone"])]
        print("| %s | %+.2f %% | %+.2f %% | %+.2f %% |" % (names[k], 100 * (st.median(rw) - 1),
              100 * (min(wall[k]) / min(wall["alone"]) - 1), 100 * (st.median(rc) - 1)))

print("\n## 2-3. jitstack's own cost per sample and lost samples (perf mode, 1 kHz, 5 s, 64 frames)")
q = target(100 * n)
time.sleep(0.3)
r = sp.run(pin_s + [JS, "record", "--mode", "perf", "-p", str(q.pid), "-F", "1000", "-d", "5", "--stats",
                    "-o", "/dev/null"], stdout=sp.DEVNULL, stderr=sp.PIPE, text=True)
q.kill()
for l in r.stderr.splitlines():
    if "stats:" in l:
        print("- " + l.split("stats: ")[1])
m = re.search(r"(\d+) samples, (\d+) lost", r.stderr)
if m:
    got, lost = int(m.group(1)), int(m.group(2))
    print("lost: %d of %d (%.3f %%)" % (lost, got + lost, 100.0 * lost / max(1, got + lost)))
PY
