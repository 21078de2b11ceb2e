# SPDX-License-Identifier: MIT
# C++ names are shown as the source spells them, in the text, JSON and
# collapsed outputs (libiberty's demangler, as binutils and gdb use), and
# as the symbol table holds them with --no-demangle.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/cxxwait" "make jitstack-check"
want='ns::Worker::wait_here(int)'
mangled='_ZN2ns6Worker9wait_hereEi'

start_child w.out "$JTB/cxxwait" wait
limit 30 "$JS" -p "$CHILD_PID" > text || fail "text: exit $?"
grep -qF " $want+0x" text || { cat text; fail "text: no $want"; }
limit 30 "$JS" -p "$CHILD_PID" --json > js.json || fail "json: exit $?"
python3 - "$want" <<'PY' || { cat js.json; fail "json: no $want"; }
import json, sys
names = [f["function"] for t in json.load(open("js.json"))["threads"] for f in t["frames"]]
sys.exit(0 if names.count(sys.argv[1]) == 3 else 1)  # depth 2: three frames
PY
limit 30 "$JS" -p "$CHILD_PID" --no-demangle > raw || fail "--no-demangle: exit $?"
grep -qF " $mangled+0x" raw || { cat raw; fail "--no-demangle: no $mangled"; }
grep -qF "$want" raw && fail "--no-demangle still demangles"
kill_tree "$CHILD_PID"

start_child s.out "$JTB/cxxwait" spin
for mode in $RECORD_MODES; do
	limit 30 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 0.5 -o prof.txt || fail "[$mode] record: exit $?"
	grep -qF ";ns::Worker::spin_here(long) " prof.txt ||
		{ cat prof.txt; fail "[$mode] collapsed: no ns::Worker::spin_here(long)"; }
done
kill_tree "$CHILD_PID"
pass "C++ names demangled in text, JSON and collapsed output; --no-demangle keeps them mangled"
