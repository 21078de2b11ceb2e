# SPDX-License-Identifier: MIT
# A core of the parked workload (gdb's gcore) holds the Python frames the
# live process had: python/ reads every thread's frames from it at the
# marked lines, with the layout from DWARF and from the table, on
# Debian's release python3 and on python3.11d; and gdb's py-bt on the
# same core lists the same functions at the same lines.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gcore
runs=0
for py in /usr/bin/python3 /usr/bin/python3.11d; do
	start_pyframes "$py" 3
	limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { tail gcore.out; fail "gcore exited $?"; }
	kill "$CHILD_PID"
	for how in dwarf table; do
		opt=; [ $how = table ] && opt=--no-dwarf
		limit 30 "$PYF" $opt --core "core.$CHILD_PID" > out 2> err || { cat err; fail "$py ($how): pyframes exited $?"; }
		! grep -q warning err || { cat err; fail "$py ($how): a warning"; }
		check_pyframes out 3 "$py core ($how)"
		runs=$((runs + 1))
	done
	pybt "$py" pybt.frames "$(readlink -f "$py")" "core.$CHILD_PID"
	same_as_pybt pybt.frames out "$py core"
	rm -f "core.$CHILD_PID"
done
pass "$runs reads of cores of python3 and python3.11d: every frame at its marked line, as py-bt shows it"
