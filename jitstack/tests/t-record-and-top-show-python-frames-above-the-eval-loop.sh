# SPDX-License-Identifier: MIT
# jitstack record --mode ptrace and top on the parked workload
# (progs/pyframes.py, Debian's release python3) show each thread's Python
# functions as frames of their own, read from the interpreter:
# - collapsed stacks: in each thread's stack, the Python functions of its
#   marked lines in order (pyframes.expect, outermost first), each run of
#   them just above a _PyEval_EvalFrameDefault frame;
# - pprof: each Python function at each of its marked lines a Location
#   with no address (no Python function is code at an address) and a Line;
# - SVG: Python frames of their own kind ("python"), with a legend entry;
# - top --once: the Python functions ranked with the source "python";
# - --no-python: none of them; --mode perf: a warning that says Python
#   frames need --mode ptrace.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_file "$JTB/pprofdump" "make $JTB/pprofdump"
start_pyframes /usr/bin/python3 3
rec() { # FORMAT FILE [OPTION...]
	rec_fmt=$1 rec_out=$2
	shift 2
	limit 60 "$JS" record -p "$CHILD_PID" --mode ptrace --idle -F 100 -d 0.5 --format "$rec_fmt" -o "$rec_out" "$@" \
		2> rec.err || { cat rec.err; fail "record --format $rec_fmt $* exited $?"; }
	! grep -q warning rec.err || { cat rec.err; fail "record --format $rec_fmt $*: a warning"; }
}
rec collapsed prof.collapsed
rec pprof prof.pb.gz
rec svg prof.svg
rec collapsed plain.collapsed --no-python

for role in main gen; do
	expected_frames $role 3 > "want.$role" || fail "pyframes.expect names a tag pyframes.py lacks"
	names=$(awk '{ print $1 }' "want.$role" | sort -u | paste -sd' ')
	want=$(awk '{ print $1 }' "want.$role" | tac | paste -sd';')
	# the stack of that thread: the one that holds its outermost function
	outer=$(tail -1 "want.$role" | awk '{ print $1 }')
	line=$(grep -F ";$outer;" prof.collapsed | head -1)
	[ -n "$line" ] || { cat prof.collapsed; fail "collapsed: no stack holds $outer ($role)"; }
	got=$(echo "${line% *}" | tr ';' '\n' | awk -v names="$names" '
		BEGIN { n = split(names, v, " "); for (i = 1; i <= n; i++) py[v[i]] = 1 }
		$0 in py { if (!(prev in py) && prev != "_PyEval_EvalFrameDefault") print "NOT ABOVE THE EVAL LOOP"; print }
		{ prev = $0 }' | paste -sd';')
	[ "$got" = "$want" ] || { echo "$line"; fail "collapsed ($role): Python frames $got, want $want"; }
	! grep -F ";$outer;" plain.collapsed > /dev/null || fail "--no-python: $outer is in the collapsed stacks"
done
note "collapsed: $(cat want.main | wc -l) + $(cat want.gen | wc -l) Python frames in order, each run above the eval loop"

"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "pprofdump: the profile is not valid"; }
awk '{ split($2, f, ":"); print $1 ":" f[2] }' want.main want.gen | sort -u > want.locs
awk '$1 == "location" && $3 == "0" { print $4 }' dump | sort -u > got.locs
cmp -s want.locs got.locs || { diff want.locs got.locs; fail "pprof: the Python locations differ from the marked lines"; }

grep -q 'data-k="python"><title>park ' prof.svg || fail "svg: no frame of kind python for park"
grep -q '>Python</text>' prof.svg || fail "svg: no legend entry for Python frames"

limit 60 "$JS" top -p "$CHILD_PID" --once --mode ptrace --idle -d 0.5 > top.out 2> top.err ||
	{ cat top.err; fail "top --once exited $?"; }
for f in park deep 'main.<locals>.<lambda>' '<module>' Box.meth produce worker; do
	grep -Eq "^ +[0-9.]+% +[0-9.]+% +python +$f\$" top.out || { cat top.out; fail "top: no row for $f with the source python"; }
done

if limit 60 "$JS" record -p "$CHILD_PID" --mode perf -F 100 -d 0.2 -o /dev/null 2> perf.err; then
	grep -q "Python frames are shown with --mode ptrace only" perf.err || { cat perf.err; fail "--mode perf: no warning"; }
fi
pass "record (collapsed, pprof, svg) and top show the Python frames at their marked lines, above the eval loop"
