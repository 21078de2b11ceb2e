# SPDX-License-Identifier: MIT
# The library's child publishing through the perf map alone
# (JITUNWIND=perfmap): jitstack -p names its JIT frames (jit:fp, jit:cfi,
# jit:region) from /tmp/perf-PID.map, each with JSON "source": "perf-map",
# in the order a frame-pointer walk sees them (no image, so no CFI for the
# JIT code); with --no-perf-map they are unnamed.  With the GDB channel on
# too (JITUNWIND=gdb,perfmap) the images name them: "source": "gdb-jit",
# every frame in order, though the map covers the same code.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"

# Usage: sources JSON: "name source" of the first thread's frames
sources() {
	python3 - "$1" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["threads"][0]["frames"]:
    print(f["function"] or "?", f["source"] or "-")
PY
}

start_child child.out env JITUNWIND=perfmap "$TB/child" wait
[ -s "/tmp/perf-$CHILD_PID.map" ] || fail "the child wrote no perf map"
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
grep -q "\"images\": \[\]" js.json || fail "the child registered GDB images (JITUNWIND=perfmap ignored?)"
json_frames js.json > frames
check_frames child.expect --fp < frames || fail "frames by name (frame-pointer walk)"
check_frames child.expect --fp --by-address < frames || fail "frames by address"
sources js.json > src
for f in jit:fp jit:cfi jit:region; do
	grep -qx "$f perf-map" src || { cat src; fail "$f is not named from the perf map"; }
done
grep -qx "c_inner elf" src || { cat src; fail "c_inner's source is not elf"; }
limit 60 "$JS" -p "$CHILD_PID" > js.txt || fail "text output: exit $?"
grep -q ' jit:cfi+0x[0-9a-f]* \[perf-map\]' js.txt || { cat js.txt; fail "text output does not mark jit:cfi [perf-map]"; }
limit 60 "$JS" -p "$CHILD_PID" --no-perf-map --json > none.json || fail "--no-perf-map: exit $?"
json_frames none.json | grep -q ' jit:' && fail "--no-perf-map still names JIT frames"
kill_tree "$CHILD_PID"

start_child both.out env JITUNWIND=gdb,perfmap "$TB/child" wait
[ -s "/tmp/perf-$CHILD_PID.map" ] || fail "the child wrote no perf map (gdb,perfmap)"
limit 60 "$JS" -p "$CHILD_PID" --json > both.json || fail "jitstack exited $? (gdb,perfmap)"
json_frames both.json > frames
check_frames child.expect < frames || fail "frames by name (gdb,perfmap)"
sources both.json > src
for f in jit:fp jit:cfi jit:region; do
	grep -qx "$f gdb-jit" src || { cat src; fail "$f is not named from its GDB image"; }
done
pass "perf map only: JIT frames named from it (source perf-map); with GDB images too: source gdb-jit"
