# SPDX-License-Identifier: MIT
"""mxrun.py - running workloads and tools for one matrix cell: a scratch
directory of its own, bounded time, and nothing left behind.

Every process is started in a session of its own, so a tool that hangs is
killed with everything it started.  Each workload runs with its cwd in the
cell's directory (core files land there), JITDUMPDIR and TMPDIR there too;
the one file the library must write outside it, /tmp/perf-PID.map, is
removed for every workload pid the cell saw.

MX_TIME_SCALE (a number, default 1) stretches every time limit, for runs
on an emulated machine (the AArch64 system VM).
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import time

TIME_SCALE = float(os.environ.get("MX_TIME_SCALE") or 1)
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
    pass


class Skip(Exception):
    pass


class NotApplicable(Exception):
    """The unwinder has no way into this column's workload (an AArch64 guest
    under qemu-user that ptrace, perf or valgrind cannot see): N/A, with
    the reason, never counted as a tool missing here."""


class Cell:
    """The scratch space and process bookkeeping of one cell."""

    def __init__(self, root, name, log):
        self.dir = os.path.join(root, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.log_lines = log
        self.pids = set()
        self.procs = []

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
        Timeout (after killing its process group) when it takes longer."""
        timeout *= TIME_SCALE
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
                raise Timeout("%s hung: killed after %d s" % (os.path.basename(cmd[0]), timeout))
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
        process's."""
        timeout *= TIME_SCALE
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
        raise Timeout("the workload did not get ready in %d s" % timeout)

    def stop(self, p):
        self._reap(p)

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
