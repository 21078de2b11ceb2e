# perf record -g with frame-pointer call graphs (--call-graph fp) on hot.py,
# with the perf map (JITUNWIND=default,perfmap): on the frame-pointer build
# (make cpython-fp) the samples with a frame in hot's trace, named from
# the map "py:hot (hot.py:ENTER)" or "py:small <- py:hot (hot.py:ENTER)"
# (ENTER: "# mark: enter"), number at least 50, and at least 90 % of them
# reach Py_BytesMain below it; at least 10 reach it from C called by the
# trace (os.getpid: a leaf that is not JIT code, the executor a caller).
# Baseline, which must fail: the plain patched build (make cpython), whose
# stencils hold the Python stack pointer in rbp and whose interpreter keeps
# no frame pointers.
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_fp
need_cmd perf
enter=$(mark enter)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

record() { # NAME PYTHON: NAME.txt, perf script's samples with their call chains
	JITUNWIND=default,perfmap perf record -q -e cpu-clock:u -F 999 --call-graph fp -o "$1.data" -- "$2" hot.py 1000000 \
		> hot.out 2>&1 || { cat hot.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$1.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$1: no samples"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
	perf script -i "$1.data" -F ip,sym 2>/dev/null > "$1.txt"
}
# count FILE: "jit reach from_c": samples with a frame of hot's trace, those
# of them with Py_BytesMain below it, those of them whose leaf is not JIT
count() {
	awk -v h="py:hot (hot.py:$enter)" '
		function done() { if (jit) { n++; if (main) { r++; if (!jitleaf) c++ } } jit = main = jitleaf = 0; depth = 0 }
		NF == 0 { done(); next }
		{ depth++; if (index($0, h)) { if (!jit && depth == 1) jitleaf = 1; jit = 1 }
		  else if (jit && / Py_BytesMain/) main = 1 }
		END { done(); print n + 0, r + 0, c + 0 }' "$1"
}
judge() { # jit reach from_c: "OK" or what is wrong
	if [ "$1" -lt 50 ]; then echo "only $1 samples have a frame of hot's trace"
	elif [ $(($2 * 10)) -lt $(($1 * 9)) ]; then echo "only $2 of the $1 samples in hot's trace reach Py_BytesMain"
	elif [ "$3" -lt 10 ]; then echo "only $3 samples reach Py_BytesMain from C called by hot's trace"
	else echo OK; fi
}

record fp "$PYRUN_FP"
set -- $(count fp.txt)
why=$(judge "$@")
[ "$why" = OK ] || { awk -v RS= 'index($0, "py:hot") { print; n++ } n == 3 { exit }' fp.txt; fail "frame-pointer build: $why"; }
echo "frame-pointer build: $2 of the $1 samples in hot's trace reach Py_BytesMain, $3 of them from C called by the trace"
awk -v RS= 'index($0, "py:small <- py:hot") && !/^[^\n]*py:/ { print; exit }' fp.txt

record plain "$PYRUN"
set -- $(count plain.txt)
why=$(judge "$@")
[ "$why" != OK ] || fail "the plain patched build passes too, so the check proves nothing"
echo "plain patched build: FAIL as it must ($why)"
pass "perf's frame-pointer call graphs reach Py_BytesMain through hot's executor; on the plain build they do not"
