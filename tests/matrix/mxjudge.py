# SPDX-License-Identifier: MIT
"""mxjudge.py - what a stack must hold, and whether a tool's frames hold it.

The expected frames come from the workload: the probe's expect file
(TJ_PROBE_EXPECT, written by tinyjit/host/hostfns.c from the VM's own
transitions and its published functions) or the child's (tests/child.c).
C functions get their extents from the executable's symbol table.  Nothing
here is taken from an unwinder's output.

A tool's frame is (address, name): either may be missing.  It counts for an
expected frame when its address falls inside the function or blob (a return
address names its call, so address-1 except for the innermost frame) and,
where the tool names JIT code, the name is the blob's `tj:` name (in the
LuaJIT block, the trace's `lua:` name; in the CPython block, the executor's
`py:` name).  Frames marked optional (the shim, tail-called functions) may
be absent; a frame marked many stands for a run of frames in one range (a
host's unnamed functions), each known by its address or, where the range
has names, by one of them.
"""
import os
import re
import subprocess

UNNAMED = {None, "", "?", "??", "???", "[unknown]"}
# A name a tool prints for JIT code: tinyjit's "tj:NAME", a LuaJIT trace or
# inlined function as integrations/luajit names them, "lua:FUNC@FILE:LINE"
# followed, for a trace, by " (trace N)", or a CPython executor or inlined
# function as integrations/cpython names them, "py:QUALNAME (FILE:LINE)",
# "py:cold exit N" or "py:QUALNAME".
PY_NAME = r"py:(?:cold exit \d+|[^\s()`]+(?: \([^()\s]+:\d+\))?)"
JIT_NAME = r"(?:tj:\S+|lua:\S+(?: \(trace \d+\))?|%s)" % PY_NAME


class Spec:
    """One expected frame.  name "*" (kind jit) is any published blob.
    many: one or more frames in [lo, hi) (with opt: none or more), each
    known by its address, or by its name when it has no address and names
    (the functions of the range) holds it."""

    def __init__(self, name, lo, hi, kind, opt=False, fp=True, many=False, names=None):
        self.name, self.lo, self.hi, self.kind = name, lo, hi, kind
        self.opt, self.fp, self.many = opt, fp, many
        self.names = names

    def __repr__(self):
        return self.name + ("?" if self.opt else "")


class Expect:
    """The expected frames, innermost first, and the published blobs
    {name: (lo, hi, trampolines_lo)}."""

    def __init__(self, frames, blobs, exe=None, base=0, guests=None):
        self.frames, self.blobs = frames, blobs
        self.exe, self.base = exe, base
        # the VM's frames, innermost first: (name, "FILE:LINE" with the
        # file's base name, inlined into its caller's code?); None when
        # the workload could not say
        self.guests = guests

    def c(self, name, opt=False):
        """The Spec of the executable's C function `name`."""
        syms, _ = symtab(self.exe)
        value, size = syms[name]
        return Spec(name, self.base + value, self.base + value + max(size, 1), "c", opt)

    def blob(self, name, opt=False):
        lo, hi, _ = self.blobs[name]
        return Spec(name, lo, hi, "jit", opt)

    def function_at(self, pc):
        """The executable's function holding pc, or None."""
        syms, _ = symtab(self.exe)
        for name, (value, size) in syms.items():
            if self.base + value <= pc < self.base + value + size:
                return name
        return None

    def blob_at(self, pc):
        for name, (lo, hi, _) in self.blobs.items():
            if lo <= pc < hi:
                return name
        return None


_symtabs = {}


def symtab(exe):
    """{name: (value, size)} of the defined functions of exe, and whether
    its symbol values are relative to a load address (PIE)."""
    if exe not in _symtabs:
        out = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True,
                             text=True, check=True).stdout
        syms = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "tTwW":
                syms.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
        with open(exe, "rb") as f:
            pie = f.read(18)[16] == 3  # e_type ET_DYN
        _symtabs[exe] = (syms, pie)
    return _symtabs[exe]


def read_blobs(path):
    """{name: (lo, hi, trampoline)} from the probe's expect file's "blob NAME
    LO HI TRAMP" lines (also read inside gdb and lldb by mxstep_*.py)."""
    blobs = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 5 and p[0] == "blob":
                blobs[p[1]] = (int(p[2], 16), int(p[3], 16), int(p[4], 16))
    return blobs


