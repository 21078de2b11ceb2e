# SPDX-License-Identifier: MIT
# A CPython whose version python/ does not read gets one line of warning
# and no frames, never frames read with another version's layout: gdb
# makes python3.11d's Py_Version say 3.12, then the start of _PyRuntime
# hold _Py_DebugOffsets' cookie and the version 3.14 (whose offsets are
# laid out otherwise than 3.13's).
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
need_cmd gdb
start_pyframes /usr/bin/python3.11d 3
poke() {
	limit 60 gdb -p "$CHILD_PID" -batch -nx -iex 'set auto-load python-scripts off' "$@" > gdb.out 2>&1 ||
		{ tail gdb.out; fail "gdb could not write"; }
}
# one_warning REGEX: pyframes exits 0, prints no thread, and one line
one_warning() {
	limit 30 "$PYF" -p "$CHILD_PID" > out 2> err || { cat err; fail "pyframes exited $?"; }
	[ ! -s out ] || { cat out; fail "frames printed for a version not known"; }
	[ "$(wc -l < err)" -eq 1 ] && grep -Eq "^pyframes: warning: $1\$" err || { cat err; fail "not one line saying '$1'"; }
}
# 3.12.0 final: PY_VERSION_HEX 0x030c00f0
poke -ex 'set var *(unsigned long *)&Py_Version = 0x030c00f0'
one_warning "CPython 3\.12\.0: no layout known for its frames"
# "xdebugpy", then 3.14.0 final
poke -ex 'set var *(unsigned long *)&_PyRuntime = 0x7970677562656478' \
	-ex 'set var *(unsigned long *)((char *)&_PyRuntime + 8) = 0x030e00f0'
one_warning "CPython 3\.14\.0: no layout known for its _Py_DebugOffsets"
pass "3.12 and 3.14: one line of warning each, no frames"
