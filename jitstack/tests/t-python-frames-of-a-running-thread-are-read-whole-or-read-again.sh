# SPDX-License-Identifier: MIT
# python/ reads the frames of a thread that runs on while it is read (as
# record's perf mode must): each chain read is checked (frames.h,
# py->running) and read again when the thread changed it meanwhile, so
# no walk gives a chain the thread never had, or drops one for memory the
# thread freed under the read.  A chain that changed at every one of its
# reads (a reader descheduled mid-read on a loaded machine) is dropped
# with that warning, which is allowed: what is judged is that no chain
# shown is wrong, and that at least 100 walks show one.  The workload
# (progs/pybusy.py) recurses 400 deep, over more than one chunk of
# CPython's data stack, which it frees and maps again, spins about 3 ms in
# the innermost call (where a walk of about 0.5 ms can find the chain
# whole even when the thread has a core to itself), and returns, without
# rest: in each of 2000 walks its
# chain must be `down` frames at the recursive call's line, the innermost
# at any line of down, then the module at the loop's line, or the module
# alone (there at the loop's line or its `while`); lines from the
# workload's "#@" marks.  (Read with --no-check, as
# before the check, a few walks in 2000 drop the chain, "frame ...
# unreadable", or show one that never was.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
PYB=$ROOT/jitstack/tests/progs/pybusy.py
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
start_ready busy.out '^ready' "python3 on pybusy.py" /usr/bin/python3 "$PYB" 400 200000
tag() { n=$(grep -n "#@$1\$" "$PYB" | cut -d: -f1); [ -n "$n" ] || fail "pybusy.py lost its mark $1"; echo "$n"; }
call=$(tag down-call) loop=$(tag loop) loopwhile=$(tag loop-while)
inner="$(tag down-def) $(tag down-test) $call $(tag down-spin) $(tag down-spin-body) $(tag down-bottom)"
limit 300 "$PYF" --no-stop --repeat 2000 --each -p "$CHILD_PID" > walks 2> err ||
	{ cat err; fail "pyframes exited $?"; }
kill "$CHILD_PID"
grep 'chains read again' err || { cat err; fail "pyframes printed no cost line"; }
# each walk: "walk K", "thread TID", then its frames (or a warning line)
awk -v call="$call" -v loop="$loop" -v loopwhile="$loopwhile" -v inner="$inner" -v file="$PYB" '
function line_of(s) { sub(/.*:/, "", s); sub(/ .*/, "", s); return s + 0 }
function judge(   i, ok) {
	if (!seen) return
	walks++
	if (warned ~ /changed while it was read/) { dropped++; return }
	if (warned) { printf "walk %d: %s\n", walks, warned; bad++; return }
	ok = n >= 1 && f[n] == "<module>" && (l[n] == loop || (n == 1 && l[n] == loopwhile)) && e[n]
	for (i = 1; ok && i < n; i++)
		ok = f[i] == "down" && (i == 1 ? index(" " inner " ", " " l[i] " ") : l[i] == call)
	if (!ok) {
		bad++
		printf "walk %d: a chain the thread never had:", walks
		for (i = 1; i <= n; i++) printf " %s:%d", f[i], l[i]
		print ""
	}
}
/^walk / { judge(); seen = 1; n = 0; warned = ""; next }
/^thread / { next }
/^  warning: / { warned = $0; next }
{ n++; f[n] = $1; l[n] = line_of($2); e[n] = $3 == "[entry]"; if (index($2, file ":") != 1) f[n] = "?" $1 }
END {
	judge()
	printf "%d walks, %d wrong, %d dropped as changed at every read\n", walks, bad, dropped
	exit (bad || walks != 2000 || walks - dropped < 100)
}' walks > judged ||
	{ head -20 judged; tail -1 judged; fail "walks of the running thread are wrong"; }
pass "$(tail -1 judged); $(sed -n 's/.*; \([0-9]* chains read again\), [0-9]* dropped/\1/p' err | tail -1)"
