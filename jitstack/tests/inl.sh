# SPDX-License-Identifier: MIT
# inl.sh - sourced by the inline-frame tests after lib.sh: inl.c's marked
# lines (the frames' expected lines, never from a tool), and the check of
# jitstack's JSON against them.  With lli.sh's LLVM: inl.c compiled to
# clang-19 -O1 -g IR, and lli-19 started on it.
INL=$ROOT/jitstack/tests/inl.c
inl_marker() { grep -n "/\* line: $1 \*/" "$INL" | cut -d: -f1; }
L_LEAF=$(inl_marker leaf)
L_MID=$(inl_marker "mid calls leaf")
L_OUTER=$(inl_marker "outer calls mid")
L_MAIN=$(inl_marker "main calls outer")
[ -n "$L_LEAF" ] && [ -n "$L_MID" ] && [ -n "$L_OUTER" ] && [ -n "$L_MAIN" ] || fail "inl.c lost its line markers"

# inl.c as IR for lli-19 (-O1: mid and leaf inlined into outer, as the IR's
# debug locations say: DW_TAG_inlined_subroutine in the JIT's image).
inl_ir() {
	need_cmd lli-19
	need_cmd clang-19
	cp "$INL" inl.c # the IR names this file: lines are read from it
	clang-19 -g -O1 -S -emit-llvm -o inl.ll inl.c || fail "clang-19 cannot compile inl.c to IR"
	grep -q 'DILocation(.*inlinedAt:' inl.ll || fail "clang-19 -O1 inlined nothing into outer"
}

# Start lli-19 -jit-kind=KIND on inl.ll (ARGS: inl.c's, "spin"); CHILD_PID.
start_lli_inl() { # KIND [ARGS]
	kind=$1; shift
	start_child "lli-$kind.out" lli-19 -jit-kind="$kind" inl.ll "$@"
}

# Check jitstack's JSON (FILE) for inl.c's stack: leaf and mid (inlined)
# and outer at the same pc, then main; each at its marked line of SRC
# ("*/inl.c": any path of that name), numbered one after the other; with
# JIT=1 all four JIT frames of a GDB JIT image.  Before leaf, only the
# frames of pause (libc), or none when it spins.  Prints the four frames,
# one line each, as "#N NAME at inl.c:LINE [inlined]".
check_inl_json() { # FILE SRC JIT
	python3 - "$1" "$2" "$3" "$L_LEAF" "$L_MID" "$L_OUTER" "$L_MAIN" <<'PY'
import json, os, sys
path, src, jit = sys.argv[1:4]
leaf, mid, outer, main_line = map(int, sys.argv[4:])
d = json.load(open(path))
frames = d["threads"][0]["frames"]
names = [f["function"] for f in frames]
assert "leaf" in names, "no frame is leaf: %s" % names
i = names.index("leaf")
assert all(not f["jit"] and not f["inlined"] for f in frames[:i]), "frames before leaf: %s" % frames[:i]
want = [("leaf", leaf, True), ("mid", mid, True), ("outer", outer, False), ("main", main_line, False)]
for k, (name, line, inlined) in enumerate(want):
    f = frames[i + k]
    got = (f["function"], f.get("line"), f["inlined"])
    assert got == (name, line, inlined), "frame %d: %s, expected %s" % (i + k, got, (name, line, inlined))
    where = f.get("file") or ""
    assert where == src or (src == "*/inl.c" and os.path.basename(where) == "inl.c"), (where, src)
    assert f["index"] == i + k, f
    if jit == "1":
        assert f["jit"] and f["source"] == "gdb-jit" and f["module"].startswith("[jit 0x"), f
    assert ("offset" in f) == (not inlined), f
    print("#%d %s at inl.c:%d%s" % (i + k, name, line, " [inlined]" if inlined else ""))
assert frames[i]["pc"] == frames[i + 1]["pc"] == frames[i + 2]["pc"] != frames[i + 3]["pc"], frames[i:i + 4]
PY
}
