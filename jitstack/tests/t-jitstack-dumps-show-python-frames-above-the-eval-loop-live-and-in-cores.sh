# SPDX-License-Identifier: MIT
# jitstack -p and --core on the parked workload (progs/pyframes.py) show
# each thread's Python functions as frames of their own, "[python]", at
# the lines the workload marks, innermost first, each piece of the chain
# (up to its entry frame, pyframes.expect) just above the eval loop frame
# (_PyEval_EvalFrameDefault) that runs it: on Debian's release python3
# and on python3.11d, live and from a gcore core; with --json, one frame
# object per Python function with "python": true; with --no-python, none.
# gdb's py-bt on python3.11d's process and core lists the same functions
# at the same lines.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gcore
need_cmd gdb

# jitstack's text dump (FILE) as pyframes prints frames: "thread TID",
# then "  QUALNAME FILE:LINE", the last of each run of Python frames
# marked " [entry]", and a line "  NOT ABOVE THE EVAL LOOP: FRAME" where a
# run is followed by another native frame than the eval loop's.
as_pyframes() { # FILE
	awk '
	function flush(next_fn) {
		if (held == "") return
		print held " [entry]"
		if (next_fn !~ /^_PyEval_EvalFrameDefault\+/) print "  NOT ABOVE THE EVAL LOOP: " next_fn
		held = ""
	}
	/^TID / { flush("(end of the stack)"); print "thread " $2; next }
	/^#[0-9]/ && / \[python\]$/ { if (held != "") print held; held = "  " $3 " " $5; next }
	/^#[0-9]/ { flush($3); next }
	END { flush("(end of the stack)") }' "$1"
}

runs=0
for py in /usr/bin/python3 /usr/bin/python3.11d; do
	start_pyframes "$py" 3
	limit 60 "$JS" -p "$CHILD_PID" > dump 2> err || { cat err; fail "$py: jitstack exited $?"; }
	! grep -q warning err || { cat err; fail "$py: a warning"; }
	as_pyframes dump > ours
	check_pyframes ours 3 "$py: jitstack -p"
	want=$( (expected_frames main 3; expected_frames gen 3) | wc -l)
	limit 60 "$JS" -p "$CHILD_PID" --json > dump.json 2> err || { cat err; fail "$py: jitstack --json exited $?"; }
	got=$(grep -o '"python": true' dump.json | wc -l)
	[ "$got" -eq "$want" ] || fail "$py: --json: $got frames with \"python\": true, $want expected"
	grep -F '"function": "main.<locals>.<lambda>", "module": null, "jit": false, "source": "python", "file": "'"$PYW"'", "line": ' dump.json > /dev/null ||
		{ grep -F '"python": true' dump.json | head -3; fail "$py: --json: no frame object for the lambda"; }
	limit 60 "$JS" -p "$CHILD_PID" --no-python > plain 2> err || { cat err; fail "$py: --no-python exited $?"; }
	! grep -q '\[python\]' plain || fail "$py: --no-python shows Python frames"
	[ "$(grep -c '^#' plain)" -eq "$(($(grep -c '^#' dump) - want))" ] ||
		fail "$py: --no-python shows other native frames than the dump with them"
	if [ "$py" = /usr/bin/python3.11d ]; then
		pybt "$py" pybt.frames -p "$CHILD_PID"
		same_as_pybt pybt.frames ours "$py live"
	fi
	limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { tail gcore.out; fail "gcore exited $?"; }
	kill "$CHILD_PID"
	limit 60 "$JS" --core "core.$CHILD_PID" > cdump 2> err || { cat err; fail "$py: jitstack --core exited $?"; }
	! grep -q warning err || { cat err; fail "$py core: a warning"; }
	as_pyframes cdump > cours
	check_pyframes cours 3 "$py: jitstack --core"
	if [ "$py" = /usr/bin/python3.11d ]; then
		pybt "$py" pybt.frames "$(readlink -f "$py")" "core.$CHILD_PID"
		same_as_pybt pybt.frames cours "$py core"
	fi
	rm -f "core.$CHILD_PID"
	runs=$((runs + 1))
done
pass "$runs Pythons, live and from cores: every Python frame at its marked line, above the eval loop frame that runs it, as py-bt shows them"
