# SPDX-License-Identifier: MIT
# A second JIT whose references the dynamic linker bound to libjitunwind.so's
# descriptor (it defines none itself) writes that list under its own lock,
# without the sequence lock.  The library notices at its next change, logs it
# and flags the descriptor; jitstack then reads the list as a plain GDB JIT
# list with the process stopped, says why, and names every function of both
# JITs (two-jits.expect, from what the program published).
. "$(dirname "$0")/lib.sh"
JITSTACK=$BUILD/jitstack/jitstack
need_file "$JITSTACK" "make builds it"
start_child "$TB/two-jits-shared" wait --seconds 0.3 --sequential
grep -q 'without its sequence lock' child.out || { cat child.out; fail "the library did not notice the other writer"; }
limit 120 "$JITSTACK" -p "$CHILD_PID" --images > jitstack.out 2> jitstack.err ||
	{ cat jitstack.out jitstack.err; fail "jitstack --images"; }
grep -q 'without its sequence lock' jitstack.err || { cat jitstack.err; fail "jitstack does not say why it read plainly"; }
awk '/^    0x/ { print $1, $3 }' jitstack.out > jitstack.got
python3 - jitstack.got two-jits.expect <<'PY' || fail "jitstack does not name every function of both JITs"
import sys
got = {int(f[0], 16): f[1] for f in (l.split() for l in open(sys.argv[1])) if len(f) >= 2}
want = [(int(a, 16), n) for a, n in (l.split() for l in open(sys.argv[2]))]
bad = ["%s at %#x (got %r)" % (n, a, got.get(a)) for a, n in want if got.get(a) != n]
print("\n".join(bad[:10]))
sys.exit(1 if bad or not want else 0)
PY
kill_tree "$CHILD_PID"
pass "jitstack reads a list another JIT writes without the sequence lock plainly, says so, and names all $(wc -l < two-jits.expect) functions"
