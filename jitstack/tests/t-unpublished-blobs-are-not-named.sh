# SPDX-License-Identifier: MIT
# A blob unpublished in the middle of an arena (tests/tomb.c) is named by
# no image: its chunk's image is registered again without it, and jitstack
# lists every other function but not that one.  (jitstack also leaves out
# functions whose FDE was tombstoned in place, pc_range 0, as images of
# older library versions show them; it then says how many.)
. "$(dirname "$0")/lib.sh"
need_file "$JTB/tomb" "make jitstack-check"
start_child tomb.out "$JTB/tomb"
limit 60 "$JS" -p "$CHILD_PID" --images > images || fail "jitstack --images exited $?"
grep -q ' leaf:7$' images && fail "the unpublished leaf:7 is still listed"
for n in 0 6 8 99; do grep -q " leaf:$n\$" images || fail "leaf:$n is missing"; done
grep -q "99 functions" images || { cat images; fail "expected 99 functions"; }
pass "leaf:7 (unpublished) left out, the other 99 listed"
