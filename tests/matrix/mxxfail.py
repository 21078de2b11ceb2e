# SPDX-License-Identifier: MIT
"""mxxfail.py - THE table of expected failures: every cell that is known to
fail, and why.  A cell listed here that fails is XFAIL; one that passes is
an unexpected pass (XPASS) and fails `make matrix-check`, so this table
cannot drift from the truth in either direction.

Each entry: (methods, columns, reason[, partial]).  methods and columns are
lists of ids (mxmethods.METHODS / COLUMNS).  partial "fp" means the tool
must still show every frame a frame-pointer walk can see (the child's
c_middle is the one frame it cannot: its caller jit:cfi keeps no frame
pointer); a cell that misses even those FAILs.
"""

NOFP = ["nofp-none", "nofp-exact"]
CHILD = ["child-all", "child-none"]
NOTHING = ["nofp-none", "fp-none", "child-none"]  # nothing published
C_MIDDLE = ("c_middle's caller jit:cfi keeps no frame pointer, so a frame-pointer walk "
            "goes from c_mid2 straight to jit:fp")

XFAIL = [
    # -- in-process unwinders that read registrations only
    (["glibc-backtrace", "libgcc", "llvm-libunwind", "cxx-exception"], NOTHING,
     "nothing registered, and libgcc and LLVM libunwind have no frame-pointer fallback: the walk "
     "stops at the first JIT frame (a C++ exception ends in std::terminate)"),
    (["crash-reporter", "asan-access", "libbacktrace"], NOTHING,
     "nothing registered: they unwind with libgcc's _Unwind_Backtrace, which has no frame-pointer "
     "fallback and stops at the first JIT frame"),
    (["unw-backtrace", "unw-step", "heaptrack", "gperftools"], ["nofp-none"],
     "nothing registered: nongnu libunwind falls back to the rbp chain, which no-FP stencils break "
     "(the CALL stencil uses rbp as a general register)"),
    (["unw-backtrace", "unw-step", "heaptrack", "gperftools"], ["child-none"],
     "nothing registered: nongnu libunwind falls back to the rbp chain; " + C_MIDDLE, "fp"),
    # -- tools that read no registration at all: frame pointers only
    (["fp-walk"], NOFP, "a frame-pointer walk: no-FP stencils use rbp as a general register"),
    (["fp-walk"], CHILD, "a frame-pointer walk: " + C_MIDDLE, "fp"),
    (["perf-fp", "bpftrace"], NOFP, "the kernel walks frame pointers (the perf map only names "
     "frames), and no-FP stencils use rbp as a general register"),
    (["perf-fp", "bpftrace"], CHILD, "the kernel walks frame pointers: " + C_MIDDLE, "fp"),
    # -- W^X by double mapping (tinyjit --wx)
    (["perf-fp"], ["wx-dual"],
     "perf 6.1 reads the perf map only for mappings it takes for anonymous memory (util/map.c, "
     "is_anon_memory: //anon, /dev/zero, /anon_hugepage); the RX view is /memfd:tinyjit-code "
     "(deleted), so the JIT frames are bare addresses (wx-dual-anon, /dev/zero in maps, is named)"),
    (["valgrind"], ["wx-dual-anon"],
     "valgrind 3.19 refuses mremap with an old size of 0 (EINVAL), the call that makes the second "
     "view of anonymous shared memory, so the workload cannot map its code under it (wx-dual, a "
     "memfd's two views, runs)"),
    (["asan-alloc-free"], NOFP, "AddressSanitizer's malloc-time unwinder walks frame pointers, and "
     "no-FP stencils use rbp as a general register"),
    (["asan-alloc-free"], CHILD, "AddressSanitizer's malloc-time unwinder walks frame pointers: "
     + C_MIDDLE, "fp"),
    (["valgrind"], NOFP, "valgrind honours no registration: it needs frame pointers in JIT code, "
     "and no-FP stencils use rbp as a general register"),
    (["valgrind"], CHILD, "valgrind honours no registration (frame pointers only): " + C_MIDDLE, "fp"),
    (["eu-stack-live", "eu-stack-core"], NOFP,
     "eu-stack (libdwfl) reads no JIT registration: frame-pointer fallback only, and no-FP "
     "stencils use rbp as a general register"),
    (["eu-stack-live", "eu-stack-core"], CHILD,
     "eu-stack (libdwfl) reads no JIT registration, frame-pointer fallback only: " + C_MIDDLE, "fp"),
    (["unw-ptrace"], NOFP,
     "libunwind-ptrace does not read the target's dynamic unwind list on x86-64: rbp chain only, "
     "which no-FP stencils break"),
    (["unw-ptrace"], CHILD,
     "libunwind-ptrace does not read the target's dynamic unwind list on x86-64 (rbp chain "
     "only): " + C_MIDDLE, "fp"),
    # -- tools that read the GDB JIT interface, in modes that publish nothing
    (["unw-ptrace-jit", "dwfl-live", "dwfl-core", "lldb-live", "lldb-core", "jitstack-live",
      "jitstack-core"], ["nofp-none"],
     "nothing published: the frame-pointer fallback is all that is left, and no-FP stencils "
     "break it"),
    (["unw-ptrace-jit", "dwfl-live", "dwfl-core", "lldb-live", "lldb-core", "jitstack-live",
      "jitstack-core"], ["child-none"],
     "nothing published: the frame-pointer fallback is all that is left; " + C_MIDDLE, "fp"),
    (["gdb-live", "gdb-core"], NOTHING,
     "gdb without a registration reads the return address at [rsp], even in frame-pointer code"),
    # -- perf's DWARF unwinder through perf inject --jit
    (["perf-dwarf"], NOTHING,
     "no jitdump: perf's DWARF unwinder cannot step through anonymous code"),
    (["perf-dwarf"], ["child-all"],
     "the child packs its blobs 64 bytes apart, so perf maps no unwind tables for jit:cfi and "
     "falls back to frame pointers there: " + C_MIDDLE, "fp"),
]