def load_probe_expect(path, exe):
    """The probe's expect file (format: hostfns.c, write_expect)."""
    syms, pie = symtab(exe)
    base, frames, guests = 0, [], []
    blobs = read_blobs(path)
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "base":
                base = int(p[1], 16) if pie else 0
            elif p[0] == "frame":
                frames.append(p[1:])
            elif p[0] == "guest":
                guests.append((p[1], short_line(p[2]), "inline" in p[3:]))
    specs = []
    for name, kind, *flags in frames:
        opt = "opt" in flags
        if kind == "jit":
            lo, hi = blobs[name][:2] if name != "*" else (None, None)
        else:
            if name not in syms:
                raise ValueError("%s: %s is not in the symbol table of %s" % (path, name, exe))
            value, size = syms[name]
            lo, hi = base + value, base + value + max(size, 1)
        specs.append(Spec(name, lo, hi, kind, opt))
    return Expect(specs, blobs, exe, base, guests or None)


def load_child_expect(path):
    """tests/child.c's expect file: "name lo hi kind fp|-" a line."""
    specs, blobs = [], {}
    with open(path) as f:
        for line in f:
            name, lo, hi, kind, fp = line.split()
            lo, hi = int(lo, 16), int(hi, 16)
            jit = kind != "c"
            if jit:
                blobs[name] = (lo, hi, hi)
            specs.append(Spec(name, lo, hi, "jit" if jit else "c", False, fp == "fp"))
    return Expect(specs, blobs)


def base_name(name):
    """h_probe.constprop.0 -> h_probe; clock_nanosleep@GLIBC_2.2.5 -> clock_nanosleep."""
    return re.split(r"[.@(]", name, 1)[0] if name and not name.startswith(("tj:", "lua:", "py:")) else name


def relevant(samples, expect, names_jit, fp_only=False):
    """The samples a profile is judged on: those that hold the expected
    stack's innermost frame (the workload's spinning function) somewhere."""
    first = [s for s in expect.frames if s.fp or not fp_only][0]
    return [s for s in samples if any(matches(first, f, i, expect, names_jit) for i, f in enumerate(s))]


def matches(spec, frame, index, expect, names_jit):
    addr, name = frame
    if spec.many and addr is None:
        return spec.names is not None and name not in UNNAMED and base_name(name) in spec.names
    if addr is not None:
        pc = addr - (1 if index else 0)
        if spec.kind == "jit" and spec.name == "*":
            inside = expect.blob_at(pc) is not None
        else:
            inside = spec.lo <= pc < spec.hi
        if not inside:
            return False
        if spec.kind != "jit":
            return True
        if name in UNNAMED:
            return not names_jit
        return name == spec.name or (spec.name == "*" and name in expect.blobs)
    if name in UNNAMED:
        return False
    if spec.kind == "jit":
        return name == spec.name or (spec.name == "*" and name in expect.blobs)
    return base_name(name) == spec.name


def label(frame, index, expect, names):
    """A frame as the logs show it: its name, or the expected function its
    address falls in, or ?."""
    addr, name = frame
    if name not in UNNAMED:
        return name
    if addr is not None:
        pc = addr - (1 if index else 0)
        for s in expect.frames:
            if s.lo is not None and s.lo <= pc < s.hi:
                return "[%s]" % s.name
        blob = expect.blob_at(pc)
        if blob:
            return "[%s]" % blob
        return "%#x" % addr
    return "?"


