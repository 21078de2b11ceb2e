# SPDX-License-Identifier: MIT
# jitstack --core on the core of a child that published through the perf
# map alone (JITUNWIND=perfmap): the crashed process's /tmp/perf-PID.map
# (the pid from the core's notes) is found and names its JIT frames, JSON
# "source": "perf-map"; --perf-map FILE reads a copy kept elsewhere; a map
# written after the core (another process that got the pid) is not used.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
make_core env JITUNWIND=perfmap "$TB/child" abort
limit 60 "$JS" --core "$CORE" --json > js.json || fail "jitstack --core exited $?"
map=$(python3 -c 'import json,sys; m = json.load(open(sys.argv[1]))["jit"]["perf_map"]; print(m["path"] if m else "")' js.json)
[ -n "$map" ] && [ -s "$map" ] || fail "no perf map found for the core"
check_named() { # JSON WHAT
	json_frames "$1" > frames
	check_frames child.expect --fp < frames || fail "frames by name ($2)"
	python3 - "$1" <<'PY' || fail "the JIT frames are not named from the perf map ($2)"
import json, sys
fr = json.load(open(sys.argv[1]))["threads"][0]["frames"]
jit = [f for f in fr if (f["function"] or "").startswith("jit:")]
sys.exit(0 if len(jit) >= 2 and all(f["source"] == "perf-map" for f in jit) else 1)
PY
}
check_named js.json "found"
cp "$map" kept.map
limit 60 "$JS" --core "$CORE" --perf-map kept.map --json > kept.json || fail "--perf-map kept.map: exit $?"
check_named kept.json "--perf-map"
touch -d "+1 minute" "$map"
limit 60 "$JS" --core "$CORE" --json > late.json 2> late.err || fail "a later map: exit $?"
json_frames late.json | grep -q ' jit:' && fail "a map written after the core named frames"
grep -q "not used: it was written after the core" late.json || { cat late.err late.json; fail "no warning about the later map"; }
pass "core: the crashed process's perf map found and used, --perf-map FILE, a later map refused"
