# SPDX-License-Identifier: MIT
"""mxrun.py - running workloads and tools for one matrix cell: a scratch
directory of its own, bounded time, and nothing left behind.

Every process is started in a session of its own, so a tool that hangs is
killed with everything it started.  Each workload runs with its cwd in the
cell's directory (core files land there), JITDUMPDIR and TMPDIR there too;
the one file the library must write outside it, /tmp/perf-PID.map, is
removed for every workload pid the cell saw.

Time limits follow the machine's load.  calibrate() (matrix.py, at start)
measures it two ways and keeps the larger: a busy loop's wall time over
its CPU time (how much slower CPU work runs now than on an idle core) and
the 1-minute load average over the cores (which also counts the tasks
waiting for the disk, and the load that was there a minute ago).  Each
cell then takes the larger of that and the load average at its start, as
its `scale` (1 to MAX_SCALE), and multiplies every wait by it: a tool's
time limit, a workload's readiness, a sampler's bound.  MX_TIME_SCALE (a
number) overrides the measure (the AArch64 system VM sets 8: an emulated
machine is slow without being loaded).  A limit that still runs out is a
Timeout: the cell is not judged (TIMEOUT), never failed as the tool's
fault.
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import time


def _override():
    text = os.environ.get("MX_TIME_SCALE")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = 0
    if not 0 < value < 1000:
        raise SystemExit("matrix: MX_TIME_SCALE must be a number above 0 and below 1000 (a factor "
                         "for every time limit), not '%s'" % text)
    return value


TIME_SCALE = _override()
MAX_SCALE = 16.0      # however loaded the machine, a hung tool is killed in 16 times its limit
SAMPLE_BOUND = 20     # seconds (times the cell's scale) a sampler may spend collecting
MAX_ROUNDS = 5        # and in how many rounds at most
_base = None          # (scale, how it was measured) from calibrate()
_live = set()            # process groups still running, for the exit handler
_live_lock = threading.Lock()
stopping = threading.Event()  # set on Ctrl-C: no new process starts


class Interrupted(Exception):
    pass


def stop():
    """Ctrl-C: start nothing more and kill what runs; the cells then clean
    up after themselves as they fail."""
    stopping.set()
    kill_all()


def kill_all():
    """Kill every process group still running (harness exit, Ctrl-C)."""
    with _live_lock:
        groups = list(_live)
        _live.clear()
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


class Timeout(Exception):
    """A limit ran out: the cell cannot be judged for lack of time (say what
    was required and what was seen)."""


# ---- the machine's load ------------------------------------------------------------

def cpu_share(seconds=0.5):
    """The share of a core a busy loop gets now: its CPU time over its wall
    time (1.0 on an idle machine, 0.5 when it runs half the time)."""
    w0, c0 = time.monotonic(), time.thread_time()
    x = 0
    while time.monotonic() - w0 < seconds:
        for i in range(20000):
            x += i
    wall, cpu = time.monotonic() - w0, time.thread_time() - c0
    return min(1.0, max(cpu, 1e-3) / wall)


def load_per_core():
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def calibrate(seconds=0.5):
    """Measure the machine's load once, at the start of a run: (scale, how)."""
    global _base
    if TIME_SCALE is not None:
        _base = (TIME_SCALE, "MX_TIME_SCALE=%g" % TIME_SCALE)
        return _base
    share, per_core = cpu_share(seconds), load_per_core()
    scale = round(min(MAX_SCALE, max(1.0, 1.0 / share, per_core)), 1)
    _base = (scale, "a busy loop got %.0f %% of a core; load average %.2f on %d cores" % (
        100 * share, os.getloadavg()[0], os.cpu_count() or 1))
    return _base


def scale_now():
    """The time scale for a cell starting now: MX_TIME_SCALE, or the larger
    of the run's calibration and the load average per core now."""
    if TIME_SCALE is not None:
        return TIME_SCALE
    base = _base[0] if _base else 1.0
    return round(min(MAX_SCALE, max(1.0, base, load_per_core())), 1)


class Skip(Exception):
    pass


class NotApplicable(Exception):
    """The unwinder has no way into this column's workload (an AArch64 guest
    under qemu-user that ptrace, perf or valgrind cannot see): N/A, with
    the reason, never counted as a tool missing here."""


def share(have, total):
    """How many of `total` samples count, in words: "all", "none", "3 of them"."""
    return "all" if have == total and total else "none" if not have else "%d of them" % have


