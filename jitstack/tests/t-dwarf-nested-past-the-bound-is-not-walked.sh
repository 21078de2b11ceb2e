# SPDX-License-Identifier: MIT
# A JIT image whose DWARF nests 300,000 lexical blocks around its code
# (tests/foreignjit.c, FOREIGNJIT_DEEP): libdw looks scopes up by
# recursion, a call a level, which such an image drives past the end of
# the stack.  jitstack measures a unit's nesting first (JS_MAX_DIE_DEPTH)
# and asks no scopes of a unit nested deeper: the frame is still named
# from the image's symbols, at its line, live and in record, and nothing
# crashes.
. "$(dirname "$0")/lib.sh"
for p in foreignjit jitobj.o; do need_file "$JTB/$p" "make jitstack-check"; done
FOREIGNJIT_DEEP=300000 start_child fj.out "$JTB/foreignjit" wait "$JTB/jitobj.o"
limit 60 "$JS" -p "$CHILD_PID" > js.txt 2> js.err
rc=$?
[ $rc -eq 0 ] || { cat js.txt js.err; fail "jitstack exited $rc"; }
grep -q " TRACE_1+0x10 (.*) at trace.lua:11\$" js.txt || { cat js.txt; fail "TRACE_1 not named at trace.lua:11"; }
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack --json exited $?"
grep -q '"function": "TRACE_1"' js.json || fail "JSON: no TRACE_1"
limit 60 "$JS" record --mode ptrace --idle -p "$CHILD_PID" -F 100 -d 0.5 -o prof.txt 2> rec.err
rc=$?
[ $rc -eq 0 ] || { cat rec.err; fail "record exited $rc"; }
grep -q ";TRACE_1;" prof.txt || { cat prof.txt rec.err; fail "record: no TRACE_1 in the stacks"; }
kill_tree "$CHILD_PID"
pass "DWARF nested 300,000 deep: not walked, the JIT frame named at its line, live and in record"
