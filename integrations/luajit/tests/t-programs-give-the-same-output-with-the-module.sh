# SPDX-License-Identifier: MIT
# Lua programs of our own (programs/*.lua: recursion, strings, tables, the
# FFI, errors, coroutines and the JIT's own API -- jit.off(true),
# jit.flush(f), a trace handler of the program's own) print the same, and
# exit the same, with the module as without it, and the module published
# traces in each (it was at work).  trace_error.lua, where a Lua error is
# thrown while its trace is on the C stack, is caught every time with the
# module's default channels (libgcc's registry among them) as by stock
# luajit (t-errors-thrown-on-a-trace-are-caught-as-without-the-module).
. "$(dirname "$0")/lib.sh"
cp -r "$LJT/programs" .
report='local s = require("jitunwind").stats()
io.stderr:write(string.format("module: %d traces published, %d failures, %s\n", s.publishes, s.failures, s.last_error))'
for p in programs/*.lua trace_error.lua; do
	limit 120 luajit -e "dofile('$p')" > without.out 2> without.err
	rc0=$?
	limit 120 luajit -l jitunwind -e "dofile('$p')" -e "$report" > with.out 2> with.err
	rc1=$?
	[ $rc0 = $rc1 ] || { cat with.err; fail "$p: exit $rc1 with the module, $rc0 without"; }
	cmp -s without.out with.out || { diff without.out with.out | head; fail "$p: the output differs"; }
	n=$(sed -n 's/^module: \([0-9]*\) traces published, \([0-9]*\) failures.*/\1 \2/p' with.err)
	set -- $n
	[ "${1:-0}" -gt 0 ] || { cat with.err; fail "$p: the module published no trace"; }
	[ "${2:-1}" = 0 ] || { cat with.err; fail "$p: the module failed to publish a trace"; }
	echo "$p: same output ($(wc -l < with.out) lines, exit $rc1); $1 traces published"
done
pass "every program prints and exits the same with the module as without"
