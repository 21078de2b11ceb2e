# SPDX-License-Identifier: MIT
# The Python frames of a live CPython 3.11 (Debian's release python3 and
# the debug build python3.11d), read from outside by python/: every
# thread, found by its native thread id, has its frames innermost first,
# each function by its qualified name at the line its source marks,
# through a recursion, a lambda called back from sorted (a C function), a
# method called from a generator, with the entry frames marked; the same
# with the layout from DWARF and from the table, and in a warm walk (the
# third of one run, with the code objects the first decoded kept).
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
runs=0
for py in /usr/bin/python3 /usr/bin/python3.11d; do
	start_pyframes "$py" 3
	for how in dwarf table warm; do
		opt=; [ $how = table ] && opt=--no-dwarf
		[ $how = warm ] && opt="--repeat 3"
		limit 30 "$PYF" $opt -p "$CHILD_PID" > out 2> err || { cat err; fail "$py ($how): pyframes exited $?"; }
		grep -q "its layout from $( [ $how = table ] && echo table || echo DWARF)" err ||
			{ cat err; fail "$py: the layout is not from $how"; }
		! grep -q warning err || { cat err; fail "$py ($how): a warning"; }
		[ $how != warm ] || grep -q "a warm walk: .* [1-9][0-9]* kept from the last" err ||
			{ cat err; fail "$py: the warm walk kept no code object"; }
		check_pyframes out 3 "$py ($how)"
		runs=$((runs + 1))
	done
	kill "$CHILD_PID"
done
pass "$runs reads of the workload's two threads: every frame at its marked line"
