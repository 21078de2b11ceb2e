# A blob unpublished in place (its FDE tombstoned, pc_range 0, while its
# symbol stays in the image: tests/tomb.c) is treated as absent: jitstack
# lists every other function of the image but not that one, and says so.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/tomb" "make jitstack-check"
start_child tomb.out "$JTB/tomb"
limit 60 "$JS" -p "$CHILD_PID" --images > images || fail "jitstack --images exited $?"
grep -q ' leaf:7$' images && fail "the unpublished leaf:7 is still listed"
for n in 0 6 8 99; do grep -q " leaf:$n\$" images || fail "leaf:$n is missing"; done
grep -q "99 functions" images || { cat images; fail "expected 99 functions"; }
grep -q "1 unpublished functions left out" images || fail "no note about the unpublished function"
pass "leaf:7 (tombstoned) left out, the other 99 listed"
