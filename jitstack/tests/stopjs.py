# stopjs.py - stop jitstack with a signal while it reads or samples its
# targets, and report the target threads left in a stop.
#
# SPDX-License-Identifier: MIT
#
# Usage: python3 stopjs.py ROUNDS SECONDS -- JITSTACK-COMMAND...
# Each round starts the command in a process group of its own (whose
# parent, this script, is in another group of the same session: so the
# group is not orphaned, and a stop signal's default action does stop
# it), sends it the signal of the round (TSTP, TTIN, TTOU, STOP in turn)
# after a random delay (0.05 to 0.5 s), waits until it is stopped (state
# T), and reads the state of every thread of the targets (PIDs in the
# environment variable TARGETS):
#  - TSTP, TTIN, TTOU: no target thread may be stopped ('t' or 'T') once
#    jitstack is;
#  - STOP (which cannot be caught): jitstack is continued again, and after
#    the bound on a hold (HOLD_MS) plus 300 ms no thread may still be held.
# Then the command is killed.  Prints one line per failure and a summary;
# exits 1 when a round failed, 2 when the command never stopped.
import os, random, signal, subprocess, sys, time

rounds, budget = int(sys.argv[1]), float(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
targets = [int(p) for p in os.environ["TARGETS"].split()]
hold_s = float(os.environ.get("HOLD_MS", "100")) / 1000
sigs = [signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGSTOP]


def state(path):
    try:
        with open(path) as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rindex(")") + 2]


def stuck():
    """The target threads in a stop, as 'PID/TID:state'."""
    out = []
    for pid in targets:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            st = state("/proc/%d/task/%s/stat" % (pid, tid))
            if st in ("t", "T"):
                out.append("%d/%s:%s" % (pid, tid, st))
    return out


def wait_state(pid, want, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if state("/proc/%d/stat" % pid) in want:
            return True
        time.sleep(0.002)
    return False


random.seed(int(os.environ.get("SEED", "1")))
failed = never = done = 0
end = time.monotonic() + budget
for r in range(rounds):
    if time.monotonic() > end:
        break
    sig = sigs[r % len(sigs)]
    j = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         process_group=0)
    time.sleep(random.uniform(0.05, 0.5))
    name = signal.Signals(sig).name
    try:
        if j.poll() is not None:
            print("round %d: jitstack exited (%d) before the signal" % (r, j.returncode))
            never += 1
            continue
        os.kill(j.pid, sig)
        if not wait_state(j.pid, ("T",), 3):
            never += 1
            print("round %d: %s: jitstack did not stop" % (r, name))
            continue
        if sig == signal.SIGSTOP:
            time.sleep(0.05)
            os.kill(j.pid, signal.SIGCONT)
            # past the bound, no thread may stay held: those in a stop at
            # every reading over 0.3 s fail (new holds come and go)
            time.sleep(hold_s + 0.2)
            left = set(stuck())
            until = time.monotonic() + 0.3
            while left and time.monotonic() < until:
                left &= set(stuck())
                time.sleep(0.002)
            left = sorted(left)
        else:
            time.sleep(0.05)
            left = stuck()
        done += 1
        if left:
            failed += 1
            print("round %d: %s: jitstack stopped, target threads stopped: %s"
                  % (r, name, " ".join(left)))
    finally:
        try:
            os.killpg(j.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        j.wait()
print("rounds %d failed %d never-stopped %d" % (done, failed, never))
sys.exit(1 if failed else 2 if never else 0)
