# SPDX-License-Identifier: MIT
# With the perf map as its only channel (JITUNWIND=perfmap), a blob with
# guest frames (tests/guest_child.c: guest:leaf inlined into guest:mid
# inlined into guest:run) has a line per piece named by its chain,
# "guest:leaf <- guest:mid <- guest:run".  jitstack makes such a name the
# frames of guest.expect: guest:leaf and guest:mid inlined, guest:run the
# native frame at its offset in the blob, all from the perf map (no lines:
# a perf map has none); live, and in record's collapsed stacks.  Names
# that only look like chains (an empty part, another spacing) stay one
# function: lines appended over the blob of a child without the tree.
. "$(dirname "$0")/lib.sh"
need_file "$TB/guest-child" "make tests"
trap 'rm -f ${CLEANUP_MAPS:-}; cleanup' EXIT INT TERM

start_ready child.out '^ready' guest-child env JITUNWIND=perfmap "$TB/guest-child" wait
CLEANUP_MAPS="/tmp/perf-$CHILD_PID.map"
limit 60 "$JS" -p "$CHILD_PID" --json > live.json || fail "jitstack exited $?"
limit 60 "$JS" -p "$CHILD_PID" > live.txt || fail "jitstack (text) exited $?"
cat live.txt
got=$(python3 - live.json guest.expect "/tmp/perf-$CHILD_PID.map" <<'PY'
import json, sys
frames = json.load(open(sys.argv[1]))["threads"][0]["frames"]
names = [f["function"] for f in frames]
want = [l.split()[0] for l in open(sys.argv[2]) if l.strip()]
guest = [l.split()[0] for l in open(sys.argv[2]) if len(l.split()) == 2]
if "c_callback" not in names:
    sys.exit("no c_callback frame: %s" % names)
got = frames[names.index("c_callback"):][:len(want)]
if [f["function"] for f in got] != want:
    sys.exit("expected %s, got %s" % (want, [f["function"] for f in got]))
# the blob's start: the map's first line, whose name is the outermost guest function
blob = min(int(l.split()[0], 16) for l in open(sys.argv[3]))
for f in got:
    if f["function"] not in guest:
        continue
    if f.get("source") != "perf-map" or f.get("file") or f.get("line"):
        sys.exit("%s: source %s, file %s, line %s" % (f["function"], f.get("source"), f.get("file"), f.get("line")))
    outermost = f["function"] == guest[-1]
    if f.get("inlined") != (not outermost):
        sys.exit("%s: inlined is %s" % (f["function"], f.get("inlined")))
    if outermost and f.get("offset") != int(f["pc"], 16) - blob:
        sys.exit("%s: offset %s, the pc is %#x into the blob" % (f["function"], f.get("offset"), int(f["pc"], 16) - blob))
print(" ".join(want))
PY
) || { cat live.json; fail "live: $got"; }
grep -q " guest:leaf \[inlined\]\$" live.txt || fail "text: guest:leaf not marked inlined"
limit 60 "$JS" record --mode ptrace --idle -p "$CHILD_PID" -F 100 -d 0.5 --format collapsed -o prof.collapsed 2> rec.err ||
	{ cat rec.err; fail "record exited $?"; }
grep -q ";run_guest;guest:run;guest:mid;guest:leaf;c_callback;" prof.collapsed ||
	{ cat prof.collapsed; fail "collapsed: the guest functions are not frames of their own"; }
kill_tree "$CHILD_PID"

# Control: published without its tree, the blob is guest:run alone.
start_ready child.out '^ready' guest-child env JITUNWIND=perfmap "$TB/guest-child" wait --no-inlines
CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$CHILD_PID.map"
map=/tmp/perf-$CHILD_PID.map
CLEANUP_MAPS="$CLEANUP_MAPS $map"
limit 60 "$JS" -p "$CHILD_PID" > plain.txt || fail "jitstack exited $?"
grep -q "\[inlined\]" plain.txt && { cat plain.txt; fail "inline frames without a tree"; }
grep -q " guest:run+0x[0-9a-f]* \[perf-map\]" plain.txt || { cat plain.txt; fail "no guest:run frame"; }
read -r start size _ < "$map"
for name in "guest:leaf <-guest:run" " <- guest:run" "guest:leaf <- " "guest:leaf <-  <- guest:run"; do
	echo "$start $size $name" >> "$map" # a later line wins
	limit 60 "$JS" -p "$CHILD_PID" > odd.txt || fail "jitstack exited $?"
	grep -q "\[inlined\]" odd.txt && { cat odd.txt; fail "'$name' became inline frames"; }
	grep -qF " ${name# }+0x" odd.txt || { cat odd.txt; fail "'$name' is not one function"; } # (spaces before a name are not part of it)
done
kill_tree "$CHILD_PID"
pass "guest frames from the perf map: $got, live and in record"
