# SPDX-License-Identifier: MIT
# A CPython whose frame chains are broken (gdb writes into python3.11d's
# frames while it sleeps): a chain that loops, a frame whose code is no
# code object, a frame past which the chain points to unmapped memory, and
# a list of threads that loops.  python/ reads each thread that it can,
# drops each broken chain whole with a warning saying why (no frame of it
# printed), and never crashes or hangs; and so does jitstack -p, whose
# dump shows each thread's native stack whole (from the sleep to main)
# and no Python frame of a broken chain, with the reader's warning.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gdb
start_pyframes /usr/bin/python3.11d 3

# gdb: $m and $g, the innermost frames of the main and the other thread
poke() { # GDB-COMMAND...
	set -- -ex 'set $h = _PyRuntime.interpreters.head->threads.head' \
		-ex "set \$tm = \$h->native_thread_id == $TID_main ? \$h : \$h->next" \
		-ex "set \$tg = \$h->native_thread_id == $TID_gen ? \$h : \$h->next" \
		-ex 'set $m = $tm->cframe->current_frame' -ex 'set $g = $tg->cframe->current_frame' "$@"
	limit 60 gdb -p "$CHILD_PID" -batch -nx -iex 'set auto-load python-scripts off' "$@" > gdb.out 2>&1 ||
		{ tail gdb.out; fail "gdb could not write the frames"; }
	grep -q "^No symbol\|Cannot access" gdb.out && { cat gdb.out; fail "gdb: $*"; }
}
# read WHAT: pyframes must exit 0 within its time
read_py() {
	limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat out err; fail "$1: pyframes exited $?"; }
}
# dropped TID WHY-REGEX: that thread is listed, without a frame, and its
# warning says why
dropped() {
	grep -q "^thread $1\$" out || { cat out; fail "thread $1 is not listed"; }
	[ -z "$(frames_of "$1" < out)" ] || { cat out; fail "thread $1's broken chain is printed"; }
	grep -Eq "^pyframes: warning: thread $1: frame chain dropped at frame [0-9]+: .*$2" err ||
		{ cat err; fail "thread $1: no warning saying '$2'"; }
}

# js_dropped TID WHY-REGEX: jitstack's dump of the process shows thread
# TID's native stack whole, no Python frame of it, and warns why
js_dropped() {
	limit 60 "$JS" -p "$CHILD_PID" > dump 2> jserr || { cat jserr; fail "jitstack -p exited $?"; }
	awk -v tid="$1" '/^TID / { on = $2 == tid; next } on' dump > dump.thread
	grep -q ' time_sleep+' dump.thread && grep -q ' Py_BytesMain+\| thread_run+' dump.thread ||
		{ cat dump; fail "jitstack: thread $1's native stack is not whole"; }
	! grep -q '\[python\]$' dump.thread || { cat dump.thread; fail "jitstack: thread $1's broken chain is shown"; }
	grep -Eq "^jitstack: warning: thread $1: its Python frames are not shown: frame chain dropped at frame [0-9]+: .*$2" jserr ||
		{ cat jserr; fail "jitstack: thread $1: no warning saying '$2'"; }
}

# the main thread's chain loops back from its third frame to its second;
# the other's second frame has the first frame itself as its code
poke -ex 'set var $m->previous->previous->previous = $m->previous' -ex 'set var $g->previous->f_code = (PyCodeObject *)$g'
read_py "a loop and a frame as code"
dropped "$TID_main" "loops"
dropped "$TID_gen" "is not a code object"
js_dropped "$TID_main" "loops"
js_dropped "$TID_gen" "is not a code object"

# the other thread's chain leads to unmapped memory after its first frame
poke -ex 'set var $g->previous = (struct _PyInterpreterFrame *)0x1000'
read_py "a chain into unmapped memory"
dropped "$TID_main" "loops"
dropped "$TID_gen" "unreadable"
js_dropped "$TID_gen" "unreadable"

# the list of thread states loops
poke -ex 'set var $h->next->next = $h'
read_py "a list of threads that loops"
grep -q "^pyframes: warning: the list of threads loops" err || { cat err; fail "no warning for the looping thread list"; }
limit 60 "$JS" -p "$CHILD_PID" > dump 2> jserr || { cat jserr; fail "jitstack -p exited $? on a looping thread list"; }
grep -q "^jitstack: warning: Python frames: the list of threads loops" jserr ||
	{ cat jserr; fail "jitstack: no warning for the looping thread list"; }
[ "$(grep -c '^TID ' dump)" -eq 2 ] && [ "$(grep -c ' Py_BytesMain+\| thread_run+' dump)" -eq 2 ] ||
	{ cat dump; fail "jitstack: the native stacks are not whole"; }
pass "loops, a frame as code, unmapped memory and a looping thread list: warnings, no frame of a broken chain, in python/ and in jitstack's dump"
