# bpftrace's ustack (the kernel's frame-pointer walk of the user stack) at a
# uprobe on the _fpwalk extension's walk() (fpwalk.c), called from small()
# which the trace of hot's loop inlines (fpwalk.py), its 150th call, in the
# trace: on the frame-pointer build (make cpython-fp) the stack bpftrace
# prints, named through the perf map (JITUNWIND=default,perfmap), has
# "py:small <- py:hot (fpwalk.py:ENTER)" (ENTER: "# mark: enter"), then
# Py_BytesMain below, and no frame it cannot name ([unknown]) between.
# Baseline, which must fail: the plain patched build (make cpython).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_fp
need_cmd bpftrace
need_cmd gcc
[ "$(id -u)" = 0 ] || skip "bpftrace needs root"
enter=$(mark enter fpwalk.py)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# trace NAME PYTHON RUN: NAME.out, bpftrace's output for fpwalk.py run by
# RUN, its extension built against PYTHON's headers
trace() {
	src=$(dirname "$2")
	mkdir -p "$1"
	gcc -shared -fPIC -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-I"$src/Include" -I"$src" -o "$1/_fpwalk.so" "$CYT/fpwalk.c" || fail "$1: fpwalk.c does not build"
	printf 'uprobe:%s:walk { @n++; if (@n == 150) { printf("pid %%d\\n%%s\\n", pid, ustack(perf)); } }\n' \
		"$T/$1/_fpwalk.so" > "$1.bt"
	limit 300 bpftrace "$1.bt" -c "/usr/bin/env PYTHONPATH=$T/$1 JITUNWIND=default,perfmap $3 fpwalk.py" \
		> "$1.out" 2>&1 || { cat "$1.out"; fail "$1: bpftrace failed"; }
	pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$1.out")
	[ -n "$pid" ] || { cat "$1.out"; fail "$1: the probe did not fire 150 times"; }
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
}
# judge NAME: "OK" or what is wrong with NAME.out's stack
judge() {
	awk -v h="py:small <- py:hot (fpwalk.py:$enter)+" '
		/^pid / { on = 1; next }
		!on || NF == 0 { next }
		index($0, h) { jit = 1; next }
		/ Py_BytesMain\+/ { if (jit) main = 1; exit }
		/\[unknown\]/ { unknown++ }
		END { if (!jit) print "no frame " h; else if (!main) print "no Py_BytesMain below it";
		      else if (unknown) print unknown " frames [unknown]"; else print "OK" }' "$1.out"
}

trace fp "$PY_FP" "$PYRUN_FP"
why=$(judge fp)
[ "$why" = OK ] || { cat fp.out; fail "frame-pointer build: $why"; }
grep -B2 -A2 "py:small <- py:hot" fp.out
trace plain "$PY" "$PYRUN"
why=$(judge plain)
[ "$why" != OK ] || { cat plain.out; fail "the plain patched build passes too, so the check proves nothing"; }
echo "plain patched build: FAIL as it must ($why)"
pass "bpftrace's ustack from C called by a trace reaches Py_BytesMain through hot's executor; on the plain build it does not"
