#!/bin/sh
# SPDX-License-Identifier: MIT
# realjits.sh BUILD - a cold `jitstack -p` against `eu-stack -p` on JITs that
# Debian packages, side by side on the same process, each a whole new
# process per run and the two tools interleaved so that load hits them
# alike.  Targets (each skipped, with the reason, when it cannot run):
#   node --perf-basic-prof   jitstack/tests/progs/recurse.js (perf map)
#   OpenJDK 17               jitstack/tests/progs/Rec.java, jcmd Compiler.perfmap
#   PHP 8.2 opcache JIT      jitstack/tests/progs/hot.php (GDB JIT interface)
# (lli-19's JIT kinds: jitstack/bench/lli.sh.)
# For each: median, p10, p90 of each tool, the ratio of the medians, and how
# many frames each names (jitstack's named JIT frames; eu-stack's frames with
# a name).  Knob: JS_BENCH_RUNS (runs per tool, default 30).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
export JS=$BUILD/jitstack/jitstack ROOT RUNS=${JS_BENCH_RUNS:-30}
[ -x "$JS" ] || { echo "realjits.sh: $JS is missing (make jitstack)"; exit 2; }
command -v eu-stack >/dev/null || { echo "realjits.sh: eu-stack is not installed (elfutils)"; exit 2; }
W=$(mktemp -d)
touch "$W/.start"
trap 'sh "$ROOT/scripts/reap-perf-maps.sh" "$W/.start"; rm -rf "$W"' EXIT
cd "$W" || exit 1

python3 - <<'PY'
import os, re, shutil, signal, statistics as st, subprocess as sp, time

JS, ROOT, RUNS = os.environ["JS"], os.environ["ROOT"], int(os.environ["RUNS"])
PROGS = os.path.join(ROOT, "jitstack/tests/progs")

def have(cmd):
    return shutil.which(cmd) is not None

def run(cmd, **kw):
    return sp.run(cmd, stdout=sp.PIPE, stderr=sp.PIPE, text=True, **kw)

def start(cmd, ready):
    p = sp.Popen(cmd, stdout=sp.PIPE, stderr=sp.STDOUT, text=True)
    line = p.stdout.readline()
    if ready not in line:
        p.kill(); p.wait()
        raise RuntimeError("%s did not start: %r" % (cmd[0], line))
    return p

def wait_named(pid, pattern, refresh=None, tries=60):
    """Until jitstack -p's text matches pattern (the JIT has compiled the workload)."""
    for _ in range(tries):
        if refresh:
            refresh()
        out = run([JS, "-p", str(pid)]).stdout
        if re.search(pattern, out, re.M):
            return out
        time.sleep(0.5)
    raise RuntimeError("the workload's JIT frames were never named (%s)" % pattern)

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

def bench(name, pid, jit_re, refresh=None):
    times = {"jitstack": [], "eu-stack": []}
    named = {}
    cmds = {"jitstack": [JS, "-p", str(pid)], "eu-stack": ["eu-stack", "-p", str(pid)]}
    for i in range(RUNS):
        if refresh:  # untimed: the JIT's own map of what it compiled since
            refresh()
        for tool in (("jitstack", "eu-stack") if i % 2 == 0 else ("eu-stack", "jitstack")):
            t = time.perf_counter()
            r = run(cmds[tool])
            times[tool].append(time.perf_counter() - t)
            if tool == "jitstack":
                named[tool] = len(re.findall(jit_re, r.stdout, re.M))
            else:
                named[tool] = sum(1 for l in r.stdout.splitlines()
                                  if re.match(r"#\d+\s+0x[0-9a-f]+\s+\S", l) and re.search(jit_re, l))
                named["eu-frames"] = sum(1 for l in r.stdout.splitlines() if re.match(r"#\d+", l))
    mj, me = st.median(times["jitstack"]), st.median(times["eu-stack"])
    print("| %s | %d | %.1f / %.1f / %.1f ms | %.1f / %.1f / %.1f ms | **%.2f×** | %d | %d of %d |" % (
        name, RUNS, mj * 1e3, pct(times["jitstack"], .1) * 1e3, pct(times["jitstack"], .9) * 1e3,
        me * 1e3, pct(times["eu-stack"], .1) * 1e3, pct(times["eu-stack"], .9) * 1e3, mj / me,
        named["jitstack"], named["eu-stack"], named["eu-frames"]), flush=True)

print("machine: %d CPUs, load average %s" % (os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[0:3])))
print()
print("| target | runs | jitstack -p median / p10 / p90 | eu-stack -p median / p10 / p90 | jitstack / eu-stack | JIT frames jitstack names | JIT frames eu-stack names (of all its frames) |")
print("|---|---:|---:|---:|---:|---:|---:|")

def target(name, cmd, ready, named_re, refresh=None, setup=None):
    p = None
    try:
        if setup:
            setup()
        p = start(cmd, ready)
        again = (lambda: refresh(p.pid)) if refresh else None
        wait_named(p.pid, named_re, again)
        bench(name, p.pid, named_re, again)
    except (RuntimeError, OSError, sp.CalledProcessError) as e:
        print("| %s | skipped: %s |" % (name, e), flush=True)
    finally:
        if p:
            p.kill(); p.wait()

# node: every JS frame is named only in the perf map
if have("node"):
    target("node %s --perf-basic-prof" % run(["node", "--version"]).stdout.strip(),
           ["node", "--perf-basic-prof", "--interpreted-frames-native-stack",
            os.path.join(PROGS, "recurse.js"), "8"], "ready",
           r"^#\d+ +0x[0-9a-f]+ (JS|LazyCompile|Function):[*~^+]?(recurseJs|spin) ")
else:
    print("| node | skipped: node is not installed |")

# OpenJDK: compiled methods named in the map jcmd writes
if have("java") and have("javac") and have("jcmd"):
    jre = r"^#\d+ +0x[0-9a-f]+ int Rec\.(leafJava|recurseJava)\("
    target("OpenJDK 17 (jcmd Compiler.perfmap)",
           ["java", "-Xmx64m", "-XX:+UseSerialGC", "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
            "-XX:CompileCommand=dontinline,Rec::*", "-cp", ".", "Rec", "8"], "ready", jre,
           refresh=lambda pid: run(["jcmd", str(pid), "Compiler.perfmap"]),
           setup=lambda: sp.run(["javac", "-d", ".", os.path.join(PROGS, "Rec.java")], check=True))
else:
    print("| OpenJDK | skipped: java, javac or jcmd is not installed |")

# PHP's opcache tracing JIT, registered through the GDB JIT interface
if have("php8.2"):
    target("PHP 8.2 opcache tracing JIT",
           ["php8.2", "-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d",
            "opcache.jit_buffer_size=64M", "-d", "opcache.jit_debug=0x100", os.path.join(PROGS, "hot.php")],
           "ready", r"^#\d+ +0x[0-9a-f]+ TRACE-\d+\$")
else:
    print("| PHP 8.2 | skipped: php8.2 is not installed |")

PY