class Cell:
    """The scratch space and process bookkeeping of one cell."""

    def __init__(self, root, name, log):
        self.dir = os.path.join(root, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.log_lines = log
        self.pids = set()
        self.procs = []
        self.scale = scale_now()
        self.log("time limits x %g (the machine's load; MX_TIME_SCALE overrides)" % self.scale)

    def limit(self, seconds):
        """A wait of `seconds` on an idle machine, at this cell's load."""
        return seconds * self.scale

    def scaled(self, seconds):
        """A limit of `seconds` on an idle machine as it stands at this cell's
        load, for messages: "40 s (20 s x 2 for the machine's load)"."""
        if self.scale == 1:
            return "%g s" % seconds
        return "%.0f s (%g s x %g for the machine's load)" % (self.limit(seconds), seconds, self.scale)

    def log(self, *lines):
        self.log_lines.extend(str(x) for x in lines)

    def path(self, name):
        return os.path.join(self.dir, name)

    def env(self, extra=None):
        env = dict(os.environ)
        env.pop("JITUNWIND", None)
        env.update(JITDUMPDIR=self.dir, TMPDIR=self.dir, LC_ALL="C")
        env.update(extra or {})
        return env

    def _popen(self, cmd, env, stdout, stderr, core=False):
        if stopping.is_set():
            raise Interrupted("interrupted")

        def setup():
            limit = resource.RLIM_INFINITY if core else 0
            resource.setrlimit(resource.RLIMIT_CORE, (limit, limit))
        p = subprocess.Popen(cmd, cwd=self.dir, env=env, stdout=stdout, stderr=stderr,
                             stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=setup)
        with _live_lock:
            _live.add(p.pid)
        self.procs.append(p)
        return p

    def _reap(self, p):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        with _live_lock:
            _live.discard(p.pid)

    def run(self, cmd, timeout=60, env=None, workload=False, core=False, name=None):
        """Run cmd to the end; returns (exit code, stdout+stderr).  Raises
        Timeout (after killing its process group) when it takes longer
        than timeout (seconds on an idle machine) at the cell's load."""
        base, timeout = timeout, self.limit(timeout)
        self.log("$ " + " ".join(cmd))
        out_path = self.path((name or os.path.basename(cmd[0])) + ".out")
        with open(out_path, "wb") as out:
            p = self._popen(cmd, env or self.env(), out, subprocess.STDOUT, core)
            if workload:
                self.pids.add(p.pid)
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._reap(p)
                self.log("  killed after %d s" % timeout)
                raise Timeout("%s did not finish in %s: killed" % (os.path.basename(cmd[0]),
                                                                   self.scaled(base)))
            self._reap(p)
        with open(out_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        self.log("  exit %d, %d bytes of output" % (p.returncode, len(text)))
        return p.returncode, text

    def start(self, cmd, ready, env=None, timeout=30):
        """Start a workload that prints a line matching `ready` (a regex
        with the pid as group 1, or with no group: the pid is the
        process's) and waits; returns (process, pid).  With ready None the
        workload is ready once its expect file exists, and its pid is the
        process's.  timeout: seconds on an idle machine, at the cell's load."""
        base, timeout = timeout, self.limit(timeout)
        self.log("$ " + " ".join(cmd) + " &")
        out_path = self.path("workload.out")
        out = open(out_path, "wb")
        p = self._popen(cmd, env or self.env(), out, subprocess.STDOUT)
        out.close()
        self.pids.add(p.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(out_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            if ready is None and os.path.exists(self.path("expect")):
                return p, p.pid
            m = ready and re.search(ready, text)
            if m:
                pid = int(m.group(1)) if m.groups() else p.pid
                self.pids.add(pid)
                return p, pid
            if p.poll() is not None:
                raise RuntimeError("the workload exited (%d) before it was ready:\n%s" % (p.returncode, text))
            time.sleep(0.02)
        self._reap(p)
        raise Timeout("the workload did not get ready in %s" % self.scaled(base))

    def stop(self, p):
        self._reap(p)

    def sample(self, take, count, need, secs):
        """Collect samples until there are `need` of them, within
        SAMPLE_BOUND seconds at the cell's load.  take(secs) runs one round
        (a fresh workload sampled for about secs seconds) and returns its
        result; count(result) is (samples that count, all samples, where
        they count: e.g. "in probe_spin").  The first round lasts secs, as
        on an idle machine (where it gives a hundred times the samples
        needed); each next one is longer, by the rate the last one had,
        until the bound.  Returns the last round's result, to be judged,
        unless even all its samples are fewer than `need`: then the tool
        had too little time, not too few right samples, and the cell is not
        judged (Timeout)."""
        t0 = time.monotonic()
        bound = self.limit(SAMPLE_BOUND)
        rounds = 0
        while True:
            rounds += 1
            result = take(secs)
            have, total, what = count(result)
            took = time.monotonic() - t0
            self.log("  round %d (%.1f s of sampling, %.0f s so far): %d samples, %s %s; %d %s wanted" % (
                rounds, secs, took, total, share(have, total), what, need, what))
            left = bound - took
            if have >= need or left < 1 or rounds == MAX_ROUNDS:
                break
            secs = min(left, secs * min(8.0, max(2.0, 1.5 * need / max(have, 1))))
        if have < need and total < need:
            raise Timeout("%d samples, %s %s, in %d round%s of sampling over %.0f s (its bound: %s), but "
                          "%d %s are required" % (total, share(have, total), what, rounds,
                                                  "" if rounds == 1 else "s", took,
                                                  self.scaled(SAMPLE_BOUND), need, what))
        return result

    def core(self, cmd, env=None, timeout=60):
        """Run a workload that aborts; returns the core file it left."""
        rc, out = self.run(cmd, timeout=timeout, env=env, workload=True, core=True, name="workload")
        cores = [f for f in os.listdir(self.dir) if f == "core" or re.match(r"core\.\d+$", f)]
        if not cores:
            pattern = open("/proc/sys/kernel/core_pattern").read().strip()
            raise Skip("no core file was written (exit %d; core_pattern is '%s')" % (rc, pattern))
        return self.path(cores[0])

    def cleanup(self, keep=False):
        for p in self.procs:
            if p.poll() is None:
                self._reap(p)
        for pid in self.pids:
            try:
                os.unlink("/tmp/perf-%d.map" % pid)
            except OSError:
                pass
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)
