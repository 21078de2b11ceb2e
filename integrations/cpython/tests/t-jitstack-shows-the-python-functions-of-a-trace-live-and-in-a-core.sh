# jitstack, attached to wait.py waiting in time.sleep called from the trace
# of hot's loop, which inlined small(), and on its core (SIGABRT while it
# waits): the inline frame py:small at the line that calls time.sleep
# ("# mark: sleep"), then the executor "py:hot (wait.py:ENTER)" at the line
# that calls small ("# mark: call"), ENTER the line the trace starts at
# ("# mark: enter"), and Py_BytesMain below (lib.sh jitstack_check).
# The interpreter's Python frames merge with them: small and hot, which
# the executor shows, are not shown again; the one Python frame left,
# <module> at the line that calls hot ("# mark: main"), comes just below
# the executor's trampoline frame and above _PyEval_EvalFrameDefault.
# Baseline, which must fail: the stock JIT (jitstack finds no JIT
# registration and stops at the executor).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
need_core_in_cwd
sleep_line=$(mark sleep wait.py) enter=$(mark enter wait.py) call=$(mark call wait.py) main=$(mark main wait.py)

# python_check < jitstack's text output: one Python frame, <module> at
# wait.py:MAIN, between the trampoline (py:hot at ENTER) and the eval loop.
python_check() {
	tee js.in | awk -v enter="$enter" -v main="$main" '
		/^#[0-9]+ / && / \[python\]$/ { n++; if ($3 == "<module>" && $0 ~ ("/wait.py:" main " \\[python\\]$") && prev ~ (" py:hot \\(wait.py:" enter "\\)\\+0x")) at = NR }
		/^#[0-9]+ / && at && NR == at + 1 && / _PyEval_EvalFrameDefault\+/ { ok = 1 }
		/^#[0-9]+ / { prev = $0 }
		END { exit !(ok && n == 1) }' || { grep '^#' js.in; return 1; }
}

# look RUN PYTHON WHAT: js-WHAT-live.out and js-WHAT-core.out of wait.py
# run by RUN, the core's program PYTHON
look() {
	rm -f core core.*
	start_ready wait.out '^ready' "wait.py ($3)" sh -c 'ulimit -c unlimited && exec "$@"' sh "$1" wait.py
	pid=$CHILD_PID
	for _ in $(seq 100); do
		grep -q clock_nanosleep "/proc/$pid/wchan" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
	limit 60 "$JS" -p "$pid" > "js-$3-live.out" 2>&1
	kill -ABRT "$pid"
	wait "$pid" 2>/dev/null
	CORE=$(ls core core.* 2>/dev/null | head -1)
	[ -n "$CORE" ] || { cat wait.out; skip "no core file was written (ulimit or core_pattern)"; }
	limit 60 "$JS" --core "$CORE" --exe "$2" > "js-$3-core.out" 2>&1
}

look "$PYRUN" "$PY" with
for f in js-with-live js-with-core; do
	jitstack_check wait.py "$sleep_line" "$enter" "$call" < $f.out > why.txt || { cat why.txt; fail "$f"; }
	grep ' py:' $f.out
	python_check < $f.out > why.txt || { cat why.txt; fail "$f: the Python frames are not merged with the executor's"; }
	grep '\[python\]' $f.out
done
look "$PY_STOCK" "$PY_STOCK" stock
for f in js-stock-live js-stock-core; do
	if jitstack_check wait.py "$sleep_line" "$enter" "$call" < $f.out > /dev/null; then
		fail "$f: the stock JIT passes the check too, so it proves nothing"
	fi
	echo "$f: FAIL as it must ($(grep -c '^#' $f.out) frames, $(grep -c ' py:' $f.out) of a Python function)"
done
pass "jitstack live and in a core shows py:small at wait.py:$sleep_line inlined into py:hot (wait.py:$enter) at wait.py:$call, then <module> at wait.py:$main, the one Python frame the executor does not show; the stock JIT does not"
