# SPDX-License-Identifier: MIT
# A blob published with guest frames (ju_blob.inlines: tests/guest_child.c,
# guest:leaf inlined into guest:mid inlined into guest:run, one native
# frame) shows as one frame per guest function in jitstack, as in gdb:
# each at the line the child derives from its published tree and rows
# (guest.expect), the inlined ones marked, live and in a core; and in
# record, each guest function is a frame of the collapsed stacks and a
# Line of the pprof Location (innermost first).
. "$(dirname "$0")/lib.sh"
need_file "$TB/guest-child" "make tests"
need_file "$JTB/pprofdump" "make jitstack-check"

# judge FILE (jitstack --json): the frames from c_callback to main are
# those of guest.expect, named and at their file:line, the guest frames
# inlined but the outermost
judge() {
	python3 - "$1" guest.expect <<'PY'
import json, sys
frames = json.load(open(sys.argv[1]))["threads"][0]["frames"]
names = [f["function"] for f in frames]
want = [l.split() for l in open(sys.argv[2]) if l.strip()]
if "c_callback" not in names:
    sys.exit("no c_callback frame: %s" % names)
got = frames[names.index("c_callback"):][:len(want)]
for w, f in zip(want, got):
    if f["function"] != w[0]:
        sys.exit("expected %s, got %s" % ([x[0] for x in want], [g["function"] for g in got]))
    if len(w) > 1:
        file, line = w[1].rsplit(":", 1)
        if (f.get("file"), f.get("line")) != (file, int(line)):
            sys.exit("%s at %s:%s, expected %s" % (w[0], f.get("file"), f.get("line"), w[1]))
        outermost = w[0] == "guest:run"
        if f.get("inlined") != (not outermost):
            sys.exit("%s: inlined is %s" % (w[0], f.get("inlined")))
print(" ".join(w[0] for w in want))
PY
}

start_ready child.out '^ready' guest-child "$TB/guest-child" wait
limit 60 "$JS" -p "$CHILD_PID" --json > live.json || fail "jitstack exited $?"
got=$(judge live.json) || { cat live.json; fail "live: $got"; }
limit 60 "$JS" -p "$CHILD_PID" > live.txt || fail "jitstack (text) exited $?"
grep -q " guest:leaf (.*) at leaf.py:[0-9]* \[inlined\]\$" live.txt || { cat live.txt; fail "text: guest:leaf not marked inlined"; }
for fmt in collapsed pprof; do
	limit 60 "$JS" record --mode ptrace --idle -p "$CHILD_PID" -F 100 -d 0.5 --format $fmt -o prof.$fmt 2> rec.err ||
		{ cat rec.err; fail "record ($fmt) exited $?"; }
done
grep -q ";run_guest;guest:run;guest:mid;guest:leaf;c_callback;" prof.collapsed ||
	{ cat prof.collapsed; fail "collapsed: the guest functions are not frames of their own"; }
"$JTB/pprofdump" prof.pprof > dump || { cat dump; fail "the pprof file does not decode"; }
grep -Eq "^location [0-9]+ 0x[0-9a-f]+ guest:leaf:[0-9]+ guest:mid:[0-9]+ guest:run:[0-9]+\$" dump ||
	{ cat dump; fail "pprof: no Location with guest:leaf, guest:mid, guest:run as its Lines"; }
kill_tree "$CHILD_PID"

make_core "$TB/guest-child" abort
limit 60 "$JS" --core "$CORE" --exe "$TB/guest-child" --json > core.json || fail "jitstack --core exited $?"
got=$(judge core.json) || { cat core.json; fail "core: $got"; }
pass "guest frames the library publishes: $got, live, in a core and in record"
