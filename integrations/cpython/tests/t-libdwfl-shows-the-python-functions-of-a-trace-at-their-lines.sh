# libdwfl, as a small program uses it (the matrix's mx-dwfl,
# tests/matrix/remote_dwfl.c: each GDB JIT image reported to libdwfl as a
# module, the threads unwound by dwfl_thread_getframes), attached to
# wait.py waiting in time.sleep called from the trace of hot's loop:
# "py:small at .../wait.py:SLEEP inlined", then
# "py:hot (wait.py:ENTER) at .../wait.py:CALL", and Py_BytesMain below
# (the lines marked "# mark: sleep", "enter" and "call").  Baseline, which
# must fail: the stock JIT (no image: libdwfl finds no Python function).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
DWFL=$BUILD/matrix/mx-dwfl
need_file "$DWFL" "make matrix-tools"
sleep_line=$(mark sleep wait.py) enter=$(mark enter wait.py) call=$(mark call wait.py)

look() { # RUN WHAT: WHAT.out, libdwfl's stack of wait.py run by RUN
	start_ready wait.out '^ready' "wait.py ($2)" "$1" wait.py
	for _ in $(seq 100); do
		grep -q clock_nanosleep "/proc/$CHILD_PID/wchan" 2>/dev/null && break
		sleep 0.1
	done
	limit 120 "$DWFL" -p "$CHILD_PID" --jit --inline > "$2.out" 2>&1
	kill_tree "$CHILD_PID"
}
judge() { # FILE
	awk -v inner="$sleep_line" -v enter="$enter" -v call="$call" '
		/^0x/ && index($0, " py:small at ") && $0 ~ ("[ /]wait\\.py:" inner " inlined$") { s = NR; next }
		/^0x/ && s && NR == s + 1 && index($0, " py:hot (wait.py:" enter ") at ") &&
		    $0 ~ ("[ /]wait\\.py:" call "$") { ok = 1 }
		/^0x/ && / Py_BytesMain / { seen_main = 1 }
		END { exit !(ok && seen_main) }' "$1"
}

look "$PYRUN" with
judge with.out || { cat with.out; fail "libdwfl does not show py:small at wait.py:$sleep_line inlined into py:hot (wait.py:$enter) at wait.py:$call"; }
grep ' py:' with.out
look "$PY_STOCK" stock
if judge stock.out; then
	fail "the stock JIT passes the check too, so it proves nothing"
fi
echo "stock JIT: FAIL as it must ($(head -1 stock.out); $(grep -c ' py:' stock.out) frames of a Python function)"
pass "libdwfl shows py:small at wait.py:$sleep_line inlined into py:hot (wait.py:$enter) at wait.py:$call; the stock JIT does not"
