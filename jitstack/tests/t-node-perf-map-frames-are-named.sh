# SPDX-License-Identifier: MIT
# node (18 in Debian 12, 20 elsewhere) with --perf-basic-prof (and --interpreted-frames-native-stack, so
# interpreted JS frames are code of their own): node names its JIT code only
# in /tmp/perf-PID.map, which jitstack -p reads.  progs/recurse.js recurses
# DEPTH times in recurseJs, then spins: the innermost frame is one of its JS
# functions, at least DEPTH frames are recurseJs (node's "JS:<tier>recurseJs
# .../recurse.js:L:C"), all named from the perf map, and the stack reaches
# node's own start; jitstack record finds a JS function the hottest frame.
. "$(dirname "$0")/lib.sh"
need_cmd node
PROG=$ROOT/jitstack/tests/progs/recurse.js
DEPTH=8
node --perf-basic-prof --interpreted-frames-native-stack -e 0 2>/dev/null ||
	skip "this node does not take --perf-basic-prof --interpreted-frames-native-stack ($(node --version))"
start_child node.out node --perf-basic-prof --interpreted-frames-native-stack "$PROG" $DEPTH
# node 20 says JS:*name file:line:column; node 18 (Debian 12's) LazyCompile:*name file:line
js='(JS|LazyCompile|Function):[*~^+]?(recurseJs|spin) [^ ]*recurse\.js:[0-9]+(:[0-9]+)?'
found=
tries=0
while [ $tries -lt 40 ]; do # until the spin is compiled and its line written (slow machines: 20 s)
	tries=$((tries + 1))
	limit 30 "$JS" -p "$CHILD_PID" > text 2> err || { cat err; fail "jitstack exited $?"; }
	grep -qE "^#0 +0x[0-9a-f]+ $js\+0x[0-9a-f]+ \[perf-map\]" text && { found=1; break; }
	grep -E '^#0 ' text | head -1 >> innermost.seen
	sleep 0.5
done
[ -n "$found" ] || { sort innermost.seen | uniq -c | sort -rn | head; grep -cE 'JS:' /tmp/perf-$CHILD_PID.map 2>/dev/null;
	fail "the innermost frame is not a JS function of the workload named from the perf map (the innermost frames seen are above)"; }
n=$(grep -cE "^#[0-9]+ +0x[0-9a-f]+ (JS|LazyCompile|Function):[*~^+]?recurseJs [^ ]*recurse\.js:" text)
[ "$n" -ge $DEPTH ] || { cat text; fail "$n frames of recurseJs, expected at least $DEPTH"; }
grep -qE ' (node::Start|main|_start)[^ ]*\+0x' text || { cat text; fail "the stack does not reach node's start"; }
limit 30 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack --json exited $?"
python3 - js.json <<'PY' || fail "the JS frames do not say source perf-map"
import json, sys
fr = json.load(open(sys.argv[1]))["threads"][0]["frames"]
js = [f for f in fr if (f["function"] or "").split(":")[0] in ("JS", "LazyCompile", "Function")]
sys.exit(0 if js and all(f["source"] == "perf-map" and f["jit"] for f in js) else 1)
PY
for mode in $RECORD_MODES; do
	limit 30 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> err || { cat err; fail "[$mode] record exited $?"; }
	top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
		END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
	echo "$top" | grep -qE "^[0-9]+ $js\$" || { head -5 prof.txt; fail "[$mode] the hottest frame is not a JS function: $top"; }
	note "live: $(grep -E '^#0' text); $n recurseJs frames; record ($mode): hottest $top"
done
pass "node --perf-basic-prof: JS frames named from the perf map, live and in record"
