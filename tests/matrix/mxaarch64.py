# SPDX-License-Identifier: MIT
"""mxaarch64.py - the matrix's AArch64 columns: tinyjit cross-built for
AArch64 (tinyjit/aarch64.mk) and run under qemu-user on this host.

Only the unwinders that can reach a qemu-user guest have a way in: the
in-process ones (glibc backtrace(), libgcc's _Unwind_Backtrace, a C++
exception) run inside the guest; gdb-multiarch and lldb attach to qemu's
gdb stub; gdb-multiarch and jitstack read the AArch64 core qemu writes
itself.  Every other row is N/A, saying why (ptrace, perf and eBPF see
qemu, not the guest; the guest's extra unwinder libraries are not
installable here without a multiarch setup).
"""
import os
import re
import shutil
import socket
import subprocess
import time

import mxjudge as J
from mxrun import NotApplicable, Skip, Timeout

QEMU = "qemu-aarch64"
LD_PREFIX = "/usr/aarch64-linux-gnu"
GDB_MULTIARCH = "gdb-multiarch"
LLDB = "lldb-16"
STUB_WAIT = 10  # seconds for qemu's gdb stub to listen (times the cell's load scale)


def exe_of(ctx):
    exe = os.path.join(ctx.build, "aarch64", "tinyjit", "tinyjit")
    if not shutil.which(QEMU):
        raise Skip("qemu-aarch64 is not installed (Debian package qemu-user)")
    if not os.path.exists(os.path.join(LD_PREFIX, "lib", "ld-linux-aarch64.so.1")):
        raise Skip("no AArch64 libc in %s (Debian package libc6-arm64-cross)" % LD_PREFIX)
    if not os.path.exists(exe):
        raise Skip("%s is missing (make tinyjit-aarch64)" % os.path.relpath(exe))
    return exe


def workload(ctx, col, cell, action, qemu_args=()):
    """(command, environment, executable) of the AArch64 probe doing
    `action` under qemu-user."""
    from mxmethods import DEPTH, PROBE_MODE
    exe = exe_of(ctx)
    env = cell.env(dict(col.env, QEMU_LD_PREFIX=LD_PREFIX, TJ_PROBE_EXPECT=cell.path("expect"),
                        TJ_PROBE_WAIT=str(int(cell.limit(300)))))
    cmd = [QEMU] + list(qemu_args) + [exe] + col.tj_args + [ctx.probe_tj, str(PROBE_MODE[action]),
                                                             str(DEPTH)]
    return cmd, env, exe


def expect_of(cell, exe):
    path = cell.path("expect")
    if not os.path.exists(path):
        raise RuntimeError("the workload wrote no expect file")
    return J.load_probe_expect(path, exe)


# ---- in the guest -------------------------------------------------------------------

def in_process(action):
    def run(ctx, col, cell):
        from mxmethods import Outcome
        cmd, env, exe = workload(ctx, col, cell, action)
        rc, out = cell.run(cmd, env=env, workload=True, name="workload")
        note = "" if rc in (0, 1) else "the workload exited %d" % rc
        return Outcome(expect_of(cell, exe), frames=J.parse_bracketed(out), note=note)
    return run


def cxx_exception(ctx, col, cell):
    from mxmethods import Outcome
    cmd, env, exe = workload(ctx, col, cell, "throw")
    rc, out = cell.run(cmd, env=env, workload=True, name="workload")
    caught = rc == 0 and "caught C++ exception" in out
    why = "caught near main" if caught else (
        "std::terminate: the unwinder found no handler" if "terminate called" in out else "exit %d" % rc)
    return Outcome(None, verdict=caught, note=why)


# ---- qemu's gdb stub ------------------------------------------------------------------

