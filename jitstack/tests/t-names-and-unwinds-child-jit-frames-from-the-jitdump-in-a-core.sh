# SPDX-License-Identifier: MIT
# jitstack --core on the core of a child that published through the
# jitdump alone (JITUNWIND=jitdump): the dump is found through the core's
# NT_FILE note (the mapping the child made of it for perf), names the JIT
# frames (JSON "source": "jitdump") and unwinds through jit:cfi with its
# CFI, so c_middle is on the stack; --no-jitdump loses both; --jitdump FILE
# reads a copy.  Only records written before the core count: a core made to
# look a minute older than the dump's start (as when the dump at that path
# is a later process's with the same pid) does not use it, and says so.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
mkdir -p dumps
make_core env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump "$TB/child" abort
limit 60 "$JS" --core "$CORE" --json > js.json || fail "jitstack --core exited $?"
dump=$(python3 -c 'import json,sys; m = json.load(open(sys.argv[1]))["jit"]["jitdump"]; print(m["path"] if m else "")' js.json)
[ -n "$dump" ] && [ -s "$dump" ] || fail "no jitdump found through the core's notes"
check_named() { # JSON WHAT
	json_frames "$1" > frames
	check_frames child.expect < frames || { cat frames; fail "frames by name ($2)"; }
	python3 - "$1" <<'PY' || fail "the JIT frames are not named from the jitdump ($2)"
import json, sys
fr = json.load(open(sys.argv[1]))["threads"][0]["frames"]
jit = [f for f in fr if (f["function"] or "").startswith("jit:")]
sys.exit(0 if len(jit) == 3 and all(f["source"] == "jitdump" for f in jit) else 1)
PY
}
check_named js.json "found in NT_FILE"
limit 60 "$JS" --core "$CORE" --no-jitdump --json > none.json || fail "--no-jitdump: exit $?"
json_frames none.json > none
grep -q ' c_middle$' none && { cat none; fail "--no-jitdump: c_middle found without the dump's CFI"; }
grep -q ' jit:' none && fail "--no-jitdump still names JIT frames"
cp "$dump" kept.dump
limit 60 "$JS" --core "$CORE" --jitdump kept.dump --json > kept.json || fail "--jitdump kept.dump: exit $?"
check_named kept.json "--jitdump"
touch -d "-1 minute" "$CORE"
limit 60 "$JS" --core "$CORE" --json > early.json 2> early.err || fail "an older core: exit $?"
json_frames early.json | grep -q ' jit:' && fail "a dump begun after the core named frames"
grep -q "begun after the core" early.json || { cat early.err early.json; fail "no warning about the later dump"; }
pass "core: the dump found through NT_FILE names and unwinds the JIT frames; a dump begun after the core is refused"