# -- AArch64 under qemu-user (mxaarch64.py; the rows it cannot run are N/A)
A64 = ["a64-fp-none", "a64-fp-region", "a64-nofp-exact", "a64-fp-exact"]
XFAIL += [
    (["glibc-backtrace", "libgcc", "cxx-exception"], ["a64-fp-none"],
     "nothing registered, and libgcc has no frame-pointer fallback on AArch64 either: the walk "
     "stops at the first JIT frame (a C++ exception ends in std::terminate)"),
    (["gdb-live"], ["a64-fp-none"],
     "gdb-multiarch without a registration cannot unwind the JIT frame: its AArch64 fallback "
     "gives it one caller that is no code address, and the backtrace ends there"),
    (["gdb-core"], A64,
     "the core qemu-user writes has no NT_FILE note and leaves out the program's read-only "
     "segments (file size 0): gdb-multiarch relocates neither the PIE (`info files`: .text at "
     "its link address) nor any shared library (`info sharedlibrary`: none), so it names none "
     "of the program's frames and loses the stack after the first few"),
]

# -- AArch64 on a real kernel: the system VM (tests/aarch64-system, matrix.py --system
# aarch64; docs/MATRIX-AARCH64.md)
SYS = ["sys-fp-none", "sys-fp-region", "sys-nofp-exact", "sys-fp-exact"]
ELFUTILS_A64_FP = ("libdwfl's AArch64 frame-pointer fallback (elfutils 0.188) takes the link register "
                   "as the caller of every frame it reaches without CFI: below a frame unwound by CFI "
                   "it repeats the JIT frame and loses one further down (a third tj:descend where "
                   "tj_jit_enter belongs)")
XFAIL += [
    (["glibc-backtrace", "libgcc", "llvm-libunwind", "cxx-exception"], ["sys-fp-none"],
     "nothing registered, and libgcc and LLVM libunwind have no frame-pointer fallback on AArch64 "
     "either: the walk stops at the first JIT frame (a C++ exception ends in std::terminate)"),
    (["crash-reporter", "asan-access", "libbacktrace"], ["sys-fp-none"],
     "nothing registered: they unwind with libgcc's _Unwind_Backtrace, which has no frame-pointer "
     "fallback on AArch64 either and stops at the first JIT frame"),
    (["unw-backtrace", "unw-step", "heaptrack"], ["sys-fp-none"],
     "nothing registered: nongnu libunwind (heaptrack's unwinder too) falls back, in code without "
     "CFI on AArch64, to a walk that stops two JIT frames in"),
    (["asan-alloc-free"], ["sys-nofp-exact"], "AddressSanitizer's malloc-time unwinder walks frame "
     "pointers, and no-FP stencils keep no chain of frame records in x29"),
    (["gperftools"], ["sys-nofp-exact"], "gperftools picks its frame-pointer unwinder (generic_fp) "
     "on arm64, and no-FP stencils keep no chain of frame records in x29"),
    (["gdb-live", "gdb-core"], ["sys-fp-none"],
     "gdb without a registration cannot unwind the JIT frame: its AArch64 fallback gives it one "
     "caller that is no code address, and the backtrace ends there"),
    (["perf-dwarf"], ["sys-fp-none"], "no jitdump: perf's DWARF unwinder cannot step through "
     "anonymous code"),
    (["dwfl-live", "dwfl-core"], ["sys-fp-none"], "nothing published: " + ELFUTILS_A64_FP),
    (["eu-stack-live", "eu-stack-core"], SYS,
     "eu-stack reads no JIT registration, so JIT frames get the frame-pointer fallback: "
     + ELFUTILS_A64_FP),
    (["unw-ptrace"], SYS,
     "libunwind-ptrace reads no JIT registration, and its AArch64 fallback for code without CFI "
     "(nongnu libunwind 1.6) stops two JIT frames in"),
    (["unw-ptrace-jit"], ["sys-fp-none"],
     "nothing published: libunwind-ptrace's AArch64 fallback for code without CFI stops two JIT "
     "frames in"),
    (["valgrind"], SYS,
     "valgrind honours no registration, and its arm64 unwinder stops at the first JIT frame "
     "(code without CFI), frame pointers or not"),
    (["fp-walk", "perf-fp"], ["sys-nofp-exact"],
     "a frame-pointer walk (the kernel's, for perf -g): no-FP stencils keep no chain of frame "
     "records in x29"),
]