def judge(frames, expect, names_jit=False, first_only=False, fp_only=False, inline_dups=False):
    """(ok, why): do frames hold the expected sequence?  The sequence starts
    at the first frame that is the expected innermost function (first_only:
    at frame 0) and must go on one for one down to the last expected frame
    (main); frames past it are not judged.  fp_only: only the frames a
    frame-pointer walk can see.  inline_dups: a debugger's inlined frames
    repeat their C function."""
    specs = [s for s in expect.frames if s.fp or not fp_only]
    start = None
    for i, f in enumerate(frames[:1] if first_only else frames):
        if matches(specs[0], f, i, expect, names_jit):
            start = i
            break
    if start is None:
        return False, "no frame is %s (the innermost expected frame)" % specs[0].name
    k, prev = start, None
    for j, spec in enumerate(specs):
        while (inline_dups and prev is not None and prev.kind == "c" and not prev.many and k < len(frames)
               and matches(prev, frames[k], k, expect, names_jit)):
            k += 1
        if spec.many:
            # a run, each frame in the range and not the next expected one
            nxt = specs[j + 1] if j + 1 < len(specs) else None
            start_run = k
            while (k < len(frames) and matches(spec, frames[k], k, expect, names_jit)
                   and not (nxt and matches(nxt, frames[k], k, expect, names_jit))):
                k += 1
            if k > start_run:
                prev = spec
                continue
        elif k < len(frames) and matches(spec, frames[k], k, expect, names_jit):
            k, prev = k + 1, spec
            continue
        if spec.opt:
            continue
        if k >= len(frames):
            return False, "the stack ends after %d frames; missing %s" % (k, spec.name)
        return False, "frame %d is %s, expected %s" % (k, label(frames[k], k, expect, names_jit),
                                                       spec.name)
    return True, "%d frames match" % (k - start)


def short_line(where):
    """"/path/to/probe.tj:28" -> "probe.tj:28": tools print the file as
    given, as compiled or as a base name."""
    return os.path.basename(where) if where else where


def judge_guests(got, expect, lines=True):
    """(ok, why): does a tool's sequence of guest frames, innermost first,
    (name, "FILE:LINE" or None) for each JIT function it shows, inlined or
    not, equal the workload's?  lines=False: the tool shows no lines (a
    perf map), so only the names and their order are judged."""
    want = [(n, w if lines else None) for n, w, _ in expect.guests]
    have = [(n, short_line(w) if lines else None) for n, w in got]
    if have == want:
        return True, "%d guest frames at their lines" % len(want) if lines else \
            "%d guest frames in order" % len(want)
    for i, (h, w) in enumerate(zip(have, want)):
        if h != w:
            return False, "guest frame %d is %s, expected %s" % (
                i, " ".join(x for x in h if x), " ".join(x for x in w if x))
    return False, "%d guest frames, expected %d" % (len(have), len(want))


def describe(frames, expect):
    return " ".join(label(f, i, expect, True) for i, f in enumerate(frames))


# ---- tools' output -> frames ------------------------------------------------------

HEX = re.compile(r"0x[0-9a-fA-F]+")


def parse_bracketed(text):
    """The probe's in-process unwinders: "[0xADDR]" at the end of a line
    (backtrace_symbols_fd prints "file(+off)[0xADDR]")."""
    frames = []
    for line in text.splitlines():
        m = re.search(r"\[(0x[0-9a-f]+)\]\s*$", line)
        if m:
            frames.append((int(m.group(1), 16), None))
    return frames


def parse_child_names(text):
    """tests/child.c's own report: "backtrace: c_inner jit:region ..." (it
    names each return address from its expect table; ? when none)."""
    for line in text.splitlines():
        m = re.match(r"(backtrace|_Unwind_Backtrace|unw_backtrace|unw_step|crash|libbacktrace): (.*)",
                     line)
        if m:
            return [(None, None if n == "?" else n) for n in m.group(2).split()]
    return []


def one_per_pc(frames):
    """Symbolizing reporters (libbacktrace, ASan) list a pc once per function
    inlined at it: one frame."""
    out = []
    for f in frames:
        if not out or f[0] is None or out[-1][0] != f[0]:
            out.append(f)
    return out


def parse_libbacktrace(text):
    """The probe's libbacktrace report: "NAME [0xPC]" a line.  libbacktrace
    hands over pc - 1 for a return address (the call), as the judge's own
    address - 1 does again: still inside the call."""
    frames = []
    for line in text.splitlines():
        m = re.match(r"(\S+) \[(0x[0-9a-f]+)\]$", line)
        if m:
            frames.append((int(m.group(2), 16), None))
    return one_per_pc(frames)


def parse_asan(text):
    """AddressSanitizer's report: {"access": frames, "freed": frames,
    "allocated": frames}, from its "    #N 0xPC in NAME FILE" lines.  ASan
    prints return addresses minus one, and JIT frames as "(<unknown
    module>)": they are judged by address."""
    stacks, cur = {}, None
    for line in text.splitlines():
        if "ERROR: AddressSanitizer" in line:
            cur = stacks.setdefault("access", [])
        elif re.match(r"freed by thread", line):
            cur = stacks.setdefault("freed", [])
        elif re.match(r"previously allocated by thread", line):
            cur = stacks.setdefault("allocated", [])
        elif cur is not None:
            m = re.match(r"\s+#\d+ (0x[0-9a-f]+)", line)
            if m:
                cur.append((int(m.group(1), 16), None))
            elif cur and not line.strip():
                cur = None
    return {k: one_per_pc(v) for k, v in stacks.items()}


