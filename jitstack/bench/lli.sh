#!/bin/sh
# SPDX-License-Identifier: MIT
# lli.sh BUILD - a cold `jitstack -p` against `eu-stack -p` on LLVM's own
# JITs: lli-19 running jitstack/tests/rec.c from clang-19 -g IR (leaf
# spinning under recurse x 6 under main) with -jit-kind=mcjit, orc and
# orc-lazy.  Each tool attaches and dumps the whole process, as typed, the
# two interleaved on the same target so load hits them alike; medians and
# their ratio.  Knob: LLI_BENCH_RUNS (runs per tool and kind, default 20).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export JS=$BUILD/jitstack/jitstack RUNS=${LLI_BENCH_RUNS:-20}
[ -x "$JS" ] || { echo "lli.sh: $JS is missing (make jitstack)"; exit 2; }
for t in lli-19 clang-19 eu-stack; do
	command -v $t > /dev/null 2>&1 || { echo "lli.sh: $t is not installed"; exit 2; }
done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
clang-19 -g -O0 -S -emit-llvm -o rec.ll "$ROOT/jitstack/tests/rec.c" || exit 1

python3 - <<'PY'
import os, re, statistics as st, subprocess as sp, time

JS, RUNS = os.environ["JS"], int(os.environ["RUNS"])

def timed(cmd):
    t = time.perf_counter()
    r = sp.run(cmd, stdout=sp.PIPE, stderr=sp.PIPE, text=True)
    return time.perf_counter() - t, r

def ms(v):
    return "%.2f ms" % (v * 1e3)

print("machine: %d CPUs, load average %s; %d runs per tool and kind"
      % (os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[0:3]), RUNS))
print("| lli-19 -jit-kind | frames, all threads (JIT ones named by jitstack) | `jitstack -p` median | `eu-stack -p` median | jitstack / eu-stack |")
print("|---|---:|---:|---:|---:|")
for kind in ("mcjit", "orc", "orc-lazy"):
    p = sp.Popen(["lli-19", "-jit-kind=" + kind, "rec.ll"], stdout=sp.PIPE, stderr=sp.DEVNULL, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("ready"), line
        pid = str(p.pid)
        _, r = timed([JS, "-p", pid])
        frames = len(re.findall(r"^#", r.stdout, re.M))
        jit = len(re.findall(r"^#.*\(\[jit .* at .*rec\.c:\d+$", r.stdout, re.M))
        js, eu = [], []
        for _ in range(RUNS):
            js.append(timed([JS, "-p", pid])[0])
            eu.append(timed(["eu-stack", "-p", pid])[0])
        print("| %s | %d (%d, at their lines) | %s | %s | %.2f× |"
              % (kind, frames, jit, ms(st.median(js)), ms(st.median(eu)), st.median(js) / st.median(eu)))
    finally:
        p.kill()
        p.wait()
PY
