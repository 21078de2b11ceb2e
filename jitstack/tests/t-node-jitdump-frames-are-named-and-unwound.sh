# SPDX-License-Identifier: MIT
# node (18 in Debian 12, 20 elsewhere) with --perf-prof (and
# --perf-prof-unwinding-info, so that its optimized code comes with CFI;
# --interpreted-frames-native-stack, so that interpreted JS frames are code
# of their own) writes jit-PID.dump in its working directory and no perf
# map.  node writes the dump through a 2 MiB buffer, so a live reader sees
# what it pushed out: progs/recurse-dump.js is recurse.js that compiles
# enough code every 2 s to push the buffer out.  It recurses
# DEPTH times in recurseJs, then spins: from
# the dump alone, jitstack -p names the innermost frame one of its JS
# functions, at least DEPTH frames recurseJs (node's "JS:<tier>recurseJs
# .../recurse.js:L:C", node 18's "LazyCompile:..."), every JS frame with
# "source": "jitdump", and reaches node's start; jitstack record finds a JS
# function the hottest frame.
. "$(dirname "$0")/lib.sh"
need_cmd node
PROG=$ROOT/jitstack/tests/progs/recurse-dump.js
DEPTH=8
FLAGS="--perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack"
# shellcheck disable=SC2086
node $FLAGS -e 0 2>/dev/null || skip "this node does not take $FLAGS ($(node --version))"
rm -f jit-*.dump
# shellcheck disable=SC2086
# a perf map older than this is another process's, at a reused pid
touch started
start_child node.out node $FLAGS "$PROG" $DEPTH
[ ! "/tmp/perf-$CHILD_PID.map" -nt started ] || fail "node wrote a perf map: the names would not be the dump's alone"
js='(JS|LazyCompile|Function):[*~^+]?(recurseJs|spin) [^ ]*recurse-dump\.js:[0-9]+(:[0-9]+)?'
found=
tries=0
while [ $tries -lt 60 ]; do # until the spin is compiled and its load pushed out (slow machines: 30 s)
	tries=$((tries + 1))
	limit 30 "$JS" -p "$CHILD_PID" > text 2> err || { cat err; fail "jitstack exited $?"; }
	grep -qaE "^#0 +0x[0-9a-f]+ $js\+0x[0-9a-f]+ .*\[jitdump\]" text && { found=1; break; }
	grep -aE '^#0 ' text | head -1 >> innermost.seen
	sleep 0.5
done
[ -n "$found" ] || { sort innermost.seen | uniq -c | sort -rn | head; head -3 text;
	fail "the innermost frame is not a JS function of the workload named from the jitdump (the innermost frames seen are above)"; }
n=$(grep -caE "^#[0-9]+ +0x[0-9a-f]+ (JS|LazyCompile|Function):[*~^+]?recurseJs [^ ]*recurse-dump\.js:" text)
[ "$n" -ge $DEPTH ] || { cat text; fail "$n frames of recurseJs, expected at least $DEPTH"; }
grep -qaE ' (node::Start|main|_start)[^ ]*\+0x' text || { cat text; fail "the stack does not reach node's start"; }
limit 30 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack --json exited $?"
python3 - js.json <<'PY' > cfi || fail "the JS frames do not say source jitdump"
import json, sys
d = json.load(open(sys.argv[1]))
fr = d["threads"][0]["frames"]
js = [f for f in fr if (f["function"] or "").split(":")[0] in ("JS", "LazyCompile", "Function")]
print(d["jit"]["jitdump"]["with_cfi"], d["jit"]["jitdump"]["modules"])
sys.exit(0 if js and all(f["source"] == "jitdump" and f["jit"] for f in js) else 1)
PY
limit 30 "$JS" -p "$CHILD_PID" --no-jitdump > nodump || fail "--no-jitdump: exit $?"
grep -qaE "$js" nodump && fail "--no-jitdump still names JS frames"
limit 30 "$JS" record -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> err || { cat err; fail "record exited $?"; }
top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
	END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
echo "$top" | grep -qE "^[0-9]+ $js\$" || { head -5 prof.txt; fail "the hottest frame is not a JS function: $top"; }
kill_tree "$CHILD_PID"

# node --perf-prof-delete-file unlinks the dump once it has it open: it is
# still read, through its mapping (/proc/PID/map_files)
# shellcheck disable=SC2086
start_child gone.out node $FLAGS --perf-prof-delete-file "$PROG" $DEPTH
found=
for _ in $(seq 40); do
	limit 30 "$JS" -p "$CHILD_PID" > gone 2> err || { cat err; fail "jitstack exited $? (an unlinked dump)"; }
	grep -qaE "^#[0-9]+ +0x[0-9a-f]+ $js\+0x[0-9a-f]+ .*\[jitdump\]" gone && { found=1; break; }
	sleep 0.5
done
[ -n "$found" ] && grep -q '^JIT: jitdump /proc/[0-9]*/map_files/' gone ||
	{ head -8 gone; fail "an unlinked dump does not name the JS frames"; }
read -r with_cfi modules < cfi
note "node $(node --version): $(grep -m1 -aE "^#0 .*$js" text); $n recurseJs frames; loads with CFI $with_cfi ($modules modules); record: hottest $top"
pass "node --perf-prof: JS frames named from the jitdump, live and in record"
