#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run.py BUILD - jitstack against eu-stack and gdb on JIT processes of
1k to 1M functions (make bench-scale; docs/BENCHMARKS.md, "jitstack at
scale").

Targets (built by make bench-scale-build):
  gdb      scalejit gdb N: N functions published through the library
           (default channels: GDB images of 64 blobs, the outside-reader
           extension)
  perfmap  scalejit perfmap N: the same code named by an N-line perf map
  jitdump  scalejit jitdump N: by an N-record jitdump
  orc      orcjit N: N single-function images under the process's own plain
           descriptor, registered as LLVM ORC registers them
  threads  scalejit threads N: N threads parked, no JIT ("JIT frame named"
           then says whether every thread's stack was printed)
  record   scalejit spin N: the main thread spins under function N/2 while
           `jitstack record -F SCALE_HZ (1000) -d SCALE_RECORD_S (4)` samples
           it, SCALE_RUNS times per N, the Ns interleaved; reports
           jitstack's own CPU time per sample (its --stats), and RSS;
           SCALE_RECORD_VIA=perfmap|jitdump publishes through that alone
Each parks its main thread under function N/2.  For each target every
tool runs SCALE_RUNS times (default 10), the tools interleaved, gdb
SCALE_GDB_RUNS times (default 3) and only while a run of it finishes
within SCALE_GDB_MAX_S (default 60) seconds.  Prints the median, p90 and
the largest peak RSS of each, and whether jitstack named the JIT frame.
Knobs: SCALE_NS="1000 10000 100000 1000000", SCALE_KINDS="gdb perfmap
jitdump orc" (threads and record when named).
"""
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
RUNS = int(os.environ.get("SCALE_RUNS", "10"))
GDB_RUNS = int(os.environ.get("SCALE_GDB_RUNS", "3"))
GDB_MAX = float(os.environ.get("SCALE_GDB_MAX_S", "60"))
NS = [int(x) for x in os.environ.get("SCALE_NS", "1000 10000 100000 1000000").split()]
KINDS = os.environ.get("SCALE_KINDS", "gdb perfmap jitdump orc").split()
JS = os.path.join(BUILD, "jitstack", "jitstack")
BENCH = os.path.join(BUILD, "bench")


def start(kind, n, cwd):
    cmd = [os.path.abspath(os.path.join(BENCH, "orcjit")), str(n)] if kind == "orc" else \
        [os.path.abspath(os.path.join(BENCH, "scalejit")), RECORD_VIA if kind == "record" else kind, str(n)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=cwd, text=True)
    line = p.stdout.readline().split()
    if len(line) < 3 or line[0] != "ready":
        p.kill()
        raise SystemExit("%s did not start" % cmd)
    return p, int(line[1])


def run(cmd, limit):
    """Wall seconds, peak RSS in KiB and output of one run (None on timeout).
    The RSS comes from /usr/bin/time, which forks from a small process: a
    child forked by Python would start with Python's peak."""
    fd, rssf = tempfile.mkstemp(prefix="scale-rss-")
    os.close(fd)
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rssf] + cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        os.unlink(rssf)
        return None, None, ""
    wall = time.perf_counter() - t0
    with open(rssf) as f:
        lines = f.read().split()
    os.unlink(rssf)
    return wall, int(lines[-1]) if lines else 0, out.decode(errors="replace")


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def ms(x):
    return "%.1f" % (x * 1000) if x is not None else "-"


HZ = int(os.environ.get("SCALE_HZ", "1000"))
RECORD_VIA = "spin" + ("-" + os.environ["SCALE_RECORD_VIA"] if os.environ.get("SCALE_RECORD_VIA") else "")
RECORD_S = float(os.environ.get("SCALE_RECORD_S", "4"))


def record_rows():
    """jitstack record on scalejit spin N for each N, runs interleaved."""
    procs = {}
    for n in NS:
        cwd = tempfile.mkdtemp(prefix="scale-")
        procs[n] = (start("record", n, cwd), cwd)
    us = {n: [] for n in NS}
    samples = {n: [] for n in NS}
    rss = {n: 0 for n in NS}
    for r in range(RUNS):
        for n in NS:
            (p, pid), _ = procs[n]
            wall, peak, out = run([JS, "record", "-p", str(pid), "-F", str(HZ), "-d", str(RECORD_S),
                                   "--stats", "-o", os.devnull], 600)
            m = re.search(r"own CPU time ([0-9.]+) s over ([0-9.]+) s, ([0-9.]+) us per sample", out)
            k = re.search(r"perf events \([^)]*\): ([0-9]+) samples", out) or \
                re.search(r"([0-9]+) thread samples", out)
            if m:
                us[n].append(float(m.group(3)))
                samples[n].append(int(k.group(1)) if k else 0)
                rss[n] = max(rss[n], peak)
    print("| N | CPU per sample median / p90 (us) | samples per run (median) | RSS (MB) | vs first N |")
    print("|---:|---:|---:|---:|---:|")
    base = statistics.median(us[NS[0]]) if us[NS[0]] else None
    for n in NS:
        (p, pid), cwd = procs[n]
        p.kill()
        p.wait()
        try:
            os.unlink("/tmp/perf-%d.map" % pid)
        except OSError:
            pass
        shutil.rmtree(cwd, ignore_errors=True)
        if not us[n]:
            print("| %d | - | - | - | - |" % n)
            continue
        med = statistics.median(us[n])
        print("| %d | %.1f / %.1f | %d | %.0f | %s |" % (n, med, pct(us[n], 0.9), statistics.median(samples[n]),
                                                     rss[n] / 1024, "%.2f×" % (med / base) if base else "-"),
              flush=True)


def main():
    if KINDS == ["record"]:
        record_rows()
        return
    for tool in ("eu-stack", "gdb"):
        if not shutil.which(tool):
            print("note: %s not found: its columns stay empty" % tool)
    print("| target | N | jitstack median / p90 (ms) | RSS (MB) | eu-stack median / p90 (ms) | RSS (MB) "
          "| jitstack / eu-stack | gdb median (ms) | RSS (MB) | JIT frame named |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    gdb_ok = {k: bool(shutil.which("gdb")) for k in KINDS}
    for kind in KINDS:
        for n in NS:
            cwd = tempfile.mkdtemp(prefix="scale-")
            p, pid = start(kind, n, cwd)
            want = ("orc_fn_%d" if kind == "orc" else "scale_fn_%d") % (n // 2)
            res = {"js": [], "eu": [], "gdb": []}
            rss = {"js": 0, "eu": 0, "gdb": 0}
            named = True
            tools = [("js", [JS, "-p", str(pid)], RUNS), ("eu", ["eu-stack", "-p", str(pid)], RUNS),
                     ("gdb", ["gdb", "-nx", "-batch", "-ex", "bt", "-p", str(pid)], GDB_RUNS)]
            for r in range(RUNS):
                for key, cmd, runs in tools:
                    if r >= runs or (key == "gdb" and not gdb_ok[kind]) or (key == "eu" and not shutil.which("eu-stack")):
                        continue
                    wall, peak, out = run(cmd, GDB_MAX if key == "gdb" else 600)
                    if wall is None:
                        gdb_ok[kind] = False
                        res[key].append(None)
                        continue
                    res[key].append(wall)
                    rss[key] = max(rss[key], peak)
                    if key == "js" and kind == "threads":
                        named &= out.count(" park_thread+") == n
                    elif key == "js":
                        named &= bool(re.search(r"\b%s\b" % want, out)) and " main+" in out
            p.kill()
            p.wait()
            try:
                os.unlink("/tmp/perf-%d.map" % pid)
            except OSError:
                pass
            shutil.rmtree(cwd, ignore_errors=True)

            def col(key):
                v = [x for x in res[key] if x is not None]
                if None in res[key]:
                    return "> %d s" % GDB_MAX, "-"
                if not v:
                    return "-", "-"
                return "%s / %s" % (ms(statistics.median(v)), ms(pct(v, 0.9))), "%.0f" % (rss[key] / 1024)

            js, jr = col("js")
            eu, er = col("eu")
            gd, gr = col("gdb")
            if gd != "-" and "/" in gd:
                gd = gd.split(" / ")[0]
            ratio = "-"
            if res["js"] and res["eu"] and None not in res["eu"]:
                ratio = "%.2f×" % (statistics.median(res["js"]) / statistics.median(res["eu"]))
            print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" %
                  (kind, n, js, jr, eu, er, ratio, gd, gr, "yes" if named else "**no**"), flush=True)


main()
