# SPDX-License-Identifier: MIT
# CPython 3.13 (the build of `make cpython`) describes its layout in
# _Py_DebugOffsets at the start of _PyRuntime: python/ reads every
# thread's frames through it, live and in a core, at the workload's marked
# lines (entry frames found by the shim frame behind them), and gdb's
# py-bt (the build's python-gdb.py) lists the same functions at the same
# lines where it can read the frames: in an optimised build whose eval
# loop keeps no `frame` variable py-bt prints "unable to read python frame
# information" for each, and only the marks judge.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gdb
py=$(cpython_313)
[ -n "$py" ] && [ -x "$py" ] || skip "no CPython 3.13 build (make cpython, or JU_CPYTHON)"
"$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' || skip "$py is not a CPython 3.13"
start_pyframes "$py" 3
limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat err; fail "pyframes exited $?"; }
grep -q "its layout from _Py_DebugOffsets" err || { cat err; fail "the layout is not from _Py_DebugOffsets"; }
! grep -q warning err || { cat err; fail "a warning"; }
check_pyframes out 3 "$py"
# judge_by_pybt WHAT GDB-TARGET-ARGS...: py-bt agrees, or cannot read
judged=0
judge_by_pybt() {
	jb_what=$1; shift
	pybt "$py" pybt.frames "$@"
	if grep -q "unable to read python frame information" gdb.out && ! grep -q '^  File "' gdb.out; then
		note "$jb_what: py-bt cannot read this build's frames; the marks alone judge"
		return
	fi
	same_as_pybt pybt.frames out "$jb_what"
	judged=$((judged + 1))
}
judge_by_pybt "$py" -p "$CHILD_PID"
need_cmd gcore
limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { tail gcore.out; fail "gcore exited $?"; }
limit 30 "$PYF" --core "core.$CHILD_PID" > out 2> err || { cat err; fail "pyframes on the core exited $?"; }
check_pyframes out 3 "$py core"
judge_by_pybt "$py core" "$py" "core.$CHILD_PID"
pass "$py: both threads' frames through _Py_DebugOffsets at their marks, live and in a core; py-bt agreed in $judged of 2"
