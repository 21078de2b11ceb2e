#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_reuse.py - what a consumer shows of JIT code whose addresses were
freed and reused (tests/reuse_child.c writes the expect file).

  check_reuse.py commands gdb|lldb EXPECT
      the debugger's command file: every thread's backtrace, then a symbol
      lookup (gdb `info symbol`, lldb `image lookup -a`) of every address
      the expect file names
  check_reuse.py judge gdb|lldb EXPECT OUTPUT
  check_reuse.py judge jitstack EXPECT JSON IMAGES
      judge the tool's output (jitstack: its --json stacks and its --images
      listing, whose functions stand in for a symbol lookup)

The rules, from the expect file:
  - each parked thread shows a frame named after the new blob it waits in,
    at an address inside that blob, called from park_caller;
  - no frame anywhere is named after an old blob (none runs);
  - `kept` addresses (old blobs never unpublished) are named after their
    blob: the control that the lookup works at all;
  - `reused` addresses are named after the new blob and never the old one;
  - `freed` addresses are named after nothing.
Each failed rule prints a line "not ok: ..."; exit 0 when all hold, 1
otherwise, 2 on usage errors or unreadable output.
"""
import json
import re
import sys


def read_expect(path):
    e = {"park": [], "caller": None, "live": [], "reused": [], "freed": [], "kept": []}
    for line in open(path):
        w = line.split()
        if not w:
            continue
        if w[0] == "park":
            e["park"].append((int(w[1]), w[2], int(w[3], 16), int(w[4], 16)))
        elif w[0] == "caller":
            e["caller"] = (w[1], int(w[2], 16), int(w[3], 16))
        elif w[0] == "live":
            e["live"].append((w[1], int(w[2], 16), int(w[3], 16)))
        elif w[0] == "reused":
            e["reused"].append((int(w[1], 16), w[2], w[3]))
        elif w[0] == "freed":
            e["freed"].append((int(w[1], 16), w[2]))
        elif w[0] == "kept":
            e["kept"].append((int(w[1], 16), w[2]))
    return e


def probes(e):
    return [a for a, *_ in e["reused"]] + [a for a, _ in e["freed"]] + [a for a, _ in e["kept"]]


def commands(tool, e):
    if tool == "gdb":
        out = ["set pagination off", "thread apply all bt"]
        for a in probes(e):
            out += ["echo probe %#x\\n" % a, "info symbol %#x" % a]
    else:
        out = ["bt all"] + ["image lookup -a %#x" % a for a in probes(e)]
    print("\n".join(out))


# ---- readers: threads as lists of (addr, name), lookups as {addr: [names]} ----

GDB_FRAME = re.compile(r"^#\d+\s+(?:(0x[0-9a-f]+) in )?(\S+)")
GDB_SYMBOL = re.compile(r"^(\S+)(?: \+ \d+)? in section ")


def read_gdb(path):
    threads, lookups, probe = [], {}, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("Thread ") and line.endswith(":"):
            threads.append([])
            probe = None
        elif line.startswith("#") and threads and probe is None:
            m = GDB_FRAME.match(line)
            if m:
                threads[-1].append((int(m.group(1), 16) if m.group(1) else None, m.group(2)))
        elif line.startswith("probe 0x"):
            probe = int(line.split()[1], 16)
            lookups[probe] = []
        elif probe is not None:
            m = GDB_SYMBOL.match(line)
            if m:
                lookups[probe].append(m.group(1))
    return threads, lookups


LLDB_FRAME = re.compile(r"frame #\d+: (0x[0-9a-f]+)(?: [^`\s]*`([^\s(]+))?")
LLDB_LOOKUP = re.compile(r"^\(lldb\) image lookup -a (0x[0-9a-f]+)")


def read_lldb(path):
    threads, lookups, probe, in_bt = [], {}, None, False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("(lldb) "):
            in_bt = line == "(lldb) bt all"
            m = LLDB_LOOKUP.match(line)
            probe = int(m.group(1), 16) if m else None
            if probe is not None:
                lookups[probe] = []
        elif in_bt and re.match(r"^[* ] thread #\d+", line):
            threads.append([])
        elif in_bt and threads and "frame #" in line:
            m = LLDB_FRAME.search(line)
            if m:
                threads[-1].append((int(m.group(1), 16), m.group(2)))
        elif probe is not None and line.strip().startswith("Summary:"):
            s = line.split("Summary:", 1)[1].strip()
            if "`" in s:
                lookups[probe].append(s.split("`", 1)[1].split(" + ")[0].strip())
    return threads, lookups


IMAGE_FUNC = re.compile(r"^\s+0x([0-9a-f]+)\s+(\d+)\s+(\S+)$")


def read_jitstack(json_path, images_path, e):
    d = json.load(open(json_path))
    threads = [[(int(f["pc"], 16), f["function"]) for f in t["frames"]] for t in d["threads"]]
    funcs, usable = [], True
    for line in open(images_path, errors="replace"):
        if line.startswith("  rejected:"):
            usable = False
        elif line and not line[0].isspace():
            usable = True  # an image's header line
        m = IMAGE_FUNC.match(line)
        if m and usable:
            lo = int(m.group(1), 16)
            funcs.append((lo, lo + int(m.group(2)), m.group(3)))
    lookups = {a: [n for lo, hi, n in funcs if lo <= a < hi] for a in probes(e)}
    return threads, lookups


# ---- the rules ------------------------------------------------------------------


def judge(e, threads, lookups):
    bad = []
    checks = 0
    cname, clo, chi = e["caller"]

    def pc_of(frames, i):
        a = frames[i][0]
        return None if a is None else a - (1 if i else 0)

    for tid, name, lo, hi in e["park"]:
        checks += 1
        found = [(t, i) for t in threads for i, f in enumerate(t) if f[1] == name]
        if not found:
            shown = [f[1] for t in threads for f in t if f[0] is not None and lo <= f[0] - 1 < hi]
            bad.append("no thread shows a frame named %s (the frame in its code is named %s)"
                       % (name, shown[0] if shown else "nowhere: no frame is in its code"))
            continue
        t, i = found[0]
        pc = pc_of(t, i)
        if pc is None or not lo <= pc < hi:
            bad.append("the frame named %s is at %s, outside the blob [%#x, %#x)"
                       % (name, "?" if pc is None else "%#x" % pc, lo, hi))
        nxt = pc_of(t, i + 1) if i + 1 < len(t) else None
        if nxt is None or not clo <= nxt < chi:
            bad.append("the frame after %s is %s, not %s"
                       % (name, t[i + 1][1] if i + 1 < len(t) else "missing", cname))
    for t in threads:
        for i, (a, n) in enumerate(t):
            if n and n.startswith("old_"):
                bad.append("a frame is named after the dead or never-run %s (at %s)"
                           % (n, "?" if a is None else "%#x" % a))
    checks += 1

    def jit_names(a):
        if a not in lookups:
            bad.append("no lookup of %#x in the output" % a)
            return None
        return [n for n in lookups[a] if n.startswith(("old_", "new_"))]

    for a, name in e["kept"]:
        checks += 1
        names = jit_names(a)
        if names is not None and names != [name]:
            bad.append("lookup of %#x (in %s, never unpublished: the control) gives %s"
                       % (a, name, names or "nothing"))
    for a, name, old in e["reused"]:
        checks += 1
        names = jit_names(a)
        if names is None:
            continue
        if old in names:
            bad.append("lookup of %#x (now %s's) names the dead %s: %s" % (a, name, old, names))
        elif names != [name]:
            bad.append("lookup of %#x (now %s's) gives %s" % (a, name, names or "nothing"))
    for a, old in e["freed"]:
        checks += 1
        names = jit_names(a)
        if names is None or not names:
            continue
        if old in names:
            bad.append("lookup of %#x (freed from %s, not reused) names the dead %s" % (a, old, old))
        else:
            bad.append("lookup of %#x (freed from %s, not reused) gives %s" % (a, old, names))
    for b in bad:
        print("not ok: " + b)
    print("%d checks, %d failed" % (checks, len(bad)))
    return 1 if bad else 0


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "commands" and a[1] in ("gdb", "lldb"):
        commands(a[1], read_expect(a[2]))
        return 0
    if len(a) >= 4 and a[0] == "judge":
        e = read_expect(a[2])
        if not e["park"] or e["caller"] is None:
            print("the expect file %s has no parked threads" % a[2])
            return 2
        if a[1] == "gdb" and len(a) == 4:
            threads, lookups = read_gdb(a[3])
        elif a[1] == "lldb" and len(a) == 4:
            threads, lookups = read_lldb(a[3])
        elif a[1] == "jitstack" and len(a) == 5:
            threads, lookups = read_jitstack(a[3], a[4], e)
        else:
            print(__doc__)
            return 2
        if not threads:
            print("no thread's backtrace in the output")
            return 2
        return judge(e, threads, lookups)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
