# SPDX-License-Identifier: MIT
# lli.sh - sourced by the LLVM JIT tests after lib.sh: rec.c compiled to IR
# (clang-19 -g: DWARF 5), the lines its frames must be at (from its
# markers, never from a tool), lli-19 started on it, and the check of
# jitstack's JSON against them.
need_cmd lli-19
need_cmd clang-19
REC=$ROOT/jitstack/tests/rec.c
cp "$REC" rec.c # the IR names this file: lines are read from it
clang-19 -g -O0 -S -emit-llvm -o rec.ll rec.c || fail "clang-19 cannot compile rec.c to IR"
marker() { grep -n "/\* line: $1 \*/" rec.c | cut -d: -f1; }
L_LEAF=$(marker leaf)
L_CALLS_LEAF=$(marker "recurse calls leaf")
L_RECURSES=$(marker "recurse calls recurse")
L_MAIN=$(marker main)
# main calls recurse(DEPTH): DEPTH + 1 frames of recurse, the innermost
# at the call of leaf
DEPTH=$(sed -n 's/.*recurse(\([0-9]*\)); \/\* line: main.*/\1/p' rec.c)
[ -n "$L_LEAF" ] && [ -n "$L_CALLS_LEAF" ] && [ -n "$L_RECURSES" ] && [ -n "$L_MAIN" ] && [ -n "$DEPTH" ] ||
	fail "rec.c lost its line markers"
KINDS="mcjit orc orc-lazy"

# Start lli-19 -jit-kind=KIND on rec.ll; CHILD_PID.
start_lli() { # KIND
	start_child "lli-$1.out" lli-19 -jit-kind="$1" rec.ll
}

# Check jitstack's JSON (FILE) for rec.c's stack: leaf at its loop, DEPTH + 1
# frames of recurse, main at its call, each JIT frame at its line in
# rec.c, then lli's own frames down to _start; every image that says it
# has lines gives its frames a line, and none is rejected.  Prints the
# JIT frames, one line each.
check_rec_json() { # FILE
	python3 - "$1" "$(pwd)/rec.c" "$L_LEAF" "$L_CALLS_LEAF" "$L_RECURSES" "$L_MAIN" "$DEPTH" <<'PY'
import json, sys
path, src = sys.argv[1], sys.argv[2]
leaf, calls_leaf, recurses, main_line, depth = map(int, sys.argv[3:])
d = json.load(open(path))
images = {im["label"]: im for im in d["jit"]["images"]}
bad = [im for im in images.values() if im["status"] == "rejected"]
assert not bad, "rejected images: %s" % bad
code = [im for im in images.values() if im["status"] == "ok"]
assert code and all(im["lines"] for im in code), "an image without lines: %s" % code
want = [("leaf", leaf)] + [("recurse", calls_leaf)] + [("recurse", recurses)] * depth + [("main", main_line)]
frames = [f for f in d["threads"][0]["frames"]]
i = next((k for k, f in enumerate(frames) if f["function"] == "leaf"), None)
assert i == 0, "the innermost frame is not leaf: %s" % frames[:2]
for k, (name, line) in enumerate(want):
    f = frames[k]
    got = (f["function"], f.get("line"), f.get("file"))
    assert got == (name, line, src), "frame %d: %s, expected %s at %s:%d" % (k, got, name, src, line)
    assert f["jit"] and f["source"] == "gdb-jit" and f["module"] in images, f
    print("#%d %s at %s:%d" % (k, name, "rec.c", line))
rest = frames[len(want):]
assert all(not f["jit"] for f in rest), "a JIT frame below main: %s" % rest
names = [f["function"] for f in rest]
assert "main" in names and names[-1] == "_start", "lli's own frames do not reach main and _start: %s" % names
for f in frames:  # no image claims lines its frames do not get
    im = images.get(f["module"])
    if im and im["status"] == "ok" and im["lines"]:
        assert "line" in f, "image %s says it has lines, frame %s has none" % (im["label"], f)
print("then %d frames of lli down to %s" % (len(rest), names[-1]))
PY
}
