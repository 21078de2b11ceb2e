# wait.py waits in time.sleep called from the trace of hot's loop, which
# inlined small(): lldb (lldb-16) attached to it, then lldb and gdb on its
# core (SIGABRT while it waits) show the inline frame py:small at the line
# that calls time.sleep ("# mark: sleep"), then the executor
# "py:hot (wait.py:ENTER)" at the line that calls small ("# mark: call"),
# ENTER the line the trace starts at ("# mark: enter"), and reach
# Py_BytesMain (lib.sh lldb_check, gdb_check); both read the executor's GDB
# JIT image (in the core too).  Baseline, which must fail: the stock JIT.
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_lldb
need_gdb
need_core_in_cwd
sleep_line=$(mark sleep wait.py) enter=$(mark enter wait.py) call=$(mark call wait.py)

# look RUN PYTHON WHAT: lldb-WHAT-live.out, lldb-WHAT-core.out and
# gdb-WHAT-core.out of wait.py run by RUN, the core's program PYTHON
look() {
	rm -f core core.*
	start_ready wait.out '^ready' "wait.py ($3)" sh -c 'ulimit -c unlimited && exec "$@"' sh "$1" wait.py
	pid=$CHILD_PID
	# the loop is 2000 time.sleep(0) before the long one
	for _ in $(seq 100); do
		[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = S ] && grep -q clock_nanosleep "/proc/$pid/wchan" 2>/dev/null &&
			break
		sleep 0.1
	done
	sleep 0.5
	limit 120 "$LLDB" --no-lldbinit -b -p "$pid" -o bt > "lldb-$3-live.out" 2>&1
	kill -ABRT "$pid"
	wait "$pid" 2>/dev/null
	CORE=$(ls core core.* 2>/dev/null | head -1)
	[ -n "$CORE" ] || { cat wait.out; skip "no core file was written (ulimit or core_pattern)"; }
	limit 120 "$LLDB" --no-lldbinit -b -c "$CORE" "$2" -o bt > "lldb-$3-core.out" 2>&1
	limit 120 "$GDB" -nx -batch -ex "set pagination off" -ex bt "$2" "$CORE" > "gdb-$3-core.out" 2>&1
}

look "$PYRUN" "$PY" with
for f in lldb-with-live lldb-with-core; do
	lldb_check wait.py "$sleep_line" "$enter" "$call" < $f.out > why.txt || { cat why.txt; fail "$f"; }
	grep 'frame #[0-9]*:.*py:' $f.out | tail -2
done
gdb_check wait.py "$sleep_line" "$enter" "$call" < gdb-with-core.out > why.txt ||
	{ cat gdb-with-core.out; fail "gdb core: $(cat why.txt)"; }
grep 'py:' bt.txt

look "$PY_STOCK" "$PY_STOCK" stock
for f in lldb-stock-live lldb-stock-core; do
	if lldb_check wait.py "$sleep_line" "$enter" "$call" < $f.out > /dev/null; then
		fail "$f: the stock JIT passes the check too, so it proves nothing"
	fi
	echo "$f: FAIL as it must ($(grep -c 'frame #' $f.out) frames, none of py:small)"
done
if gdb_check wait.py "$sleep_line" "$enter" "$call" < gdb-stock-core.out > why.txt; then
	fail "gdb on the stock JIT's core passes the check too, so it proves nothing"
fi
echo "gdb core, stock JIT: FAIL as it must ($(cat why.txt))"
pass "lldb live and in a core, and gdb in a core, show py:small at wait.py:$sleep_line inlined into py:hot (wait.py:$enter) at wait.py:$call; the stock JIT does not"
