#!/bin/sh
# SPDX-License-Identifier: MIT
# php_desc.sh BUILD - a cold `jitstack -p` against `eu-stack -p` on PHP 8.2's
# opcache tracing JIT (jitstack/tests/progs/hot.php, its trace registered
# through the GDB JIT interface), both attaching to the same process and
# dumping it whole, interleaved (the order flips every run), a new process
# of each tool per run.  "Cold": jitstack keeps no cache between runs, so
# every run finds the descriptor, reads the list and rewrites the images
# anew; the files of the target's modules are in the page cache, for both
# tools alike (a first run warms it and is not counted).
# Reported per tool: wall time median, p10 and p90 (each run timed from
# fork to exit), CPU time median (user + system), and peak RSS median
# (each tool run again under /usr/bin/time -f %M, interleaved likewise, so
# that the launcher's memory is not counted: a child's peak RSS includes
# what its parent held before exec), and one run's --stats line on the
# descriptor search.
# Knobs: JS_BENCH_RUNS (timed runs per tool, default 30);
# JS_BENCH_BASELINE=PATH a second jitstack binary (an older build) run
# beside them in the same interleaving.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export JS=$BUILD/jitstack/jitstack ROOT RUNS=${JS_BENCH_RUNS:-30} BASELINE=${JS_BENCH_BASELINE:-}
[ -x "$JS" ] || { echo "php_desc.sh: $JS is missing (make jitstack)"; exit 2; }
for c in eu-stack php8.2 /usr/bin/time; do
	command -v "$c" >/dev/null || { echo "php_desc.sh: $c is not installed"; exit 2; }
done
php8.2 -d opcache.enable_cli=1 -r 'exit(function_exists("opcache_get_status") ? 0 : 1);' 2>/dev/null ||
	{ echo "php_desc.sh: PHP's opcache extension cannot be loaded (php8.2-opcache)"; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

python3 - <<'PY'
import os, re, statistics as st, subprocess as sp, time

JS, ROOT, RUNS, BASELINE = os.environ["JS"], os.environ["ROOT"], int(os.environ["RUNS"]), os.environ["BASELINE"]
TRACE = r"^#\d+ +0x[0-9a-f]+ TRACE-\d+\$"

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

def timed(cmd):
    t = time.perf_counter()
    p = sp.Popen(cmd, stdout=sp.PIPE, stderr=sp.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, out

def peak_rss_kb(cmd):
    r = sp.run(["/usr/bin/time", "-f", "%M", "-o", "rss"] + cmd, stdout=sp.DEVNULL, stderr=sp.DEVNULL)
    return int(open("rss").read().split()[-1])

php = sp.Popen(["php8.2", "-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d",
                "opcache.jit_buffer_size=64M", "-d", "opcache.jit_debug=0x100",
                os.path.join(ROOT, "jitstack/tests/progs/hot.php")], stdout=sp.PIPE, text=True)
try:
    if "ready" not in php.stdout.readline():
        raise SystemExit("php_desc.sh: php did not start")
    pid = str(php.pid)
    for _ in range(60):  # until the trace is compiled and registered
        if re.search(TRACE, timed([JS, "-p", pid])[2], re.M):
            break
        time.sleep(0.5)
    else:
        raise SystemExit("php_desc.sh: the trace was never named")
    tools = {"jitstack": [JS, "-p", pid], "eu-stack": ["eu-stack", "-p", pid]}
    if BASELINE:
        tools["baseline jitstack"] = [BASELINE, "-p", pid]
    names = list(tools)
    wall = {n: [] for n in names}; cpu = {n: [] for n in names}; rss = {n: [] for n in names}
    named = {n: 0 for n in names}
    for n in names:  # warm the page cache; not counted
        timed(tools[n])
    load = open("/proc/loadavg").read().split()[0]
    for i in range(RUNS):
        order = names if i % 2 == 0 else names[::-1]
        for n in order:
            w, c, out = timed(tools[n])
            wall[n].append(w); cpu[n].append(c)
            named[n] = len(re.findall(TRACE, out, re.M)) if n != "eu-stack" else \
                sum(1 for l in out.splitlines() if re.match(r"#\d+\s+0x[0-9a-f]+\s+TRACE-", l))
        for n in order:
            rss[n].append(peak_rss_kb(tools[n]))
    stats = sp.run([JS, "-p", pid, "--stats"], stdout=sp.DEVNULL, stderr=sp.PIPE, text=True).stderr
    load_end = open("/proc/loadavg").read().split()[0]
finally:
    php.kill(); php.wait()

print("PHP 8.2 opcache tracing JIT, %d interleaved runs per tool; %d CPUs, load average %s at the start, %s at the end"
      % (RUNS, os.cpu_count(), load, load_end))
print()
print("| tool | wall median | p10 | p90 | CPU median | peak RSS median | JIT frames named |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n in names:
    print("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.1f MB | %d |" % (
        n, st.median(wall[n]) * 1e3, pct(wall[n], .1) * 1e3, pct(wall[n], .9) * 1e3,
        st.median(cpu[n]) * 1e3, st.median(rss[n]) / 1024, named[n]))
print()
me = st.median(wall["eu-stack"])
for n in names:
    if n != "eu-stack":
        print("%s / eu-stack: wall median %.2f×, p90 %.2f×, CPU median %.2f×" % (
            n, st.median(wall[n]) / me, pct(wall[n], .9) / pct(wall["eu-stack"], .9),
            st.median(cpu[n]) / st.median(cpu["eu-stack"])))
for l in stats.splitlines():
    if "descriptor search" in l:
        print(l)
PY
