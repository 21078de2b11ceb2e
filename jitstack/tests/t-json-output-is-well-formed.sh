# SPDX-License-Identifier: MIT
# --json output parses and has the documented shape (jitstack(1)), live and
# from a core: target, jit.descriptors, jit.images, threads[].frames[] with
# pc/function/offset/module/jit/inlined/unwound_by (an inlined function:
# no offset, the pc of the frame after it), warnings; and it stays valid
# JSON (UTF-8) when the target names a function with bytes that are not.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
check_shape() {
	python3 - "$1" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))  # strict: JSON is UTF-8
assert set(d) == {"target", "jit", "threads", "warnings"}, d.keys()
assert isinstance(d["target"]["pid"], int) and isinstance(d["target"]["core"], bool)
for x in d["jit"]["descriptors"]:
    assert x["address"].startswith("0x") and isinstance(x["extension"], bool) and x["state"] in (
        "validated", "stopped", "best-effort", "empty")
for im in d["jit"]["images"]:
    assert im["status"] in ("ok", "no-code", "not-elf", "rejected") and len(im["code"]) == 2
    assert im["label"].startswith("[jit 0x") or im["status"] != "ok"
assert d["threads"]
for t in d["threads"]:
    assert isinstance(t["tid"], int) and isinstance(t["truncated"], bool) and t["frames"]
    for i, f in enumerate(t["frames"]):
        assert f["index"] == i and f["pc"].startswith("0x") and isinstance(f["jit"], bool)
        assert f["unwound_by"] == ("registers" if i == 0 else f["unwound_by"]) and f["unwound_by"] in (
            "registers", "cfi", "frame_pointer")
        assert isinstance(f["inlined"], bool)
        if f["function"] is not None and not f["inlined"]:
            assert isinstance(f["offset"], int)
        if f["inlined"]:  # a function inlined at the pc of the frame after it
            assert "offset" not in f and f["pc"] == t["frames"][i + 1]["pc"], f
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
need_file "$JTB/hostile" "make jitstack-check"
start_child h.out "$JTB/hostile" badname wait
limit 60 "$JS" -p "$CHILD_PID" --json > bad.json || fail "badname: exit $?"
check_shape bad.json || fail "a name that is not UTF-8 made invalid JSON"
python3 -c '
import json, sys
names = [f["function"] for t in json.load(open(sys.argv[1], encoding="utf-8"))["threads"] for f in t["frames"]]
sys.exit(0 if "jit:\ufffd\ufffd\ufffdb" in names else 1)' bad.json ||
	{ grep -a '"jit": true' bad.json; fail "the bad bytes of the JIT name are not U+FFFD each"; }
pass "JSON output has the documented shape, live and from a core, whatever bytes the target's names hold"
