# stale.py frees first's executor and maps second's where it was
# (JITUNWIND=default,perfmap: the map's tombstoned "py:first" line and
# live "py:second" line start at the same address, or the kernel did not
# reuse the pages and there is nothing to judge), then waits in time.sleep
# called from second's trace.  jitstack's stack shows second's executor at
# second-sleep, then its trampoline at second-enter, and names no frame
# py:first; gdb's "info symbol" of the address the two executors shared
# says py:second, and gdb's backtrace has no py:first either.  Baseline,
# which must fail: the stock JIT (nothing names second's frames).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
S=stale.py
first_enter=$(mark first-enter $S) second_enter=$(mark second-enter $S) second_sleep=$(mark second-sleep $S)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# look RUN WHAT: WHAT.js, jitstack's stack of stale.py run by RUN, waiting
look() {
	JITUNWIND=default,perfmap start_ready "$2.out" '^ready' "stale.py ($2)" "$1" $S
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$CHILD_PID.map"
	for _ in $(seq 100); do
		grep -q clock_nanosleep "/proc/$CHILD_PID/wchan" 2>/dev/null && break
		sleep 0.1
	done
	limit 60 "$JS" -p "$CHILD_PID" > "$2.js" 2>&1
}
# judge FILE: second's executor at second-sleep, then its trampoline at
# second-enter, Py_BytesMain below, no py:first
judge() {
	awk -v a="py:second ($S:$second_enter)+0x" -v la="$second_sleep" -v lb="$second_enter" '
		function is(line) { return index($0, " " a) && $0 ~ ("[ /]stale\\.py:" line "$") }
		/^#[0-9]+ / { if (s && NR == s + 1 && is(lb)) ok = 1; s = is(la) ? NR : 0 }
		/^#[0-9]+ / && / Py_BytesMain\+/ { seen_main = 1 }
		/^#[0-9]+ / && / py:first/ { stale = 1 }
		END { exit !(ok && seen_main && !stale) }' "$1"
}

look "$PYRUN" with
map=/tmp/perf-$CHILD_PID.map
[ -f "$map" ] || { kill_tree "$CHILD_PID"; fail "no $map"; }
at=$(sed -n "s/^#\([0-9a-f]*\) [0-9a-f]* py:first ($S:$first_enter)\$/\1/p" "$map" | head -1)
[ -n "$at" ] || { kill_tree "$CHILD_PID"; cat "$map"; fail "first's executor is not in the map, freed"; }
# a tombstone writes "#" over the address's first digit
second=$(sed -n "s/^\([0-9a-f]*\) [0-9a-f]* py:second ($S:$second_enter)\$/\1/p" "$map" | head -1)
if [ -z "$second" ] || [ "${second#?}" != "$at" ]; then
	kill_tree "$CHILD_PID"
	grep ' py:[fs]' "$map"
	skip "the kernel mapped second's executor elsewhere than first's freed one: no reuse to judge"
fi
addr=0x$second
echo "first's executor, freed, and second's both at $addr"
limit 120 "$GDB" -nx -batch -p "$CHILD_PID" -ex "set pagination off" -ex "info symbol $addr" -ex bt > gdb.out 2>&1
kill_tree "$CHILD_PID"
judge with.js || { cat with.js; fail "jitstack does not show second's executor at its lines, or names py:first"; }
grep ' py:' with.js
grep -q "^py:second ($S:$second_enter) in section " gdb.out ||
	{ cat gdb.out; fail "gdb does not name $addr py:second ($S:$second_enter)"; }
! grep -q 'py:first' gdb.out || { grep 'py:first' gdb.out; fail "gdb names py:first, freed"; }
echo "gdb: $(grep ' in section ' gdb.out)"

look "$PY_STOCK" stock
kill_tree "$CHILD_PID"
if judge stock.js; then
	fail "the stock JIT passes the check too, so it proves nothing"
fi
echo "stock JIT: FAIL as it must ($(grep -c '^#' stock.js) frames, $(grep -c ' py:' stock.js) of a Python function)"
pass "the memory of a freed executor is named after the one that reuses it, by jitstack and gdb; the stock JIT names neither"
