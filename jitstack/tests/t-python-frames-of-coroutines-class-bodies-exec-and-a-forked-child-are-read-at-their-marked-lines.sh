# SPDX-License-Identifier: MIT
# The Python frames of code of other shapes than pyframes.py's, read from
# outside by python/ (progs/pyshapes.py): coroutines run by asyncio's
# event loop (frames owned by coroutine objects, asyncio's own frames
# between them and the thread's function), a class body, a string run by
# exec() under its own file name, and a child made by os.fork() (a
# process of its own, whose thread goes on from the fork).  Each thread's
# frames of the workload's code are at the lines it marks
# (pyshapes.expect), with the entry frames marked (those of coroutines as
# the version enters them); on CPython 3.11 (Debian's release python3 and
# the debug build python3.11d) every frame of every thread, asyncio's
# too, is the function and line gdb's py-bt shows; on the 3.13 build of
# `make cpython`, when there is one, the marks alone judge (py-bt cannot
# read that optimised build's frames).  Read live, and the 3.11 release
# build's also from a core.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gdb
PYS=$ROOT/jitstack/tests/progs/pyshapes.py
EXP=$ROOT/jitstack/tests/pyshapes.expect

# want ROLE: the role's expected frames, "QUALNAME FILE:LINE FLAG" (FLAG
# entry, entry? or -), from pyshapes.expect and the workload's marks
want() {
	awk -v role="$1" -v file="$PYS" '
	FNR == NR { if (match($0, /#@[a-z-]+$/)) line[substr($0, RSTART + 2)] = FNR; next }
	/^#/ || $1 != role { next }
	{
		if (index($3, ":")) where = $3
		else if ($3 in line) where = file ":" line[$3]
		else { print "no line ends with #@" $3 > "/dev/stderr"; exit 1 }
		print $2, where, (NF > 3 ? $4 : "-")
	}' "$PYS" "$EXP"
}
# check OUT TID ROLE WHAT: the frames of thread TID in pyframes' output OUT
# that run the workload's code are ROLE's expected ones
check() {
	want "$3" > want || fail "pyshapes.expect names a tag pyshapes.py lacks"
	[ -s want ] || fail "no expected frames for $3"
	frames_of "$2" < "$1" | awk -v file="$PYS" '
		{ at = $2; sub(/:[0-9]+$/, "", at) }
		at == file || at == "<pyshapes-exec>" { print $1, $2, $3 == "[entry]" ? "entry" : "-" }' > got
	awk 'FNR == NR { w[++n] = $0; next }
		{ g[++m] = $0 }
		END {
			for (i = 1; i <= (n > m ? n : m); i++) {
				split(w[i], a, " "); split(g[i], b, " ")
				ok = i <= n && i <= m && a[1] == b[1] && a[2] == b[2] &&
					(a[3] == "entry?" || a[3] == b[3])
				if (!ok) { printf "frame %d: want \"%s\", got \"%s\"\n", i, w[i], g[i]; bad = 1 }
			}
			exit bad
		}' want got > why || { cat why; fail "$4: thread $2 ($3): frames differ from the workload's marks"; }
}
# by_pybt OUT TID ROLE WHAT: every frame of thread TID is the function
# (py-bt names it by co_name, the last part of the qualified name) and
# line py-bt shows (pybt.frames)
by_pybt() {
	frames_of "$2" < pybt.frames > "pybt.$3"
	frames_of "$2" < "$1" | sed 's/ \[entry\]$//' | awk '{ n = split($1, q, "."); print "  " q[n] " " $2 }' > "ours.$3"
	[ -s "pybt.$3" ] || { cat gdb.out; fail "$4: py-bt shows no frame of thread $2"; }
	cmp -s "pybt.$3" "ours.$3" || { diff "pybt.$3" "ours.$3"; fail "$4: thread $2 ($3): py-bt and python/ differ"; }
}

runs=0 judged=0
py313=$(cpython_313)
for py in /usr/bin/python3 /usr/bin/python3.11d $py313; do
	[ -x "$py" ] || skip "$py is not installed (python3.11-dbg: scripts/install-deps.sh test)"
	start_ready ps.out '^parked [0-9]+ fork' "$py on pyshapes.py" "$py" "$PYS"
	for _ in $(seq 100); do [ "$(grep -c '^parked' ps.out)" -eq 5 ] && break; sleep 0.05; done
	[ "$(grep -c '^parked' ps.out)" -eq 5 ] || { cat ps.out; fail "$py: the threads and the child did not all park"; }
	child=$(awk '$1 == "parked" && $3 == "fork" { print $4 }' ps.out)
	CLEANUP_PIDS="$CLEANUP_PIDS $child"
	sleep 0.3 # each prints before it calls sleep: let it get there
	limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat err; fail "$py: pyframes exited $?"; }
	limit 30 "$PYF" -p "$child" > out.fork 2> err.fork || { cat err.fork; fail "$py: pyframes on the child exited $?"; }
	! grep -q warning err err.fork || { cat err err.fork; fail "$py: a warning"; }
	[ "$(grep -c '^thread ' out)" -eq 4 ] || { cat out; fail "$py: not 4 threads"; }
	[ "$(grep -c '^thread ' out.fork)" -eq 1 ] || { cat out.fork; fail "$py: the child has not 1 thread"; }
	for role in coro cls exec main; do
		tid=$(awk -v r=$role '$1 == "parked" && $3 == r { print $2 }' ps.out)
		check out "$tid" $role "$py"
	done
	ftid=$(awk '$1 == "parked" && $3 == "fork" { print $2 }' ps.out)
	check out.fork "$ftid" fork "$py (child)"
	runs=$((runs + 1))
	if [ "$py" != "$py313" ]; then
		pybt "$py" pybt.frames -p "$CHILD_PID"
		for role in coro cls exec main; do
			by_pybt out "$(awk -v r=$role '$1 == "parked" && $3 == r { print $2 }' ps.out)" $role "$py"
		done
		pybt "$py" pybt.frames -p "$child"
		by_pybt out.fork "$ftid" fork "$py (child)"
		judged=$((judged + 1))
	fi
	if [ "$py" = /usr/bin/python3 ]; then
		need_cmd gcore
		limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { tail gcore.out; fail "gcore exited $?"; }
		limit 30 "$PYF" --core "core.$CHILD_PID" > out.core 2> err || { cat err; fail "pyframes on the core exited $?"; }
		pybt "$py" pybt.frames "$py" "core.$CHILD_PID"
		for role in coro cls exec main; do
			tid=$(awk -v r=$role '$1 == "parked" && $3 == r { print $2 }' ps.out)
			check out.core "$tid" $role "$py core"
			by_pybt out.core "$tid" $role "$py core"
		done
		rm -f "core.$CHILD_PID"
	fi
	kill "$child" "$CHILD_PID"
done
pass "coroutines, a class body, exec'd code and a forked child at their marks in $runs interpreters, every frame as py-bt shows it in $judged (and in a core)"
