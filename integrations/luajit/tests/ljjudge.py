#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ljjudge.py - the LuaJIT tests' judge: what a tool printed against what
the workload's stack holds.

  ljjudge.py frames TOOL < OUTPUT > FRAMES
      TOOL: bt (ljprobe.c's "0xPC NAME" lines), gdb, lldb, jitstack (--json),
      dwfl (mx-dwfl's "0xPC NAME" lines), eu-stack.  FRAMES: one frame per
      line, innermost first, "0xPC<TAB>NAME" (NAME may hold spaces; "?" when
      the tool names nothing).
  ljjudge.py check EXPECT SCRIPT [--by-address] < FRAMES
      The stack must read, from the first ljp_inner on:
        ljp_inner, ljp_probe             (the probe: EXPECT's "c" lines)
        the trace the probe returns into (EXPECT's "ret" address, found in
                                         EXPECT.traces), by the name the
                                         workload's source gives it
        lua_pcall                        (luajit.c docall runs the script
                                         through lua_pcall, whose call into
                                         the interpreter is the trace's caller)
      and further down, in order, lua_cpcall and main (luajit.c main ->
      lua_cpcall(pmain)); the frames between (luajit's static functions, the
      interpreter) are not judged.  --by-address takes the trace frame by
      its pc (the tool names no JIT code: glibc backtrace()).
  ljjudge.py name EXPECT SCRIPT
      Print the expected name of the trace the probe returned into.

Expected names come from the workload's source: a traced loop is marked
`--> trace: FUNC` on its line, so the trace starting there is
"lua:FUNC@SCRIPT:LINE (trace N)", N from LuaJIT's own events (EXPECT.traces:
"N 0xADDR SIZE STARTLINE" lines the workload writes at each trace stop).
"""
import json
import os
import re
import sys

TRACE_NAME = re.compile(r"lua:\S*@\S*:\d+ \(trace \d+\)")


def markers(script):
    """{line: FUNC} of the `--> trace: FUNC` marks in the workload's source."""
    out = {}
    with open(script) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"--> trace: (\S+)", line)
            if m:
                out[i] = m.group(1)
    return out


def traces(expect):
    """[(n, lo, hi, startline)] from EXPECT.traces (the last trace of a number wins)."""
    by_n = {}
    with open(expect + ".traces") as f:
        for line in f:
            p = line.split()
            if len(p) == 4:
                n, lo, size, start = int(p[0]), int(p[1], 16), int(p[2]), int(p[3])
                by_n[n] = (n, lo, lo + size, start)
    return list(by_n.values())


def expected_trace(expect, script):
    """(name, lo, hi) of the trace the probe returned into."""
    ret = None
    with open(expect) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "ret":
                ret = int(p[1], 16)
    if ret is None:
        sys.exit("ljjudge: %s has no ret line" % expect)
    marks = markers(script)
    for n, lo, hi, start in traces(expect):
        if lo <= ret - 1 < hi:
            if start not in marks:
                sys.exit("ljjudge: trace %d starts at line %d, which no `--> trace:` marks" % (n, start))
            name = "lua:%s@%s:%d (trace %d)" % (marks[start], os.path.basename(script), start, n)
            return name, lo, hi
    sys.exit("ljjudge: the probe returned to %#x, in no trace of %s.traces" % (ret, expect))


# ---- each tool's output -> (pc, name) frames -----------------------------------

def named(text):
    """A trace's name if the text starts with one, else None."""
    m = TRACE_NAME.match(text)
    return m.group(0) if m else None


def parse_bt(text):
    frames = []
    for line in text.splitlines():
        p = line.split(None, 1)
        if p and re.match(r"0x[0-9a-f]+$", p[0]):
            frames.append((int(p[0], 16), p[1].strip() if len(p) > 1 else "?"))
    return frames


def parse_gdb(text):
    """#N  0xPC in NAME (ARGS) [at F:L | from LIB], or #N  NAME (ARGS) ... for frame 0."""
    frames = []
    for line in text.splitlines():
        m = re.match(r"#\d+\s+(?:(0x[0-9a-f]+) in )?(.*)$", line)
        if not m:
            continue
        pc = int(m.group(1), 16) if m.group(1) else None
        rest = m.group(2)
        name = named(rest) or rest.split(" (")[0].split()[0]
        frames.append((pc, name))
    return frames


def parse_lldb(text):
    """frame #N: 0xPC MODULE`NAME + OFF [at F:L]; nothing after the pc when unknown."""
    frames = []
    for line in text.splitlines():
        m = re.search(r"frame #\d+: (0x[0-9a-f]+)(.*)$", line)
        if not m:
            continue
        rest = m.group(2)
        name = None
        if "`" in rest:
            rest = rest.split("`", 1)[1]
            name = named(rest) or re.split(r" \+ | at |\(", rest)[0].strip()
        frames.append((int(m.group(1), 16), name or "?"))
    return frames


def parse_jitstack(text):
    d = json.loads(text)
    th = d["threads"][0]
    return [(int(f["pc"], 16) if isinstance(f["pc"], str) else f["pc"], f["function"] or "?")
            for f in th["frames"]]


def parse_eu_stack(text):
    """#N  0xPC NAME - MODULE (eu-stack's default form)."""
    frames = []
    for line in text.splitlines():
        m = re.match(r"#\d+\s+(0x[0-9a-f]+)\s*(.*)$", line)
        if m:
            rest = m.group(2).strip()
            name = named(rest) or (rest.split(" - ")[0].strip() or "?")
            frames.append((int(m.group(1), 16), name))
    return frames


PARSERS = {"bt": parse_bt, "dwfl": parse_bt, "gdb": parse_gdb, "lldb": parse_lldb,
           "jitstack": parse_jitstack, "eu-stack": parse_eu_stack}


# ---- the judge ---------------------------------------------------------------------

def check(expect, script, by_address, frames):
    tname, lo, hi = expected_trace(expect, script)
    got = []
    for i, (pc, name) in enumerate(frames):
        if by_address and pc is not None and lo <= pc - (1 if i else 0) < hi:
            name = tname
        got.append(name)
    want = ["ljp_inner", "ljp_probe", tname, "lua_pcall"]
    later = ["lua_cpcall", "main"]
    print("got:      " + " | ".join(got))
    print("expected: " + " | ".join(want) + " ... " + " ... ".join(later))
    ok = "ljp_inner" in got
    if ok:
        k = got.index("ljp_inner")
        ok = got[k:k + len(want)] == want
        rest = got[k + len(want):]
        for name in later:
            if ok and name in rest:
                rest = rest[rest.index(name) + 1:]
            else:
                ok = False
    print("result: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "frames" and a[1] in PARSERS:
        for pc, name in PARSERS[a[1]](sys.stdin.read()):
            print("%s\t%s" % ("0x%x" % pc if pc is not None else "-", name))
        return 0
    if len(a) >= 3 and a[0] in ("check", "name"):
        if a[0] == "name":
            print(expected_trace(a[1], a[2])[0])
            return 0
        frames = []
        for line in sys.stdin:
            pc, _, name = line.rstrip("\n").partition("\t")
            frames.append((int(pc, 16) if pc.startswith("0x") else None, name))
        return check(a[1], a[2], "--by-address" in a, frames)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
