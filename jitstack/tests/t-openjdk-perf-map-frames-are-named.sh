# SPDX-License-Identifier: MIT
# OpenJDK 17 with -XX:+PreserveFramePointer: HotSpot names its compiled
# methods only in the perf map that `jcmd PID Compiler.perfmap` writes
# (/tmp/perf-PID.map, the current code cache each time).  progs/Rec.java
# calls recurseJava DEPTH deep, then leafJava, over and over; inlining of its
# methods is off (CompileCommand), so each is a frame of its own.  Once they
# are compiled, jitstack -p shows the Java main thread in leafJava, named from
# the perf map, over at least DEPTH recurseJava frames and main (compiled on
# stack replacement, or still in HotSpot's interpreter, which the map calls
# "Interpreter"), down to the thread's start; jitstack record finds leafJava the hottest frame.
. "$(dirname "$0")/lib.sh"
need_cmd java
need_cmd javac
need_cmd jcmd
PROG=$ROOT/jitstack/tests/progs/Rec.java
DEPTH=8
limit 120 javac -d . "$PROG" > javac.out 2>&1 || { cat javac.out; fail "javac failed"; }
start_child java.out java -Xmx64m -Xss4m -XX:+UseSerialGC -XX:+PreserveFramePointer \
	-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Rec::* -cp . Rec $DEPTH
# HotSpot's perf map names: "int Rec.leafJava(int)", "int Rec.recurseJava(int, boolean)"
leaf='int Rec\.leafJava\(int\)'
rec='int Rec\.recurseJava\(int, boolean\)'
found=
tries=0
while [ $tries -lt 30 ]; do # until the methods are compiled (slow machines: about 30 s)
	tries=$((tries + 1))
	limit 60 jcmd "$CHILD_PID" Compiler.perfmap > jcmd.out 2>&1 || { rc=$?; cat jcmd.out; fail "jcmd Compiler.perfmap exited $rc"; }
	limit 60 "$JS" -p "$CHILD_PID" > text 2> err || { rc=$?; cat err; fail "jitstack exited $rc"; }
	# the thread whose innermost frame is leafJava (paragraph mode: one thread each)
	awk -v RS= -v re="^#0 +0x[0-9a-f]+ $leaf\\\\+0x[0-9a-f]+ \\\\[perf-map\\\\]" \
		'{ n = split($0, l, "\n"); for (i = 1; i <= n; i++) if (l[i] ~ /^#0 /) { if (l[i] ~ re) print; break } }' \
		text > thread
	if [ -s thread ] && [ "$(grep -cE "^#[0-9]+ +0x[0-9a-f]+ $rec\+0x[0-9a-f]+ \[perf-map\]" thread)" -ge $DEPTH ]; then
		found=1
		break
	fi
	awk -v RS= '/Rec\./' text | grep -E '^#0 ' | head -1 >> innermost.seen
	sleep 0.5
done
[ -n "$found" ] || { sort innermost.seen | uniq -c | sort -rn | head; grep -c 'Rec\.' /tmp/perf-$CHILD_PID.map 2>/dev/null;
	fail "no thread is in leafJava, named from the perf map, over $DEPTH recurseJava frames (the innermost frames of the thread running Rec are above)"; }
# below the recursion: main, compiled (OSR) or still in the interpreter
below=$(grep -E '^#[0-9]+ ' thread | grep -vE "$leaf|$rec" | head -1)
echo "$below" | grep -qE "^#[0-9]+ +0x[0-9a-f]+ (void Rec\.main\(java\.lang\.String\[\]\)|Interpreter)\+0x[0-9a-f]+ \[perf-map\]" ||
	{ cat thread; fail "the frame below recurseJava is not Rec.main (compiled or interpreted), named from the perf map: $below"; }
grep -qE ' (start_thread|__clone3?|clone)\+0x' thread || { cat thread; fail "the stack does not reach the thread's start"; }
# The JSON dump is another look: the code cache may have moved since the
# map was written (C2 replacing C1's code), so the map is written again
# before each try, until a dump holds frames of Rec; every one of those
# must come from the perf map and be JIT code.
json_tries=0
while :; do
	json_tries=$((json_tries + 1))
	limit 60 jcmd "$CHILD_PID" Compiler.perfmap > jcmd.out 2>&1 || { rc=$?; cat jcmd.out; fail "jcmd Compiler.perfmap exited $rc"; }
	limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack --json exited $?"
	python3 - js.json <<'PY'
import json, sys
n = 0
for t in json.load(open(sys.argv[1]))["threads"]:
    for f in t["frames"]:
        if " Rec." in (f["function"] or ""):
            if f["source"] != "perf-map" or not f["jit"]:
                print("%s: source %s, jit %s" % (f["function"], f["source"], f["jit"]))
                sys.exit(1)
            n += 1
sys.exit(0 if n else 3)
PY
	rc=$?
	[ $rc -eq 0 ] && break
	[ $rc -eq 3 ] && [ $json_tries -lt 10 ] && { sleep 0.5; continue; }
	[ $rc -eq 3 ] && fail "no frame of Rec in $json_tries JSON dumps"
	fail "the compiled Java frames do not say source perf-map"
done
limit 60 jcmd "$CHILD_PID" Compiler.perfmap > jcmd.out 2>&1 || { rc=$?; cat jcmd.out; fail "jcmd Compiler.perfmap exited $rc"; }
limit 60 "$JS" record -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> err || { rc=$?; cat err; fail "record exited $rc"; }
top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
	END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
echo "$top" | grep -qE "^[0-9]+ $leaf\$" || { sort -k2 -rn prof.txt | head -5; fail "the hottest frame is not leafJava: $top"; }
note "after $tries tries: $(grep -E '^#0' thread); $(grep -cE "$rec" thread) recurseJava frames; JSON after $json_tries; record: hottest $top"
pass "OpenJDK 17: compiled Java frames named from jcmd's perf map, live and in record"
