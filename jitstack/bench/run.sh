#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILD - jitstack's benchmarks (make bench-jitstack); results go to
# jitstack/BENCH.md by hand.
#
#   1. a cold `jitstack -p` (attach + full dump, a new process each time) vs
#      `eu-stack -p` vs `gdb -batch -ex bt -p`, side by side on the same
#      process: tinyjit's probe, whose main thread has a 66-frame mixed
#      C/JIT stack (probe.tj at depth 14: 16 JIT frames);
#   2. warm sample latency of `jitstack record` on that stack and on a
#      CPU-bound JIT workload (progs/hot.tj), and the cost of the ptrace
#      round trip alone (ptrace_cost.c);
#   3. the slowdown of that workload while `jitstack record -F 100` samples
#      it, against runs without.
# Sections 2 and 3 measure `record --mode ptrace`; record_modes.sh sets the
# default mode (perf events) beside it and beside perf.
# Knobs: JS_BENCH_RUNS (cold runs per tool, default 40), JS_BENCH_GDB_RUNS
# (default 5), JS_BENCH_SLOW_RUNS (pairs of runs, default 10).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
export JS=$BUILD/jitstack/jitstack TJ=$BUILD/tinyjit/tinyjit ROOT JSB=$BUILD/jitstack/bench
export RUNS=${JS_BENCH_RUNS:-40} GDB_RUNS=${JS_BENCH_GDB_RUNS:-5} SLOW_RUNS=${JS_BENCH_SLOW_RUNS:-10}
for f in "$JS" "$TJ"; do [ -x "$f" ] || { echo "run.sh: $f is missing (make jitstack tinyjit)"; exit 2; }; done
W=$(mktemp -d)
touch "$W/.start"
# the perf maps of the targets it ran go too
trap 'sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
export JITDUMPDIR=$W
cd "$W" || exit 1

python3 - <<'PY'
import os, re, shutil, statistics as st, subprocess as sp, time

JS, TJ, ROOT = os.environ["JS"], os.environ["TJ"], os.environ["ROOT"]
RUNS, GDB_RUNS, SLOW_RUNS = (int(os.environ[k]) for k in ("RUNS", "GDB_RUNS", "SLOW_RUNS"))
PROBE = os.path.join(ROOT, "tinyjit/examples/probe.tj")
HOT = os.path.join(ROOT, "jitstack/tests/progs/hot.tj")

def ms(v):
    return "%.2f ms" % (v * 1e3)

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

def start_probe(depth=14):
    env = dict(os.environ, TJ_PROBE_WAIT="600")
    p = sp.Popen([TJ, "--frames=fp", "--cfi=region", PROBE, "2", str(depth)], stdout=sp.PIPE,
                 stderr=sp.STDOUT, env=env, text=True)
    line = p.stdout.readline()
    assert "waiting" in line, line
    return p

def timed(cmd):
    t = time.perf_counter()
    r = sp.run(cmd, stdout=sp.PIPE, stderr=sp.PIPE, text=True)
    return time.perf_counter() - t, r

print("machine: %d CPUs, load average %s" % (os.cpu_count(), open("/proc/loadavg").read().split()[0:3]))
p = start_probe()
pid = str(p.pid)
_, r = timed([JS, "-p", pid])
frames = len(re.findall(r"^#", r.stdout, re.M))
jit = len(re.findall(r"^#.*\(\[jit", r.stdout, re.M))
_, e = timed(["eu-stack", "-p", pid])
eu_frames = len(re.findall(r"^#", e.stdout, re.M))
print("\n## 1. cold stack dump of tinyjit's probe (depth 14): main thread %d frames, %d of them JIT" % (frames, jit))
print("jitstack names all %d JIT frames; eu-stack shows the same %d frames, JIT ones as bare addresses" % (jit, eu_frames))
tools = {"jitstack -p": [JS, "-p", pid], "jitstack -p --json": [JS, "-p", pid, "--json"], "eu-stack -p": ["eu-stack", "-p", pid]}
res = {k: [] for k in tools}
for i in range(RUNS):  # interleaved, so load changes hit every tool alike
    for k, cmd in tools.items():
        res[k].append(timed(cmd)[0])
if shutil.which("gdb"):
    res["gdb -batch -ex bt -p"] = [timed(["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex", "bt", "-p", pid])[0]
                                   for _ in range(GDB_RUNS)]
print("| command | runs | median | p10 | p90 |")
print("|---|---:|---:|---:|---:|")
for k, v in res.items():
    print("| `%s PID` | %d | %s | %s | %s |" % (k, len(v), ms(st.median(v)), ms(pct(v, .1)), ms(pct(v, .9))))
