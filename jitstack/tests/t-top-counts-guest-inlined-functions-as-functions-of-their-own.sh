# SPDX-License-Identifier: MIT
# jitstack top --once on a child whose published blob carries guest frames
# (tests/guest_child.c: guest:leaf inlined into guest:mid inlined into
# guest:run, as guest.expect lists them) and that waits in pause() under
# them: sampled with ptrace --idle, every guest function is a row of its
# own, on every stack (100% total), named from the GDB JIT image and
# marked JIT, the inlined ones (all but guest:run) marked inlined.
. "$(dirname "$0")/lib.sh"
need_file "$TB/guest-child" "make tests"

start_ready child.out '^ready' guest-child "$TB/guest-child" wait
limit 60 "$JS" top --once --mode ptrace --idle -p "$CHILD_PID" -d 1 > top.txt 2> top.err
rc=$?
[ $rc -eq 0 ] || { cat top.err; fail "top --once exited $rc"; }
n=0
for f in $(awk '$1 ~ /^guest:/ { print $1 }' guest.expect); do
	want="gdb-jit +Ji +$f"
	[ "$f" = guest:run ] && want="gdb-jit +J +$f"
	grep -qE "^ +[0-9.]+% +100\.0% +$want\$" top.txt || { cat top.txt; fail "no row '$want' at 100% total"; }
	n=$((n + 1))
done
[ $n -eq 3 ] || { cat guest.expect; fail "guest.expect lists $n guest functions, expected 3"; }
pass "top: the $n guest functions are rows of their own, on every stack, the inlined ones marked"
