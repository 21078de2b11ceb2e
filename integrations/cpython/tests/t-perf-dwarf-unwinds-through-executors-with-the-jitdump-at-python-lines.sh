# perf record --call-graph dwarf on hot.py with the jitdump
# (JITUNWIND=perf), then perf inject --jit: perf unwinds through the
# executor of hot's loop with the unwind tables of the jitted .so files
# inject writes.  At least 10 samples taken in the C that small() calls
# (os.getpid) have, below it, the executor "py:hot (hot.py:ENTER)" at
# hot.py:GETPID (the line inside small() that calls os.getpid: the
# jitdump's line table gives a micro-op its innermost line), then, further
# down, the executor's trampoline at hot.py:ENTER and Py_BytesMain.
# Baseline, which must fail: the stock JIT (no jitdump: no sample names a
# Python function and the DWARF unwinding stops at the executor).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_cmd perf
enter=$(mark enter) getpid=$(mark getpid)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# record NAME PYTHON: NAME.jit.data, and NAME.txt: a line per sample, its
# frames innermost first as "SYMBOL@FILE:LINE" (no @ without a line),
# separated by " | "
record() {
	JITUNWIND=perf perf record -q -e cpu-clock:u -F 499 -k 1 --call-graph dwarf -o "$1.data" -- \
		"$2" hot.py 400000 > hot.out 2>&1 ||
		{ cat hot.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$1.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$1: no samples"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
	perf inject --jit -i "$1.data" -o "$1.jit.data" 2> inject.err || { cat inject.err; fail "$1: perf inject --jit"; }
	perf script -i "$1.jit.data" -F ip,sym,srcline 2>/dev/null | awk '
		function flush() { if (s != "") print s; s = "" }
		NF == 0 { flush(); next }
		/^[ \t]+[0-9a-f]+ / { sub(/^[ \t]+[0-9a-f]+ /, ""); s = s (s == "" ? "" : " | ") $0; next }
		/^  [^ ]/ { sub(/^ +/, ""); sub(/ .*/, ""); s = s "@" $0 }
		END { flush() }' > "$1.txt"
}
# through FILE: the samples that pass from the C of small's call into the
# executor at GETPID, on to its trampoline at ENTER and to Py_BytesMain
through() {
	grep -F "| py:hot (hot.py:$enter)@hot.py:$getpid | py:hot (hot.py:$enter)@hot.py:$enter | " "$1" |
		grep -c -F '| Py_BytesMain'
}

record with "$PYRUN"
dump=$(find "$T/.debug/jit" -name "jit-$pid.dump" 2>/dev/null)
[ -n "$dump" ] || fail "no jit-$pid.dump under $T/.debug/jit"
n=$(through with.txt)
echo "$n of $(wc -l < with.txt) samples pass from small's C call through hot's executor at hot.py:$getpid to main; e.g."
grep -F "py:hot (hot.py:$enter)@hot.py:$getpid" with.txt | grep -F '| Py_BytesMain' | head -1
[ "$n" -ge 10 ] || { grep -F 'py:' with.txt | head -5; fail "only $n samples unwind through the executor to main"; }

record stock "$PY_STOCK"
n=$(through stock.txt)
if [ "$n" -gt 0 ] || grep -q 'py:' stock.txt; then
	fail "the stock JIT passes the check too ($n samples), so it proves nothing"
fi
echo "stock JIT: FAIL as it must (no sample names a Python function; e.g. $(grep -F '[unknown]' stock.txt | head -1 | cut -c1-160))"
pass "perf dwarf with the jitdump unwinds through hot's executor at hot.py:$getpid and $enter to main; the stock JIT does not"