def listening(port):
    """Whether a TCP port is in LISTEN state (not by connecting: qemu's stub
    serves the first connection only)."""
    hexport = ":%04X" % port
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    p = line.split()
                    if p[1].endswith(hexport) and p[3] == "0A":
                        return True
        except OSError:
            pass
    return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def under_stub(ctx, col, cell, cmd_env_exe=None):
    """Start the probe (mode abort, unless cmd_env_exe(port) says otherwise)
    under qemu -g PORT; qemu waits for the debugger before the guest's first
    instruction.  (process, port, exe)."""
    port = free_port()
    if cmd_env_exe:
        cmd, env, exe = cmd_env_exe(port)
    else:
        cmd, env, exe = workload(ctx, col, cell, "abort", ["-g", str(port)])
    cell.log("$ " + " ".join(cmd) + " &")
    out = open(cell.path("workload.out"), "wb")
    p = cell._popen(cmd, env, out, subprocess.STDOUT)
    out.close()
    cell.pids.add(p.pid)
    deadline = time.monotonic() + cell.limit(STUB_WAIT)
    while not listening(port):
        if p.poll() is not None or time.monotonic() > deadline:
            cell.stop(p)
            if p.poll() is not None:
                raise RuntimeError("qemu-aarch64 -g %d exited (%d) before it listened" % (port, p.returncode))
            raise Timeout("qemu-aarch64 -g %d did not start listening in %s" % (
                port, cell.scaled(STUB_WAIT)))
        time.sleep(0.05)
    return p, port, exe


def gdb_stub(ctx, col, cell):
    from mxmethods import Outcome, TOOL_TIMEOUT
    if not shutil.which(GDB_MULTIARCH):
        raise Skip("gdb-multiarch is not installed (Debian package gdb-multiarch)")
    p, port, exe = under_stub(ctx, col, cell)
    try:
        rc, out = cell.run([GDB_MULTIARCH, "-nx", "-batch", "-ex", "set pagination off",
                            "-ex", "set sysroot " + LD_PREFIX, "-ex", "file " + exe,
                            "-ex", "target remote localhost:%d" % port, "-ex", "continue", "-ex", "bt"],
                           timeout=TOOL_TIMEOUT, name="gdb")
    finally:
        cell.stop(p)
    if "SIGABRT" not in out:
        raise RuntimeError("gdb-multiarch: the guest did not reach its abort: " + out[-300:])
    return Outcome(expect_of(cell, exe), frames=J.parse_gdb(out), names_jit=col.publishes,
                   inline_dups=True, note="" if rc == 0 else "exit %d" % rc)


def lldb_stub(ctx, col, cell):
    from mxmethods import Outcome, TOOL_TIMEOUT
    if not shutil.which(LLDB):
        raise Skip("lldb-16 is not installed (Debian package lldb-16)")
    p, port, exe = under_stub(ctx, col, cell)
    try:
        rc, out = cell.run([LLDB, "--no-lldbinit", "-b", "-o", "platform select remote-linux",
                            "-o", "target create --arch aarch64-unknown-linux-gnu " + exe,
                            "-o", "settings set target.exec-search-paths %s/lib" % LD_PREFIX,
                            "-o", "gdb-remote localhost:%d" % port, "-o", "continue", "-k", "bt",
                            "-k", "kill"], timeout=TOOL_TIMEOUT, name="lldb")
    finally:
        cell.stop(p)
    # the backtrace only: lldb also prints a frame at each stop
    bt = out[out.find("(lldb) bt"):] if "(lldb) bt" in out else ""
    return Outcome(expect_of(cell, exe), frames=J.parse_lldb(bt), names_jit=col.publishes,
                   inline_dups=True, note="" if rc == 0 else "exit %d" % rc)


