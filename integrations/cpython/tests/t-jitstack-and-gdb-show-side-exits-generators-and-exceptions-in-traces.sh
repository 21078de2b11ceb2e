# shapes.py's traces of other shapes than hot.py's, each process waiting
# in time.sleep called from JIT code; jitstack and gdb attached to it show
# the Python functions at their lines ("# mark:" lines of shapes.py):
#   side  the side exit's own executor, named after the line it starts at
#         (the else branch: side-sleep) and at that line, then the
#         executor it was entered from, "py:side (shapes.py:ENTER)" at
#         ENTER (side-enter, the loop's backward jump): the side exit
#         returns into the first executor's trampoline
#   gen   py:gen's executor at gen-sleep, then the trampoline of
#         py:consume's, which resumed the generator, at the line its trace
#         was entered at (consume-enter, its loop's backward jump: a
#         trampoline has one line, so consume's for line is not shown)
#   exc   after 2000 iterations that raised ValueError out of the trace
#         and caught it: py:fail inlined at exc-sleep into
#         "py:catch (shapes.py:ENTER)" at exc-call (ENTER: exc-enter)
# and every stack reaches Py_BytesMain.  Baseline, which must fail: the
# stock JIT (no Python function is named).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
S=shapes.py
side_sleep=$(mark side-sleep $S) side_enter=$(mark side-enter $S)
gen_sleep=$(mark gen-sleep $S) consume=$(mark consume-enter $S)
exc_sleep=$(mark exc-sleep $S) exc_call=$(mark exc-call $S) exc_enter=$(mark exc-enter $S)

# look RUN SHAPE WHAT: WHAT-SHAPE.js (jitstack) and WHAT-SHAPE.gdb (gdb bt)
# of shapes.py SHAPE run by RUN, waiting in time.sleep
look() {
	start_ready "$2.out" '^ready' "shapes.py $2 ($3)" "$1" $S "$2"
	for _ in $(seq 100); do
		grep -q clock_nanosleep "/proc/$CHILD_PID/wchan" 2>/dev/null && break
		sleep 0.1
	done
	limit 60 "$JS" -p "$CHILD_PID" > "$3-$2.js" 2>&1
	# the stock JIT fails jitstack's half already: gdb's would cost a minute
	if [ "$3" = stock ]; then : > "$3-$2.gdb"; else
		limit 120 "$GDB" -nx -batch -p "$CHILD_PID" -ex "set pagination off" -ex bt > "$3-$2.gdb" 2>&1
	fi
	kill_tree "$CHILD_PID"
}

# Two frames in a row, as jitstack and gdb write them: "py:NAME1 at LINE1"
# then "py:NAME2 at LINE2", NAMEs with their "(shapes.py:N)" if any, LINEs
# in shapes.py; and Py_BytesMain further down.
js_pair() { # FILE NAME1 LINE1 NAME2 LINE2
	awk -v a="$2" -v la="$3" -v b="$4" -v lb="$5" '
		function is(name, line) {
			return index($0, " " name) && (index($0, " " name "+0x") || index($0, " " name " (")) &&
				$0 ~ ("[ /]shapes\\.py:" line "( \\[inlined\\])?$")
		}
		/^#[0-9]+ / { if (s && NR == s + 1 && is(b, lb)) ok = 1; s = is(a, la) ? NR : 0 }
		/^#[0-9]+ / && / Py_BytesMain\+/ { seen_main = 1 }
		END { exit !(ok && seen_main) }' "$1"
}
gdb_pair() { # FILE NAME1 LINE1 NAME2 LINE2
	awk -v a="$2" -v la="$3" -v b="$4" -v lb="$5" '
		function is(name, line) {
			return (index($0, " " name " () at ") ||
				(name !~ /[(]/ && $0 ~ (" " name " [(]shapes[.]py:[0-9]+[)] [(][)] at "))) &&
				$0 ~ ("[ /]shapes\\.py:" line "$")
		}
		/^#[0-9]+ / { if (s && NR == s + 1 && is(b, lb)) ok = 1; s = is(a, la) ? NR : 0 }
		/^#[0-9]+ / && / Py_BytesMain \(/ { seen_main = 1 }
		END { exit !(ok && seen_main) }' "$1"
}
# judge WHAT SHAPE: the shape's two frames in both tools' stacks
judge() {
	case $2 in
	side) set -- "$1" "$2" "py:side ($S:$side_sleep)" "$side_sleep" "py:side ($S:$side_enter)" "$side_enter" ;;
	gen) set -- "$1" "$2" "py:gen" "$gen_sleep" "py:consume ($S:$consume)" "$consume" ;;
	exc) set -- "$1" "$2" "py:fail" "$exc_sleep" "py:catch ($S:$exc_enter)" "$exc_call" ;;
	esac
	js_pair "$1-$2.js" "$3" "$4" "$5" "$6" || { echo "jitstack, $2: not '$3 at $4' then '$5 at $6'"; return 1; }
	gdb_pair "$1-$2.gdb" "$3" "$4" "$5" "$6" || { echo "gdb, $2: not '$3 at $4' then '$5 at $6'"; return 1; }
}

for shape in side gen exc; do
	look "$PYRUN" $shape with
	judge with $shape > why.txt || { cat why.txt with-$shape.js; grep '^#' with-$shape.gdb; fail "$shape"; }
	echo "$shape:"
	grep ' py:' with-$shape.js
	look "$PY_STOCK" $shape stock
	# judged as the patched one; no gdb output, so jitstack's half must fail
	if judge stock $shape > why.txt || ! grep -q '^jitstack' why.txt; then
		fail "$shape: the stock JIT passes the check too, so it proves nothing"
	fi
	echo "stock JIT, $shape: FAIL as it must ($(cat why.txt))"
done
pass "jitstack and gdb show the Python functions at their lines through a side exit's executor, a generator's and raised exceptions; the stock JIT does not"