# -- the LuaJIT block (mxluajit.py): Debian's stock luajit, without the module
# (lj-none) and with it.  LuaJIT's traces and interpreter keep no frame
# pointer: rbp is a general register (vm_x64.dasc RB).
NO_FP_LJ = "LuaJIT's traces and interpreter keep no frame pointer (rbp is a general register, vm_x64.dasc)"
XFAIL += [
    (["glibc-backtrace", "libgcc"], ["lj-none"],
     "stock luajit registers one FDE over all its machine code, for its own error unwinding "
     "(lj_err.c); its rules are not a trace's frame, and libgcc aborts inside _Unwind_Backtrace "
     "(SIGABRT, from backtrace() too) when it follows them"),
    (["gdb-live", "gdb-core"], ["lj-none"],
     "nothing published: gdb takes the word at rsp for the trace's return address and unwinds "
     "into garbage after it"),
    (["lldb-live", "lldb-core"], ["lj-none"],
     "nothing published: lldb's fallback walks frame pointers and gives up at the trace: " + NO_FP_LJ),
    (["unw-ptrace-jit", "dwfl-live", "dwfl-core", "jitstack-live", "jitstack-core"], ["lj-none"],
     "nothing published: the frame-pointer fallback is all that is left, and it stops at the trace: "
     + NO_FP_LJ),
    (["eu-stack-live", "eu-stack-core"], ["lj-none", "lj-module", "lj-guest"],
     "eu-stack (libdwfl) reads no JIT registration: its only way through a trace is the rbp chain, "
     "and " + NO_FP_LJ),
    (["perf-fp", "bpftrace"], ["lj-none"],
     "stock luajit writes no perf map: samples in trace code are bare addresses"),
    (["perf-dwarf"], ["lj-none"],
     "stock luajit writes no jitdump: perf inject --jit makes no object of the traces, and samples "
     "in trace code are bare addresses"),
]


# -- the CPython block (mxcpython.py): CPython 3.13's stock JIT (cpy-stock,
# nothing published), with our patches (cpy-jit) and with them and frame
# pointers (cpy-fp, where every row passes).  The stencils use the GHC
# convention, which passes the Python stack pointer in rbp, and the
# interpreter is compiled without frame pointers but in cpy-fp
# (integrations/cpython/README.md, "Frame pointers").
NO_FP_CPY = ("the stencils pass the Python stack pointer in rbp (the GHC convention) and the interpreter "
             "keeps no frame pointers: the chain ends at the executor (cpy-fp passes)")
XFAIL += [
    (["glibc-backtrace", "libgcc", "llvm-libunwind"], ["cpy-stock"],
     "nothing registered, and libgcc and LLVM libunwind have no frame-pointer fallback: the walk "
     "stops at the first executor"),
    (["unw-backtrace", "unw-step"], ["cpy-stock"],
     "nothing registered: nongnu libunwind falls back to the rbp chain, and " + NO_FP_CPY),
    (["unw-ptrace-jit", "dwfl-live", "dwfl-core", "lldb-live", "lldb-core", "jitstack-live",
      "jitstack-core"], ["cpy-stock"],
     "nothing published: the frame-pointer fallback is all that is left, and " + NO_FP_CPY),
    (["gdb-live", "gdb-core"], ["cpy-stock"],
     "nothing published: gdb unwinds the executor's frame with no unwind information, takes a wrong "
     "word for its caller and goes on through garbage (_PyRuntime's data), reaching main by chance"),
    (["perf-dwarf"], ["cpy-stock"],
     "no jitdump: perf's DWARF unwinder cannot step through anonymous code"),
    (["fp-walk", "unw-ptrace", "perf-fp", "bpftrace"], ["cpy-stock", "cpy-jit"],
     "a frame-pointer walk (the kernel's for perf -g and bpftrace; the perf map only names "
     "frames): " + NO_FP_CPY),
    (["eu-stack-live", "eu-stack-core"], ["cpy-stock", "cpy-jit"],
     "eu-stack (libdwfl) reads no JIT registration: frame-pointer fallback only, and " + NO_FP_CPY),
]


def expected_failure(method, column):
    """(reason, partial) when the cell is expected to fail, else None."""
    for methods, columns, reason, *partial in XFAIL:
        if method in methods and column in columns:
            return reason, (partial[0] if partial else None)
    return None
