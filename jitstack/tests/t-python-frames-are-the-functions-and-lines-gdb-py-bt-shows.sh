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
	start_pyframes "$py" 3
	limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat err; fail "$py: pyframes exited $?"; }
	check_pyframes out 3 "$py"
	pybt "$py" pybt.frames -p "$CHILD_PID"
	same_as_pybt pybt.frames out "$py"
	kill "$CHILD_PID"
	runs=$((runs + 1))
done
pass "$runs Pythons: py-bt and python/ list the same functions at the same lines in both threads"