js_med = st.median(res["jitstack -p"])
print("jitstack / eu-stack (medians): %.2fx" % (js_med / st.median(res["eu-stack -p"])))
if "gdb -batch -ex bt -p" in res:
    print("gdb / jitstack (medians): %.0fx faster" % (st.median(res["gdb -batch -ex bt -p"]) / js_med))
phases = [timed([JS, "-p", pid, "--stats"])[1].stderr for _ in range(10)]
print("phases of one dump (--stats, last of 10): " + phases[-1].strip().split("stats: ")[-1])

print("\n## 2. warm sample latency (jitstack record --stats)")
# A CPU-bound target and jitstack on CPUs of their own (when taskset exists):
# sharing one, the target waits for its time slice before it can stop.
pin_t = ["taskset", "-c", "1"] if shutil.which("taskset") and os.cpu_count() > 1 else []
pin_j = ["taskset", "-c", "0"] if pin_t else []
def record_stats(pid, extra, secs, pin=()):
    r = sp.run(list(pin) + [JS, "record", "--mode", "ptrace", "-p", str(pid), "-F", "100", "-d", str(secs), "--stats",
                            "-o", "/dev/null"]
               + extra, stdout=sp.PIPE, stderr=sp.PIPE, text=True)
    return [l.split("stats: ")[1] for l in r.stderr.splitlines() if "stats:" in l]
for l in record_stats(pid, ["--idle"], 5):
    print("- probe, 66 frames (blocked in usleep, --idle): " + l)
p.kill()
hot = sp.Popen(pin_t + [TJ, HOT, "1000000000"], stdout=sp.DEVNULL)
time.sleep(0.3)
where = " (target on CPU 1, jitstack on CPU 0)" if pin_t else ""
for l in record_stats(hot.pid, [], 5, pin_j):
    print("- hot.tj, CPU-bound%s: %s" % (where, l))
cost = os.path.join(os.environ["JSB"], "ptrace_cost")
if os.path.exists(cost):
    print("- the floor, ptrace alone on hot.tj (ptrace_cost%s): %s" % (where, sp.run(pin_j + [cost, str(hot.pid)],
          stdout=sp.PIPE, text=True).stdout.strip()))
hot.kill()

print("\n## 3. target slowdown while sampling at 100 Hz")
# Pairs of runs, alone then sampled, each the same work (about 2 s); the
# target pinned to one CPU and jitstack to the other when taskset exists, so
# a pair differs only by the sampling.  Other load on the machine moves both
# runs of a pair alike; the median of the pairs' ratios is the figure.
t, _ = timed(pin_t + [TJ, HOT, "20000"])
rounds = max(20000, int(20000 * 2.0 / t))
ratios, base, samp, cpu_base, cpu_samp, stopped = [], [], [], [], [], []
def run(sampled):
    t0 = time.perf_counter()
    q = sp.Popen(pin_t + [TJ, HOT, str(rounds)], stdout=sp.DEVNULL)
    rec = sp.Popen(pin_j + [JS, "record", "--mode", "ptrace", "-p", str(q.pid), "-F", "100", "--stats", "-o", "/dev/null"],
                   stderr=sp.PIPE, text=True) if sampled else None
    _, status, ru = os.wait4(q.pid, 0)
    wall = time.perf_counter() - t0
    if rec:
        err = rec.communicate()[1]
        m = re.search(r"thread stopped.*?median ([0-9.]+) us", err)
        if m:
            stopped.append(float(m.group(1)))
    return wall, ru.ru_utime + ru.ru_stime
for i in range(SLOW_RUNS):
    wb, cb = run(False)
    ws, cs = run(True)
    base.append(wb), samp.append(ws), cpu_base.append(cb), cpu_samp.append(cs)
    ratios.append(ws / wb)
print("hot.tj %d rounds, %d pairs%s" % (rounds, SLOW_RUNS, ", target on CPU 1, jitstack on CPU 0" if pin_t else ""))
print("| | wall median | wall min | target CPU median |")
print("|---|---:|---:|---:|")
print("| alone | %.3f s | %.3f s | %.3f s |" % (st.median(base), min(base), st.median(cpu_base)))
print("| sampled at 100 Hz | %.3f s | %.3f s | %.3f s |" % (st.median(samp), min(samp), st.median(cpu_samp)))
print("slowdown: %+.2f %% (median of the pairs' ratios), %+.2f %% (minimums)" % (
      100 * (st.median(ratios) - 1), 100 * (min(samp) / min(base) - 1)))
if stopped:
    print("time the target stands still: 100 samples/s x %.1f us (median stop) = %.2f %% of its run" % (
          st.median(stopped), 100 * 100 * st.median(stopped) / 1e6))
PY
