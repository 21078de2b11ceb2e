# SPDX-License-Identifier: MIT
# pyframes.sh - sourced by the Python frame tests after lib.sh: the
# workload (progs/pyframes.py) started and parked, and each thread's
# expected frames derived from its marked lines (pyframes.expect), never
# from a tool.
#   $PYF  tests/pyframes, the reader's printer
PYF=$JTB/pyframes
PYW=$ROOT/jitstack/tests/progs/pyframes.py
need_file "$PYF" "make $PYF"

# Start PYTHON on the workload, recursing DEPTH deep, and wait until both
# threads are parked; sets CHILD_PID, TID_main and TID_gen.
start_pyframes() { # PYTHON DEPTH
	[ -x "$1" ] || skip "$1 is not installed (python3.11-dbg: scripts/install-deps.sh test)"
	start_ready py.out '^parked' "$1 on pyframes.py" "$1" "$PYW" "$2"
	for _ in $(seq 100); do [ "$(grep -c '^parked' py.out)" -eq 2 ] && break; sleep 0.05; done
	[ "$(grep -c '^parked' py.out)" -eq 2 ] || { cat py.out; fail "$1: both threads did not park"; }
	TID_main=$(awk '$1 == "parked" && $3 == "main" { print $2 }' py.out)
	TID_gen=$(awk '$1 == "parked" && $3 == "gen" { print $2 }' py.out)
	# each prints before it calls sleep: let it get there
	sleep 0.3
}

# The frames of ROLE, as pyframes prints them ("  QUALNAME FILE:LINE
# [entry]"), for a recursion DEPTH deep: pyframes.expect's tags looked up
# in the workload.
expected_frames() { # ROLE DEPTH
	awk -v role="$1" -v depth="$2" -v file="$PYW" '
	FNR == NR { if (match($0, /#@[a-z-]+$/)) line[substr($0, RSTART + 2)] = FNR; next }
	/^#/ || $1 != role { next }
	{
		if (!($3 in line)) { print "no line ends with #@" $3 > "/dev/stderr"; exit 1 }
		n = $NF == "*DEPTH" ? depth : 1
		for (i = 0; i < n; i++)
			print "  " $2 " " file ":" line[$3] ($4 == "entry" ? " [entry]" : "")
	}' "$PYW" "$ROOT/jitstack/tests/pyframes.expect"
}

# The frame lines of thread TID in pyframes' output (stdin).
frames_of() { # TID
	awk -v tid="$1" '/^thread / { on = $2 == tid; next } on'
}

# pyframes' output (FILE) holds each thread's expected frames, DEPTH deep,
# and no other thread.  WHAT names the run in a failure.
check_pyframes() { # FILE DEPTH WHAT
	[ "$(grep -c '^thread ' "$1")" -eq 2 ] || { cat "$1"; fail "$3: not 2 threads"; }
	for role in main gen; do
		eval tid=\$TID_$role
		expected_frames $role "$2" > "want.$role" || fail "pyframes.expect names a tag pyframes.py lacks"
		frames_of "$tid" < "$1" > "got.$role"
		[ -s "want.$role" ] || fail "no expected frames for $role"
		cmp -s "want.$role" "got.$role" || {
			diff "want.$role" "got.$role"
			fail "$3: thread $tid ($role): frames differ from the workload's marks"
		}
	done
}

# gdb's py-bt (CPython's python-gdb.py for PYTHON: Debian's beside its
# gdb, a build's in its tree) on every thread of a process or a core
# (GDB-TARGET-ARGS: "-p PID", or "PYTHON CORE"), into FILE as frames_of
# reads it: "thread TID", then "  NAME FILE:LINE".
pybt() { # PYTHON FILE GDB-TARGET-ARGS...
	pb_script=/usr/share/gdb/auto-load$(readlink -f "$1")-gdb.py pb_file=$2
	[ -e "$pb_script" ] || pb_script=$(dirname "$1")/python-gdb.py
	shift 2
	need_file "$pb_script" "python3.11-dbg"
	limit 120 gdb -batch -nx -iex 'set auto-load python-scripts off' -ex "source $pb_script" \
		-ex 'thread apply all py-bt' "$@" > gdb.out 2>&1 || { tail gdb.out; fail "gdb exited $?"; }
	# "Thread N (Thread 0x... (LWP TID) ...)", then '  File "F", line L, in NAME'
	sed -n 's/^Thread [0-9]* (.*(LWP \([0-9]*\)).*/thread \1/p; s/^  File "\(.*\)", line \([0-9]*\), in \(.*\)/  \3 \1:\2/p' \
		gdb.out > "$pb_file"
}

# py-bt's frames (PYBT, from pybt) and pyframes' (OURS) agree thread by
# thread: py-bt names a function by its code's co_name, the last part of
# the qualified name.  WHAT names the run in a failure.
same_as_pybt() { # PYBT OURS WHAT
	for role in main gen; do
		eval tid=\$TID_$role
		frames_of "$tid" < "$1" > "pybt.$role"
		frames_of "$tid" < "$2" | sed 's/ \[entry\]$//' | awk '{ n = split($1, q, "."); print "  " q[n] " " $2 }' > "ours.$role"
		[ -s "pybt.$role" ] || { cat gdb.out; fail "$3: py-bt shows no frame of thread $tid"; }
		cmp -s "pybt.$role" "ours.$role" || {
			diff "pybt.$role" "ours.$role"
			fail "$3: thread $tid ($role): py-bt and python/ differ"
		}
	done
}

# The CPython 3.13 that `make cpython` builds (integrations/cpython), in
# its tree: $JU_CPYTHON, else the newest finished build in its cache (a
# "built" stamp beside its tree) that runs here; empty when none.
cpython_313() {
	if [ -n "${JU_CPYTHON:-}" ]; then echo "$JU_CPYTHON"; return; fi
	for cp_built in $(ls -t "$HOME"/.cache/jitunwind/cpython/*/built 2>/dev/null); do
		cp_py=$(dirname "$cp_built")/src/python
		[ -x "$cp_py" ] && "$cp_py" -c pass 2>/dev/null && { echo "$cp_py"; return; }
	done
}
