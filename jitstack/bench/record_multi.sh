#!/bin/sh
# SPDX-License-Identifier: MIT
# record_multi.sh BUILD - jitstack record over several processes: its own
# CPU time per sample and the time to unwind and name one sample, for 1, 2
# and 4 targets (tinyjit running progs/deep.tj, CPU-bound at the bottom of
# a 64-frame mixed C/JIT stack), `record --mode perf -p PID,PID,... -F 1000
# -d 4 --stats`, the three sizes interleaved round by round; results go to
# docs/BENCHMARKS.md by hand.  Knob: JS_BENCH_MULTI_RUNS (rounds, default 3).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
export JS=$BUILD/jitstack/jitstack TJ=$BUILD/tinyjit/tinyjit ROOT RUNS=${JS_BENCH_MULTI_RUNS:-3}
for f in "$JS" "$TJ"; do [ -x "$f" ] || { echo "record_multi.sh: $f is missing (make jitstack tinyjit)"; exit 2; }; done
W=$(mktemp -d)
touch "$W/.start"
trap 'sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
cd "$W" || exit 1

python3 - <<'PY'
import os, re, statistics as st, subprocess as sp, time

JS, TJ, ROOT, RUNS = os.environ["JS"], os.environ["TJ"], os.environ["ROOT"], int(os.environ["RUNS"])
DEEP = os.path.join(ROOT, "jitstack/tests/progs/deep.tj")
SIZES = (1, 2, 4)
print("machine: %d CPUs, load %s" % (os.cpu_count(), open("/proc/loadavg").read().split()[0]))

def one(n):
    targets = [sp.Popen([TJ, "--frames=fp", "--cfi=region", "--publish=gdb", DEEP, "15", "100000000000"],
                        stdout=sp.DEVNULL, stderr=sp.DEVNULL) for _ in range(n)]
    try:
        time.sleep(0.5)
        r = sp.run([JS, "record", "--mode", "perf", "-p", ",".join(str(t.pid) for t in targets),
                    "-F", "1000", "-d", "4", "--stats", "-o", "/dev/null"],
                   capture_output=True, text=True, timeout=120)
    finally:
        for t in targets:
            t.kill()
            t.wait()
    err = r.stderr
    if r.returncode:
        raise SystemExit("record exited %d: %s" % (r.returncode, err[-500:]))
    samples = int(re.search(r"(\d+) samples, (\d+) lost", err).group(1))
    lost = int(re.search(r"(\d+) samples, (\d+) lost", err).group(2))
    own = float(re.search(r"own CPU time [\d.]+ s over [\d.]+ s, ([\d.]+) us per sample", err).group(1))
    unwind = float(re.search(r"unwind and name one sample: median ([\d.]+) us", err).group(1))
    return samples, lost, own, unwind

res = {n: [] for n in SIZES}
for k in range(RUNS):
    for n in SIZES:
        res[n].append(one(n))
print("| processes | samples (%d runs) | own CPU per sample (median) | unwind and name one sample "
      "(median of the medians) | lost |" % RUNS)
print("|---|---|---:|---:|---:|")
for n in SIZES:
    rs = res[n]
    print("| %d | %s | %.1f µs | %.1f µs | %d |" % (n, ", ".join("{:,}".format(r[0]) for r in rs),
          st.median(r[2] for r in rs), st.median(r[3] for r in rs), sum(r[1] for r in rs)))
PY
