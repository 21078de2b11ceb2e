# SPDX-License-Identifier: MIT
# The library's child publishing through the jitdump alone
# (JITUNWIND=jitdump): jitstack -p finds jit-PID.dump through the mapping
# the child makes of it for perf, names its JIT frames from the dump's
# CODE_LOADs (JSON "source": "jitdump"), shows jit:fp at the line its
# DEBUG_INFO gives, and unwinds through jit:cfi -- code that keeps no frame
# pointer -- with the dump's UNWINDING_INFO: c_middle, which a frame-pointer
# walk cannot see, is on the stack, every frame in order.  With --no-jitdump
# the same stack is walked by frame pointers: c_middle is missing and the JIT
# frames are unnamed.  --jitdump FILE reads a copy.  Priority: with the GDB
# channel on too the images name the frames (gdb-jit); with the perf map on
# too the dump does (jitdump).
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
. "$ROOT/tests/debuggers.sh"

# Usage: sources JSON: "name source" of the first thread's frames
sources() {
	python3 - "$1" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["threads"][0]["frames"]:
    print(f["function"] or "?", f["source"] or "-")
PY
}
all_jit_from() { # SRCFILE SOURCE WHAT
	for f in jit:fp jit:cfi jit:region; do
		grep -qx "$f $2" "$1" || { cat "$1"; fail "$f is not named from $2 ($3)"; }
	done
}

mkdir -p dumps
# a perf map older than this is another process's, at a reused pid
touch started
start_child child.out env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump "$TB/child" wait
dump=$(ls dumps/.debug/jit/*/jit-"$CHILD_PID".dump 2>/dev/null | head -1)
[ -s "$dump" ] || fail "the child wrote no jitdump"
[ ! "/tmp/perf-$CHILD_PID.map" -nt started ] || fail "the child wrote a perf map (JITUNWIND=jitdump ignored?)"
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
grep -q "\"images\": \[\]" js.json || fail "the child registered GDB images"
json_frames js.json > frames
check_frames child.expect < frames || { cat frames; fail "frames by name (through the dump's CFI)"; }
check_frames child.expect --by-address < frames || fail "frames by address"
sources js.json > src
all_jit_from src jitdump "jitdump only"
want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
python3 - "$want" js.json <<'PY' || fail "jit:fp is not shown at $want, or the JIT frames are not unwound by their CFI"
import json, sys
d = json.load(open(sys.argv[2]))
fr = d["threads"][0]["frames"]
f = [f for f in fr if f["function"] == "jit:fp"][0]
ok = "%s:%d" % (f["file"], f["line"]) == sys.argv[1]
# the frames the JIT frames return to were found with the JIT code's CFI
names = [x["function"] for x in fr]
ok &= all(fr[names.index(n) + 1]["unwound_by"] == "cfi" for n in ("jit:fp", "jit:cfi"))
ok &= d["jit"]["jitdump"]["modules"] == 3 and d["jit"]["jitdump"]["with_cfi"] == 3
sys.exit(0 if ok else 1)
PY
limit 60 "$JS" -p "$CHILD_PID" > js.txt || fail "text output: exit $?"
grep -q "jit:fp+0x[0-9a-f]* (\[jitdump 0x[0-9a-f]*\]) at $want \[jitdump\]\$" js.txt ||
	{ cat js.txt; fail "text output lacks jit:fp at $want [jitdump]"; }

limit 60 "$JS" -p "$CHILD_PID" --no-jitdump --json > none.json || fail "--no-jitdump: exit $?"
json_frames none.json > none
check_frames child.expect --fp < none >/dev/null 2>&1 || check_frames child.expect --fp --allow-unnamed-jit < none ||
	{ cat none; fail "--no-jitdump: not the frame-pointer walk's frames"; }
grep -q ' c_middle$' none && { cat none; fail "--no-jitdump: c_middle found without the dump's CFI"; }
grep -q ' jit:' none && fail "--no-jitdump still names JIT frames"

cp "$dump" kept.dump
limit 60 "$JS" -p "$CHILD_PID" --jitdump kept.dump --json > kept.json || fail "--jitdump kept.dump: exit $?"
json_frames kept.json > frames
check_frames child.expect < frames || fail "frames by name (--jitdump FILE)"
"$JS" -p "$CHILD_PID" --jitdump kept.dump --no-jitdump > /dev/null 2>&1
[ $? -eq 2 ] || fail "--jitdump FILE with --no-jitdump is not a usage error"
kill_tree "$CHILD_PID"

start_child both.out env JITDUMPDIR="$PWD/dumps" JITUNWIND=gdb,jitdump,perfmap "$TB/child" wait
limit 60 "$JS" -p "$CHILD_PID" --json > both.json || fail "jitstack exited $? (gdb,jitdump,perfmap)"
json_frames both.json > frames
check_frames child.expect < frames || fail "frames by name (gdb,jitdump,perfmap)"
sources both.json > src
all_jit_from src gdb-jit "with the GDB images"
kill_tree "$CHILD_PID"

start_child pm.out env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump,perfmap "$TB/child" wait
[ -s "/tmp/perf-$CHILD_PID.map" ] || fail "the child wrote no perf map (jitdump,perfmap)"
limit 60 "$JS" -p "$CHILD_PID" --json > pm.json || fail "jitstack exited $? (jitdump,perfmap)"
json_frames pm.json > frames
check_frames child.expect < frames || fail "frames by name (jitdump,perfmap)"
sources pm.json > src
all_jit_from src jitdump "with the perf map"
pass "jitdump only: JIT frames named (source jitdump), jit:fp at $want, c_middle through the dump's CFI and not without it"