def bpftrace_stacks(text):
    """bpftrace's map of ustack(perf) keys: "@[", one "\tADDR SYM+OFF
    (MODULE)" line a frame ("\tADDR 0xADDR ([unknown])" when unnamed),
    "]: COUNT".  Each stack counts COUNT samples: [(addr, symbol or None)]
    a sample, the symbol as printed (a perf map line's whole chain)."""
    samples, cur = [], None
    for line in text.splitlines():
        if line.startswith("@["):
            cur = []
            continue
        m = re.match(r"\]: (\d+)", line)
        if m and cur is not None:
            samples += [cur] * int(m.group(1))
            cur = None
            continue
        m = cur is not None and re.match(r"\s+([0-9a-f]+) (lua:\S+? \(trace \d+\)|%s(?: <- %s)*|.+?)"
                                         r"(?:\+\d+)? \(" % (PY_NAME, PY_NAME), line)
        if m:
            # an unknown symbol is printed as its address: no name
            name = None if m.group(2) in UNNAMED or m.group(2).startswith("0x") else m.group(2)
            cur.append((int(m.group(1), 16), name))
    return samples


def parse_bpftrace(text):
    """bpftrace's samples (bpftrace_stacks), each frame named as its native
    frame.  Addresses are absolute; a JIT frame's name comes from the perf
    map."""
    return [[(a, native_name(n)) for a, n in s] for s in bpftrace_stacks(text)]


def bpftrace_chains(text):
    """Each bpftrace stack's JIT functions, from the perf map's chains of
    guest names, one list a sample (as parse_bpftrace counts them)."""
    return [[(g, None) for _, n in s if n and n.startswith("tj:") for g in n.split(" <- ")]
            for s in bpftrace_stacks(text)]


def native_name(name):
    """A perf map line for guest code is named by its chain of guest
    functions, innermost first ("tj:leaf <- tj:run"): the native frame is
    the blob's, the last of them."""
    return name.rsplit(" <- ", 1)[-1] if name else name


def parse_heaptrack(text):
    """heaptrack_print's first backtrace ("N calls to allocation functions
    with ... from", then "  NAME" or "  0xADDR" a frame with "    at" and
    "    in MODULE" lines under it).  Frames without "in" are the functions
    the frame above was inlined into, the last of them the real one: the
    group is one frame, by that name.  Named frames are judged by name,
    unknown ones (JIT code) by address, which heaptrack prints as the
    return address minus one."""
    entries, inside = [], False  # [frame, has "in"]
    for line in text.splitlines():
        if re.match(r"\d+ calls to allocation functions", line):
            if inside:
                break
            inside = True
            continue
        if not inside:
            continue
        if line.startswith("    ") and entries:
            entries[-1][1] = entries[-1][1] or line.strip().startswith("in ")
            continue
        if not line.startswith("  ") or not line.strip():
            if entries:
                break
            continue
        word = line.split()[0]
        entries.append([(int(word, 16), None) if word.startswith("0x") else (None, word), False])
    frames = []
    for frame, has_module in entries:
        if frames and not has_module:
            frames[-1] = frame
        else:
            frames.append(frame)
    return frames


