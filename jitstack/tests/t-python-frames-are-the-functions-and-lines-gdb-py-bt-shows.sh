# SPDX-License-Identifier: MIT
# gdb's py-bt (CPython's python-gdb.py, from python3.11-dbg) on the same
# stopped process lists, thread by thread, the same Python functions at
# the same files and lines as python/ reads from outside: on the debug
# build python3.11d, and on Debian's release python3 (whose separate debug
# file python3.11-dbg ships too).  py-bt names a function by its code's
# co_name: the last part of the qualified name.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gdb
runs=0
for py in /usr/bin/python3.11d /usr/bin/python3; do
	real=$(readlink -f "$py")
	script=/usr/share/gdb/auto-load$real-gdb.py
	need_file "$script" "python3.11-dbg"
	start_pyframes "$py" 3
	limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat err; fail "$py: pyframes exited $?"; }
	check_pyframes out 3 "$py"
	limit 120 gdb -p "$CHILD_PID" -batch -nx -iex 'set auto-load python-scripts off' -ex "source $script" \
		-ex 'thread apply all py-bt' > gdb.out 2>&1 || { tail gdb.out; fail "$py: gdb exited $?"; }
	# "Thread N (Thread 0x... (LWP TID) ...)", then '  File "F", line L, in NAME'
	sed -n 's/^Thread [0-9]* (.*(LWP \([0-9]*\)).*/thread \1/p; s/^  File "\(.*\)", line \([0-9]*\), in \(.*\)/  \3 \1:\2/p' \
		gdb.out > gdb.frames
	for role in main gen; do
		eval tid=\$TID_$role
		frames_of "$tid" < gdb.frames > gdb.$role
		frames_of "$tid" < out | sed 's/ \[entry\]$//' |
			awk '{ n = split($1, q, "."); print "  " q[n] " " $2 }' > ours.$role
		[ -s gdb.$role ] || { cat gdb.out; fail "$py: py-bt shows no frame of thread $tid"; }
		cmp -s gdb.$role ours.$role || {
			diff gdb.$role ours.$role
			fail "$py: thread $tid ($role): py-bt and python/ differ"
		}
	done
	kill "$CHILD_PID"
	runs=$((runs + 1))
done
pass "$runs Pythons: py-bt and python/ list the same functions at the same lines in both threads"
