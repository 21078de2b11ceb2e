# SPDX-License-Identifier: MIT
# A program links the static library beside a second JIT that defines the
# GDB JIT interface itself and serialises its writers with a lock of its own,
# as LLVM ORC does (tests/second_jit.c): it links, and after both JITs
# registered and unregistered concurrently for a second, gdb, lldb and
# jitstack name every function either JIT still has, at its address
# (two-jits.expect, written by the program from what it published).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
need_lldb
JITSTACK=$BUILD/jitstack/jitstack
need_file "$JITSTACK" "make builds it"
start_child "$TB/two-jits" wait --seconds 1
grep -q '^gdb channel: foreign' child.out || { cat child.out; fail "the library did not see the second JIT's descriptor"; }
n=$(wc -l < two-jits.expect)
grep -q ' ju:' two-jits.expect && grep -q ' orc:' two-jits.expect || fail "the program left a JIT without functions"

# "ADDR NAME" expected; "ADDR GOT" lines from a tool: every expected ADDR
# must be named NAME.
compare() { # TOOL FILE
	python3 - "$2" two-jits.expect <<'PY' || fail "$1 does not name every function of both JITs"
import sys
got = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) >= 2:
        got[int(f[0], 16)] = f[1]
want = [(int(a, 16), n) for a, n in (l.split() for l in open(sys.argv[2]))]
bad = ["%s at %#x (got %r)" % (n, a, got.get(a)) for a, n in want if got.get(a) != n]
print("\n".join(bad[:10]))
sys.exit(1 if bad or not want else 0)
PY
	echo "$1 names all $n functions of both JITs"
}

awk '{ print "info symbol " $1 }' two-jits.expect > gdb.cmds
limit 300 "$GDB" -nx -batch -p "$CHILD_PID" -x gdb.cmds > gdb.out 2>&1
# "NAME in section .text of ..." in the order asked
grep -E ' in section |No symbol matches' gdb.out | awk '{ print ($0 ~ /^No symbol/) ? "-" : $1 }' > gdb.names
paste -d' ' two-jits.expect gdb.names | awk '{ print $1, $3 }' > gdb.got
compare gdb gdb.got

awk '{ print "image lookup -a " $1 }' two-jits.expect > lldb.cmds
limit 300 "$LLDB" --no-lldbinit -b -p "$CHILD_PID" -s lldb.cmds > lldb.out 2>&1
# "      Address: 0x... (...)" then "      Summary: MODULE`NAME"; one Summary per lookup
awk '/image lookup -a/ { addr = $NF } /Summary:/ { s = $0; sub(/.*`/, "", s); sub(/ .*/, "", s); print addr, s }' \
	lldb.out > lldb.got
compare lldb lldb.got

limit 120 "$JITSTACK" -p "$CHILD_PID" --images > jitstack.out 2>&1 || { cat jitstack.out; fail "jitstack --images"; }
awk '/^    0x/ { print $1, $3 }' jitstack.out > jitstack.got
compare jitstack jitstack.got
kill_tree "$CHILD_PID"
pass "gdb, lldb and jitstack name the functions of libjitunwind and of a second JIT with its own lock"