def parse_cpuprofile(path):
    """gperftools' raw CPU profile (its docs/cpuprofile-fileformat.html):
    native-endian words; a header (0, 3, 0, period, 0), then records
    (count, depth, pc...), ended by (0, 1, 0).  Each record counts `count`
    samples; its first pc is where the signal landed, the rest return
    addresses."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    words = struct.unpack_from("<%dQ" % (len(data) // 8), data)
    if len(words) < 5 or words[:3] != (0, 3, 0):
        raise ValueError("%s is not a CPU profile" % path)
    samples, i = [], 5
    while i + 2 <= len(words):
        count, depth = words[i], words[i + 1]
        pcs = words[i + 2:i + 2 + depth]
        i += 2 + depth
        if count == 0 and depth == 1 and pcs == (0,):
            break
        samples += [[(pc, None) for pc in pcs]] * count
    return samples


def parse_addr_name(text):
    """mx-dwfl, mx-unw-ptrace: "0xPC NAME[ at FILE:LINE]" a line.  mx-dwfl
    --inline puts the functions inlined at a frame's pc before it, each
    "... inlined": the native frame is the line that follows them."""
    frames = []
    for line in text.splitlines():
        if line.endswith(" inlined"):
            continue
        p = line.split(None, 1)
        if p and p[0].startswith("0x"):
            name = re.sub(r" at \S+:\d+$", "", p[1].strip()) if len(p) > 1 else None
            frames.append((int(p[0], 16), name))
    return frames


def guests_addr_name(text):
    """The JIT functions of mx-dwfl --inline, inline frames included."""
    return [(m.group(1), m.group(2))
            for m in re.finditer(r"^0x[0-9a-f]+ (%s) at (\S+:\d+)(?: inlined)?$" % JIT_NAME, text, re.M)]


def parse_samples(text):
    """mx-fpwalk: "# sample K" then "0xPC" lines."""
    samples = []
    for line in text.splitlines():
        if line.startswith("# sample"):
            samples.append([])
        elif line.startswith("0x") and samples:
            samples[-1].append((int(line.split()[0], 16), None))
    return samples


def parse_gdb(text):
    """gdb's "#N  0xADDR in NAME (...)" / "#N  NAME (...)".  A frame other
    than #0 with no address of its own is the function the frame above it
    was inlined into: it takes that frame's place."""
    frames = []
    for line in text.splitlines():
        m = re.match(r"#(\d+)\s+(?:(0x[0-9a-f]+) in )?(%s|\S+)" % JIT_NAME, line)
        if not m:
            continue
        addr = int(m.group(2), 16) if m.group(2) else None
        name = None if m.group(3) == "??" else m.group(3)
        if addr is None and frames and m.group(1) != "0":
            frames[-1] = (frames[-1][0], name)
        else:
            frames.append((addr, name))
    return frames


def guests_gdb(text):
    """The JIT functions of gdb's bt, inline frames included: "#N  [0xADDR
    in ]tj:NAME (...) at FILE:LINE"."""
    return [(m.group(1), "%s:%s" % (m.group(2), m.group(3)))
            for m in re.finditer(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(%s) \(.*\) at (\S+):(\d+)$" % JIT_NAME,
                                 text, re.M)]


def parse_lldb(text):
    """lldb's "frame #N: 0xADDR MODULE`NAME + OFF at FILE:LINE" (or just the
    address).  lldb shows frame #0 when it attaches and again in `bt`: the
    last listing counts."""
    frames, fold = [], False
    for line in text.splitlines():
        m = re.search(r"frame #(\d+): (0x[0-9a-f]+)(?: \S+?`(%s|[^\s(]+))?" % JIT_NAME, line)
        if not m:
            continue
        if m.group(1) == "0":
            frames, fold = [], False
        if fold:
            # the function the frame above was inlined into: the same
            # native frame (lldb gives it the inlined range's address)
            frames[-1] = (frames[-1][0], m.group(3))
        else:
            frames.append((int(m.group(2), 16), m.group(3)))
        fold = " [inlined] " in line
    return frames


def guests_lldb(text):
    """The JIT functions of lldb's last bt, inline frames included:
    "`tj:OUTER [inlined] tj:NAME at FILE:LINE" or "`tj:NAME at FILE:LINE"."""
    listing = text[text.rfind("frame #0:"):] if "frame #0:" in text else text
    out = []
    for line in listing.splitlines():
        m = re.search(r"`(%s)(?: \[inlined\] (%s))? at (\S+?):(\d+)" % (JIT_NAME, JIT_NAME), line)
        if m:
            out.append((m.group(2) or m.group(1), "%s:%s" % (m.group(3), m.group(4))))
    return out


def parse_eu_stack(text, tid=None):
    """eu-stack's "#N  0xADDR [NAME]" of the first thread."""
    frames, seen_thread = [], False
    for line in text.splitlines():
        if line.startswith("TID "):
            if seen_thread:
                break
            seen_thread = True
            continue
        m = re.match(r"#\d+\s+(0x[0-9a-f]+)(?:\s+-\s+1)?\s*(%s|\S+)?" % JIT_NAME, line)
        if m:
            frames.append((int(m.group(1), 16), m.group(2)))
    return frames


