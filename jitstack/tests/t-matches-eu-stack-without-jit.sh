# SPDX-License-Identifier: MIT
# On programs without JIT code jitstack's frames are eu-stack's: the same
# threads, and per thread the same function names in the same order (both
# read the same modules through libdwfl; jitstack must not lose or invent
# a frame).  The functions inlined at a frame's pc are frames of their
# own, as eu-stack -i shows them: with -s (DWARF from separate debuginfo
# too, as eu-stack reads it) jitstack has eu-stack -i's frames at the same
# pcs, and the inlined ones by the same names.  (The physical frames'
# names differ there: eu-stack -i names them from DWARF, pause's
# __libc_pause, jitstack from the symbol tables, as eu-stack without -i.)
# A multithreaded C program, sleep(1), and inl.c built with -O2 (leaf and
# mid inlined into outer).
. "$(dirname "$0")/lib.sh"
need_cmd eu-stack
need_file "$JTB/threads" "make jitstack-check"
need_file "$JTB/inl" "make jitstack-check"

compare() { # PID WHAT MIN-INLINED
	limit 60 "$JS" -p "$1" --json > js.json || fail "$2: jitstack exited $?"
	limit 60 "$JS" -s -p "$1" --json > js-s.json || fail "$2: jitstack -s exited $?"
	limit 60 eu-stack -p "$1" > eu.out 2>&1 || fail "$2: eu-stack exited $?"
	limit 60 eu-stack -i -p "$1" > eu-i.out 2>&1 || fail "$2: eu-stack -i exited $?"
	python3 - js.json js-s.json eu.out eu-i.out "$3" <<'PY' > cmp.out || { cat cmp.out; fail "$2: jitstack's frames differ from eu-stack's"; }
import json, re, sys
js, js_s, eu, eu_i, min_inlined = sys.argv[1:]

def eu_frames(path):  # {tid: [(pc, first word of the name or "??")]}
    out, tid = {}, None
    for line in open(path):
        m = re.match(r"TID (\d+):", line)
        if m:
            tid = int(m.group(1)); out[tid] = []
            continue
        m = re.match(r"#\d+\s+(0x[0-9a-f]+)\s*(\S*)", line)
        if m and tid is not None:
            out[tid].append((int(m.group(1), 16), m.group(2) or "??"))
    return out

def js_frames(path):  # {tid: [(pc, name, inlined)]}
    return {t["tid"]: [(int(f["pc"], 16), f["function"] or "??", f.get("inlined", False)) for f in t["frames"]]
            for t in json.load(open(path))["threads"]}

ok, inlined = True, 0
a, b = js_frames(js), eu_frames(eu)
assert a and sorted(a) == sorted(b), ("threads", sorted(a), sorted(b))
for tid in sorted(a):  # the physical frames: eu-stack's names
    mine = [n for _, n, i in a[tid] if not i]
    theirs = [n for _, n in b[tid]]
    if mine != theirs:
        print("TID %d without -i:\n  eu-stack: %s\n  jitstack: %s" % (tid, theirs, mine)); ok = False
physical = eu_frames(eu)
a, b = js_frames(js_s), eu_frames(eu_i)
assert sorted(a) == sorted(b), ("threads with -i", sorted(a), sorted(b))
for tid in sorted(a):
    # eu-stack -i adds the inlined frames to eu-stack's: as many as
    # jitstack marks inlined, every frame at eu-stack -i's pc, and the
    # inlined ones by its names
    n_inl = sum(1 for _, _, i in a[tid] if i)
    mine = [(pc, n if i else "-") for pc, n, i in a[tid]]
    theirs = [(pc, "-" if k < len(mine) and mine[k][1] == "-" else n) for k, (pc, n) in enumerate(b[tid])]
    if mine != theirs or n_inl != len(b[tid]) - len(physical.get(tid, [])):
        print("TID %d with -i:\n  eu-stack: %s\n  jitstack: %s" % (tid, b[tid], a[tid])); ok = False
    inlined += n_inl
assert inlined >= int(min_inlined), "%d inlined frames, expected at least %s" % (inlined, min_inlined)
print("%d threads, %d inlined frames" % (len(a), inlined))
sys.exit(0 if ok else 1)
PY
	note "$2: $(cat cmp.out), identical"
}

start_child th.out "$JTB/threads"
compare "$CHILD_PID" threads 0
start_child inl.out "$JTB/inl"
compare "$CHILD_PID" inl 2
sleep 60 & SLEEP=$!
CLEANUP_PIDS="$CLEANUP_PIDS $SLEEP"
sleep 0.2
compare "$SLEEP" sleep 0
pass "jitstack and eu-stack name the same frames per thread on programs without JIT code, and eu-stack -i the same inlined ones"