def debugger_steps(ctx, col, cell, tool, script):
    """Every instruction (mxsteps.py) in gdb-multiarch or lldb through qemu's
    gdb stub: step.tj stops at its SIGTRAP, the debugger's script
    (mxstep_gdb.py, mxstep_lldb.py) single-steps tj:leaf.  (exit code, the
    debugger's output, the executable)."""
    from mxmethods import TOOL_TIMEOUT
    need = {"gdb": (GDB_MULTIARCH, "gdb-multiarch"), "lldb": (LLDB, "lldb-16")}[tool]
    if not shutil.which(need[0]):
        raise Skip("%s is not installed (Debian package %s)" % need)
    exe = exe_of(ctx)
    expect = cell.path("expect")

    def start(port):
        env = cell.env(dict(col.env, QEMU_LD_PREFIX=LD_PREFIX, TJ_PROBE_EXPECT=expect))
        return [QEMU, "-g", str(port), exe] + col.tj_args + [ctx.step_tj, "9"], env, exe
    p, port, exe = under_stub(ctx, col, cell, start)
    try:
        env = cell.env({"MX_EXPECT": expect, "MX_FUNC": "tj:leaf", "MX_REMOTE": "localhost:%d" % port})
        if tool == "gdb":
            cmd = [GDB_MULTIARCH, "-nx", "-batch", "-ex", "set sysroot " + LD_PREFIX, "-ex", "file " + exe,
                   "-x", script]
        else:
            cmd = [LLDB, "--no-lldbinit", "-b", "-o", "platform select remote-linux",
                   "-o", "target create --arch aarch64-unknown-linux-gnu " + exe,
                   "-o", "settings set target.exec-search-paths %s/lib" % LD_PREFIX,
                   "-o", "command script import " + script]
        rc, out = cell.run(cmd, env=env, timeout=TOOL_TIMEOUT, name="mx-step")
    finally:
        cell.stop(p)
    return rc, out, exe


# ---- qemu's own core files -------------------------------------------------------------

def qemu_core(ctx, col, cell, action="abort"):
    """Run the probe to its abort (or trap); qemu-user writes the guest's
    core itself, as qemu_PROGRAM_DATE_PID.core in the cell.  (core, exe)."""
    cmd, env, exe = workload(ctx, col, cell, action)
    rc, out = cell.run(cmd, env=env, workload=True, core=True, name="workload")
    for f in os.listdir(cell.dir):  # qemu's own (x86-64) core, where core_pattern writes one
        if f == "core" or re.match(r"core\.\d+$", f):
            os.unlink(cell.path(f))
    cores = sorted(f for f in os.listdir(cell.dir) if re.match(r"qemu_.*\.core$", f))
    if not cores:
        raise RuntimeError("qemu wrote no core (exit %d): %s" % (rc, out.strip()[-300:]))
    return cell.path(cores[0]), exe


def gdb_core(ctx, col, cell):
    """gdb-multiarch on the core of a trap in the probe's own code (as
    jitstack_core)."""
    from mxmethods import Outcome, TOOL_TIMEOUT
    if not shutil.which(GDB_MULTIARCH):
        raise Skip("gdb-multiarch is not installed (Debian package gdb-multiarch)")
    core, exe = qemu_core(ctx, col, cell, "fault")
    rc, out = cell.run([GDB_MULTIARCH, "-nx", "-batch", "-ex", "set pagination off",
                        "-ex", "set sysroot " + LD_PREFIX, "-ex", "file " + exe, "-ex", "core-file " + core,
                        "-ex", "info sharedlibrary", "-ex", "bt"],
                       timeout=TOOL_TIMEOUT, name="gdb")
    return Outcome(expect_of(cell, exe), frames=J.parse_gdb(out), names_jit=col.publishes,
                   inline_dups=True, note="" if rc == 0 else "exit %d" % rc)


def jitstack_core(ctx, col, cell):
    from mxmethods import Outcome, TOOL_TIMEOUT
    if not os.path.exists(ctx.jitstack):
        raise Skip("jitstack not built (no BUILD/jitstack/jitstack)")
    # qemu's cores have no NT_FILE note: --exe names the program, and no
    # library is found, so the probe traps in its own code (mode 14) rather
    # than in libc's abort(), as the library's child does
    # (jitstack/tests/t-aarch64-core-under-qemu.sh)
    core, exe = qemu_core(ctx, col, cell, "fault")
    rc, out = cell.run([ctx.jitstack, "--core", core, "--exe", exe, "--json"], timeout=TOOL_TIMEOUT,
                       name="jitstack")
    return Outcome(expect_of(cell, exe), frames=J.parse_jitstack(out), names_jit=col.publishes,
                   note="" if rc == 0 else "exit %d" % rc)


# ---- which rows run, and why the others cannot -------------------------------------------

RUNS = {
    "glibc-backtrace": in_process("backtrace"),
    "libgcc": in_process("unwind"),
    "cxx-exception": cxx_exception,
    "gdb-live": gdb_stub,
    "lldb-live": lldb_stub,
    "gdb-core": gdb_core,
    "jitstack-core": jitstack_core,
}

