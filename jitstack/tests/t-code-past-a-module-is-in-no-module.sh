# SPDX-License-Identifier: MIT
# Unpublished code in the page right after a file's mapping (tests/churnjit.c,
# `edge`), the thread looping on its first byte: the pc is where that file's
# module ends.  libdwfl's dwfl_addrmodule answers with that module for its
# end address (and, under ASan, for JIT code past libasan's bss): jitstack
# must name the frame in no module, live, in JSON and in a record -- not
# after the file, where `record` would keep the name for good.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/churnjit" "make jitstack-check"
head -c 4096 /dev/zero | tr '\0' 'x' > mapped.txt
start_child edge.out "$JTB/churnjit" edge "$PWD/mapped.txt"
code=$(sed -n 's/^ready [0-9]* 0x\([0-9a-f]*\)$/\1/p' edge.out)
[ -n "$code" ] || { cat edge.out; fail "churnjit printed no code address"; }
grep -q "mapped.txt" "/proc/$CHILD_PID/maps" || fail "mapped.txt is not mapped"

limit 60 "$JS" -p "$CHILD_PID" > dump.txt || { cat dump.txt; fail "jitstack exited $?"; }
f0=$(grep '^#0 ' dump.txt)
echo "$f0" | grep -qi "$code" || { cat dump.txt; fail "frame #0 is not at the code page ($code)"; }
echo "$f0" | grep -q "mapped.txt" && fail "frame #0 is named after mapped.txt: $f0"

limit 60 "$JS" -p "$CHILD_PID" --json > dump.json || fail "jitstack --json exited $?"
python3 - dump.json <<'PY' || fail "JSON: frame #0 has a module"
import json, sys
f = json.load(open(sys.argv[1]))["threads"][0]["frames"][0]
sys.exit(1 if f["module"] is not None else 0)
PY

for mode in $RECORD_MODES; do
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 0.3 -o prof.txt 2> rec.err ||
		{ cat rec.err; fail "[$mode] record exited $?"; }
	[ -s prof.txt ] || { cat rec.err; fail "[$mode] no samples"; }
	grep -q "mapped.txt" prof.txt && { cat prof.txt; fail "[$mode] record names samples after mapped.txt"; }
done
pass "the pc at the end of mapped.txt's mapping is in no module (dump, JSON, record)"
