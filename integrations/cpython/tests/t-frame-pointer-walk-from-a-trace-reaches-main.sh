# A frame-pointer walk from C code called by a trace reaches main: fpwalk.py
# calls the _fpwalk extension (fpwalk.c, built here with frame pointers)
# from small(), which the trace of hot's loop inlines; its walk() follows
# rbp alone, with no unwind table, and returns the return addresses.  On
# the frame-pointer build (make cpython-fp) the walk passes through hot's
# executor, the first address of JIT code (none that dladdr can place,
# named from the perf map, JITUNWIND=default,perfmap) being in the copy
# of the stencil that calls walk, "py:small <- py:hot (fpwalk.py:ENTER)"
# (ENTER: "# mark: enter"), and goes on to Py_BytesMain with no address
# that neither dladdr nor the map can place.  Baseline, which must fail:
# the plain patched build (make cpython), whose stencils hold the Python
# stack pointer in rbp and whose interpreter keeps no frame pointers.
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_fp
need_cmd gcc
enter=$(mark enter fpwalk.py)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# walk NAME PYTHON RUN: NAME.out, the walk of fpwalk.py run by RUN, its
# extension built against PYTHON's headers; NAME.map its perf map
walk() {
	src=$(dirname "$2")
	mkdir -p "$1"
	gcc -shared -fPIC -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-I"$src/Include" -I"$src" -o "$1/_fpwalk.so" "$CYT/fpwalk.c" || fail "$1: fpwalk.c does not build"
	PYTHONPATH=$1 JITUNWIND=default,perfmap limit 120 "$3" fpwalk.py > "$1.all" 2> "$1.err" ||
		{ cat "$1.err"; fail "$1: fpwalk.py failed"; }
	pid=$(sed -n 's/^pid //p' "$1.all")
	[ -n "$pid" ] || fail "$1: fpwalk.py printed no pid"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
	grep -v '^pid ' "$1.all" > "$1.out"
	cp "/tmp/perf-$pid.map" "$1.map" 2>/dev/null || : > "$1.map"
}

# judge NAME: "OK" or what is wrong with NAME.out
judge() {
	jit= main= stray=
	while read -r addr file sym; do
		case $file in
		-) name=$(while read -r start size rest; do
				[ $((addr)) -ge $((0x$start)) ] && [ $((addr)) -lt $((0x$start + 0x$size)) ] && { echo "$rest"; break; }
			done < "$1.map")
			if [ -z "$name" ]; then stray="$stray $addr"
			elif [ -z "$jit" ]; then jit=$name; fi ;;
		*) [ "$sym" != Py_BytesMain ] || { main=1; break; } ;;
		esac
	done < "$1.out"
	if [ "$jit" != "py:small <- py:hot (fpwalk.py:$enter)" ]; then echo "the first JIT frame is '${jit:-none}'"
	elif [ -z "$main" ]; then echo "the walk does not reach Py_BytesMain"
	elif [ -n "$stray" ]; then echo "addresses neither dladdr nor the perf map places:$stray"
	else echo OK; fi
}

walk fp "$PY_FP" "$PYRUN_FP"
why=$(judge fp)
[ "$why" = OK ] || { cat fp.out; fail "frame-pointer build: $why"; }
echo "frame-pointer build: $(wc -l < fp.out) return addresses, through py:small <- py:hot (fpwalk.py:$enter) to Py_BytesMain"

walk plain "$PY" "$PYRUN"
why=$(judge plain)
[ "$why" != OK ] || { cat plain.out; fail "the plain patched build passes too, so the check proves nothing"; }
echo "plain patched build: FAIL as it must ($why; $(wc -l < plain.out) return addresses)"
pass "a frame-pointer walk from C called by a trace reaches Py_BytesMain through hot's executor; on the plain build it does not"
