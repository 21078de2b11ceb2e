# SPDX-License-Identifier: MIT
# A blob published with guest frames (tests/guest_child.c: guest:leaf
# inlined into guest:mid inlined into guest:run) through the jitdump alone
# (JITUNWIND=jitdump): the dump has no inline records, so jitstack shows one
# frame, named guest:run from its CODE_LOAD, at the innermost guest line in
# its own file -- the DEBUG_INFO row's, leaf.py, not the blob's guest.py.
# The position is derived from the child's tree and rows (guest.expect: the
# innermost guest frame's FILE:LINE).
. "$(dirname "$0")/lib.sh"
need_file "$TB/guest-child" "make tests"

mkdir -p dumps
start_ready child.out '^ready' guest-child env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump "$TB/guest-child" wait
ls dumps/.debug/jit/*/jit-"$CHILD_PID".dump > /dev/null 2>&1 || fail "the child wrote no jitdump"
# the innermost guest frame's position: the line after c_callback
want=$(sed -n 2p guest.expect | cut -d' ' -f2)
case $want in leaf.py:[0-9]*) ;; *) fail "guest.expect does not start in guest:leaf: $want" ;; esac
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
python3 - "$want" js.json <<'PY' || { cat js.json; fail "guest:run is not one jitdump frame at $want"; }
import json, sys
d = json.load(open(sys.argv[2]))
assert d["jit"]["images"] == [], "the child registered GDB images"
fr = d["threads"][0]["frames"]
names = [f["function"] for f in fr]
i = names.index("guest:run")
f = fr[i]
assert names[i - 1] == "c_callback" and names[i + 1] == "run_guest", names
assert f["source"] == "jitdump", f["source"]
got = "%s:%d" % (f["file"], f["line"])
assert got == sys.argv[1], "guest:run at %s, want %s" % (got, sys.argv[1])
assert not f.get("inlined"), "an inline frame from a jitdump"
PY
limit 60 "$JS" -p "$CHILD_PID" > js.txt || fail "text output: exit $?"
grep -q " guest:run+0x[0-9a-f]* (\[jitdump 0x[0-9a-f]*\]) at $want \[jitdump\]\$" js.txt ||
	{ cat js.txt; fail "text output lacks guest:run at $want [jitdump]"; }
kill_tree "$CHILD_PID"
pass "jitdump only: guest:run at $want, the innermost guest line in its file"