PTRACE = "it attaches with ptrace, which sees qemu's own x86-64 process, not the AArch64 guest"
NO_GUEST_LIB = ("the workload would load %s for AArch64, which Debian ships only as an arm64 "
                "package (%s): not installable here without a multiarch setup")
WHY_NOT = {
    "llvm-libunwind": NO_GUEST_LIB % ("LLVM libunwind", "libunwind-14:arm64"),
    "unw-backtrace": NO_GUEST_LIB % ("nongnu libunwind", "libunwind-dev:arm64"),
    "unw-step": NO_GUEST_LIB % ("nongnu libunwind", "libunwind-dev:arm64"),
    "heaptrack": NO_GUEST_LIB % ("heaptrack's preloaded library", "heaptrack:arm64"),
    "gperftools": NO_GUEST_LIB % ("gperftools' libprofiler", "libgoogle-perftools4:arm64"),
    "crash-reporter": "not wired for AArch64 yet (the probe's SIGSEGV mode is not run there)",
    "asan-access": "no AArch64 AddressSanitizer build of the workload (not tried under qemu-user)",
    "asan-alloc-free": "no AArch64 AddressSanitizer build of the workload (not tried under "
                       "qemu-user)",
    "libbacktrace": "no AArch64 build of the libbacktrace workload",
    "fp-walk": PTRACE,
    "unw-ptrace": PTRACE,
    "unw-ptrace-jit": PTRACE,
    "dwfl-live": PTRACE,
    "dwfl-core": "not wired for AArch64 yet (jitstack-core reads qemu's cores through the same "
                 "libdwfl)",
    "eu-stack-live": PTRACE,
    "eu-stack-core": "not wired for AArch64 yet (qemu's cores have no NT_FILE note; eu-stack "
                     "would need the executable named)",
    "lldb-core": "not wired for AArch64 yet (lldb-live covers lldb through qemu's gdb stub)",
    "perf-fp": "perf samples qemu's translated x86-64 code, not the guest's",
    "perf-dwarf": "perf samples qemu's translated x86-64 code, not the guest's",
    "bpftrace": "the kernel's frame-pointer walk sees qemu's x86-64 stack, not the guest's",
    "valgrind": "valgrind cannot run a qemu-user guest (it would instrument qemu itself)",
    "jitstack-live": PTRACE,
}


# ---- on a real arm64 kernel: the system VM (tests/aarch64-system) -------------------------

# The rows `matrix.py --system aarch64` runs inside the VM, natively, as on
# x86-64 (mxmethods.py drives them; the VM's root has their tools).
SYSTEM_ROWS = {
    "glibc-backtrace", "libgcc", "llvm-libunwind", "unw-backtrace", "unw-step", "cxx-exception",
    "crash-reporter", "asan-access", "asan-alloc-free", "libbacktrace", "fp-walk", "unw-ptrace",
    "unw-ptrace-jit", "dwfl-live", "dwfl-core", "eu-stack-live", "eu-stack-core", "gdb-live",
    "gdb-core", "lldb-live", "lldb-core", "perf-fp", "perf-dwarf", "heaptrack", "gperftools",
    "valgrind", "jitstack-live", "jitstack-core",
}
SYSTEM_WHY_NOT = {
    "bpftrace": "bpftrace is not in the VM's root (its own LLVM and BCC, and eBPF programs "
                "compiled and run under emulation)",
}


def system_run(method, ctx, col, cell):
    """The system VM's cell of `method`: run natively, or N/A saying why."""
    if method.id in SYSTEM_ROWS:
        return method.run(ctx, col, cell)
    raise NotApplicable("AArch64 system VM: " + SYSTEM_WHY_NOT.get(method.id, "not run there"))


def run(method, ctx, col, cell):
    """The AArch64 cell of `method`: its run, or N/A saying why there is none."""
    if method.id in RUNS:
        return RUNS[method.id](ctx, col, cell)
    why = WHY_NOT.get(method.id, "not run there")
    if method.id in SYSTEM_ROWS:
        why += " (it runs on an arm64 kernel in make check-aarch64-system: docs/MATRIX-AARCH64.md)"
    raise NotApplicable("AArch64 under qemu-user: " + why)