def parse_valgrind(text):
    """`vgdb v.info scheduler`: Thread 1's "==PID== at|by 0xADDR: NAME (...)"."""
    frames, inside = [], False
    for line in text.splitlines():
        if line.startswith("Thread 1:"):
            inside = True
            continue
        if inside:
            m = re.match(r"==\d+==\s+(?:at|by) (0x[0-9A-Fa-f]+): (\S+)", line)
            if not m:
                if frames:
                    break
                continue
            frames.append((int(m.group(1), 16), None if m.group(2) == "???" else m.group(2)))
    return frames


def parse_perf(text, pid=None, chains=False):
    """`perf script -F pid,ip,sym`: one sample a block, "PID" then "ADDR SYM"
    lines.  perf prints addresses relative to their file, so a named frame
    is judged by its name; an unnamed one ([unknown], anonymous JIT code) by
    its address, which is absolute there.  Inlined entries are dropped: they
    repeat the frame that follows."""
    samples, cur = [], None
    for line in text.splitlines() + [""]:
        if not line.strip():
            if cur:
                samples.append(cur)
            cur = None
            continue
        if not line.startswith("\t"):  # "PID" (right-aligned) opens a sample
            cur = [] if pid is None or line.split()[0] == str(pid) else None
            continue
        if cur is None:
            continue
        p = line.split(None, 1)
        sym = p[1].strip() if len(p) > 1 else "[unknown]"
        if sym.endswith("(inlined)"):
            continue
        if sym in UNNAMED:
            cur.append((int(p[0], 16), None))
        else:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            cur.append((None, sym if chains else native_name(sym)))
    return samples


def guests_jitstack(text):
    """The JIT functions of jitstack --json's first thread, inline frames
    included, at their lines."""
    import json
    try:
        frames = json.loads(text)["threads"][0]["frames"]
    except (ValueError, KeyError, IndexError, TypeError):
        return []
    return [(f["function"], "%s:%s" % (f.get("file"), f.get("line")))
            for f in frames if re.match(JIT_NAME + "$", str(f.get("function", "")))]


def perf_chains(text, pid=None):
    """`perf script -F pid,ip,sym`, each sample's JIT functions in order:
    a perf map line for guest code is named by its chain, innermost first,
    "tj:leaf <- tj:mid <- tj:run" (docs/API.md, "Guest frames")."""
    out = []
    for frames in parse_perf(text, pid, chains=True):
        names = []
        for _, name in frames:
            if name and name.startswith("tj:"):
                names.extend((n, None) for n in name.split(" <- "))
        out.append(names)
    return out


def parse_jitstack(text):
    """jitstack's --json (fields looked up by their likely names: the tool is
    being written as this harness is), else its text: "0xADDR NAME" lines."""
    import json
    try:
        doc = json.loads(text)
    except ValueError:
        return parse_addr_name(re.sub(r"^\s*#\d+\s+", "", text, flags=re.M))

    def frames_of(node):
        if isinstance(node, dict):
            for key in ("frames", "stack", "callchain"):
                if isinstance(node.get(key), list):
                    return node[key]
            for v in node.values():
                r = frames_of(v)
                if r is not None:
                    return r
        if isinstance(node, list):
            for v in node:
                r = frames_of(v)
                if r is not None:
                    return r
        return None

    out = []
    for fr in frames_of(doc) or []:
        if not isinstance(fr, dict):
            continue
        if fr.get("inlined"):
            # a function inlined at the pc of the frame below it: the native
            # frames are judged here, as gdb's are (parse_gdb), and that
            # frame names the function the code belongs to
            continue
        if fr.get("python"):
            # a Python function read from CPython's interpreter, placed above
            # the eval loop frame that runs it: no native frame of its own
            continue
        addr = next((fr[k] for k in ("pc", "ip", "addr", "address") if k in fr), None)
        if isinstance(addr, str):
            addr = int(addr, 16) if addr.startswith("0x") else int(addr)
        name = next((fr[k] for k in ("function", "func", "name", "symbol") if fr.get(k)), None)
        out.append((addr, name))
    return out


def exe_of_pid(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return None
