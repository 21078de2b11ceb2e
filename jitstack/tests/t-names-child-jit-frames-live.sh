# SPDX-License-Identifier: MIT
# jitstack -p on the library's child: every frame from c_inner down to main
# in order, the JIT frames named by their blobs (jit:fp, jit:cfi,
# jit:region) and found through their CFI -- c_middle too, which a
# frame-pointer walk cannot see -- and jit:fp at the line its table gives.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
start_child child.out "$TB/child" wait
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
json_frames js.json > frames
check_frames child.expect < frames || fail "frames by name"
check_frames child.expect --by-address < frames || fail "frames by address"
# jit:fp's source line, from the child's own line table (tests/debuggers.sh)
. "$ROOT/tests/debuggers.sh"
want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
python3 - "$want" js.json <<'PY' || fail "jit:fp is not shown at $want"
import json, sys
d = json.load(open(sys.argv[2]))
f = [f for f in d["threads"][0]["frames"] if f["function"] == "jit:fp"][0]
sys.exit(0 if "%s:%d" % (f["file"], f["line"]) == sys.argv[1] and f["jit"] and f["unwound_by"] == "cfi" else 1)
PY
limit 60 "$JS" -p "$CHILD_PID" > js.txt || fail "text output: exit $?"
grep -q "jit:fp+0x[0-9a-f]* (\[jit 0x[0-9a-f]*\]) at $want\$" js.txt || { cat js.txt; fail "text output lacks jit:fp at $want"; }
pass "live: every frame of the child named in order, through CFI, jit:fp at $want"
