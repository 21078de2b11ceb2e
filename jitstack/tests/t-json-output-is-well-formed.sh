# --json output parses and has the documented shape (jitstack(1)), live and
# from a core: target, jit.descriptors, jit.images, threads[].frames[] with
# pc/function/offset/module/jit/unwound_by, warnings.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
check_shape() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"target", "jit", "threads", "warnings"}, d.keys()
assert isinstance(d["target"]["pid"], int) and isinstance(d["target"]["core"], bool)
for x in d["jit"]["descriptors"]:
    assert x["address"].startswith("0x") and isinstance(x["extension"], bool) and x["state"] in (
        "validated", "stopped", "best-effort", "empty")
for im in d["jit"]["images"]:
    assert im["status"] in ("ok", "rejected") and len(im["code"]) == 2 and im["label"].startswith("[jit 0x")
assert d["threads"]
for t in d["threads"]:
    assert isinstance(t["tid"], int) and isinstance(t["truncated"], bool) and t["frames"]
    for i, f in enumerate(t["frames"]):
        assert f["index"] == i and f["pc"].startswith("0x") and isinstance(f["jit"], bool)
        assert f["unwound_by"] == ("registers" if i == 0 else f["unwound_by"]) and f["unwound_by"] in (
            "registers", "cfi", "frame_pointer")
        if f["function"] is not None:
            assert isinstance(f["offset"], int)
        if "line" in f:
            assert isinstance(f["line"], int) and f["file"]
assert isinstance(d["warnings"], list)
print("ok:", len(d["threads"]), "threads,", sum(len(t["frames"]) for t in d["threads"]), "frames")
PY
}
start_child child.out "$TB/child" wait
limit 60 "$JS" -p "$CHILD_PID" --json > live.json || fail "live: exit $?"
check_shape live.json || fail "live JSON shape"
make_core "$TB/child" abort
limit 60 "$JS" --core "$CORE" --json > core.json || fail "core: exit $?"
check_shape core.json || fail "core JSON shape"
pass "JSON output has the documented shape, live and from a core"
