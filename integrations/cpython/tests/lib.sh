# lib.sh - sourced by the CPython integration's test drivers
# (integrations/cpython/tests/t-*.sh).
#
# The conventions are tests/driver.sh's.  Every check runs the workload
# twice: on the interpreter with our patches ($PY, make cpython) and on the
# stock JIT ($PY_STOCK, make cpython-stock: only the LLVM 19 patch), the
# baseline, which must fail the same check.  Both run with the JIT on
# (PYTHON_JIT=1).  The workloads (*.py) are copied into the scratch
# directory and run from there.
#   $CYT  this directory
#
# SPDX-License-Identifier: MIT
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SCRATCH=jitunwind-cpython-test
. "$ROOT/tests/driver.sh"
CYT=$ROOT/integrations/cpython/tests

need_file "$BUILD/cpython/dir" "make cpython"
need_file "$BUILD/cpython-stock/dir" "make cpython-stock"
PY=$(cat "$BUILD/cpython/dir")/python
PY_STOCK=$(cat "$BUILD/cpython-stock/dir")/python
need_file "$PY" "make cpython"
need_file "$PY_STOCK" "make cpython-stock"
# $PY_FP: make cpython-fp (patch 0004 and frame pointers), for the
# frame-pointer tests (need_fp); empty when it is not built.
PY_FP=
[ ! -f "$BUILD/cpython-fp/dir" ] || PY_FP=$(cat "$BUILD/cpython-fp/dir")/python
need_fp() { need_file "$BUILD/cpython-fp/dir" "make cpython-fp" && need_file "$PY_FP" "make cpython-fp"; }
export PYTHON_JIT=1
# The interpreter loads the library of this tree.
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cp "$CYT"/*.py .

# A SAN=1 build's library carries AddressSanitizer and UBSan, whose
# runtimes must be the first libraries of the process: the interpreter is
# not built with them, so a wrapper preloads them into it (into python
# only: gdb runs as it is).  CPython's own allocations are not
# instrumented; its leaks at exit are not ours.  $PY stays the real binary
# (the program gdb reads), $PYRUN is what runs it.
PYRUN=$PY
case $BUILD in
*-san*)
	asan=$(gcc -print-file-name=libasan.so) ubsan=$(gcc -print-file-name=libubsan.so)
	[ -e "$asan" ] && [ -e "$ubsan" ] || skip "SAN build: the sanitizer runtimes are not installed"
	printf '#!/bin/sh\nASAN_OPTIONS=detect_leaks=0:disable_coredump=0 LD_PRELOAD=%s:%s exec %s "$@"\n' \
		"$asan" "$ubsan" "$PY" > "$T/python-san"
	chmod +x "$T/python-san"
	PYRUN=$T/python-san
	[ -z "$PY_FP" ] || { sed "s|$PY|$PY_FP|" "$T/python-san" > "$T/python-fp-san" && chmod +x "$T/python-fp-san"; }
	# gdb starts the program itself: the preload goes through its environment
	GDB_ENV="set environment LD_PRELOAD=$asan:$ubsan"
	export ASAN_OPTIONS=detect_leaks=0:disable_coredump=0 ;;
esac
GDB_ENV=${GDB_ENV:-}
PYRUN_FP=$PY_FP
[ ! -x "$T/python-fp-san" ] || PYRUN_FP=$T/python-fp-san

# mark NAME [FILE]: the line of FILE (hot.py) marked "# mark: NAME".
mark() {
	n=$(grep -n "# mark: $1\$" "${2:-hot.py}" | cut -d: -f1)
	[ -n "$n" ] || fail "${2:-hot.py} lost its mark '$1'"
	echo "$n"
}

# gdb_check SCRIPT INNER ENTER CALL < gdb's output: its backtrace has the
# inline frame py:small at SCRIPT:INNER, then, as the next frame, hot's
# executor "py:hot (SCRIPT:ENTER)" at SCRIPT:CALL, and goes on to
# Py_BytesMain (python's main tail-calls it, so gdb shows no main) and
# __libc_start_call_main with no frame it cannot name ("?? ()").  Writes
# the backtrace to bt.txt; prints what is wrong and returns 1.
gdb_check() {
	sed -n '/^#0 /,/ __libc_start_call_main (/p' > bt.txt
	grep -q '^#0 ' bt.txt || { echo "no backtrace"; return 1; }
	grep -q ' Py_BytesMain (' bt.txt && grep -q ' __libc_start_call_main (' bt.txt ||
		{ echo "the backtrace does not reach Py_BytesMain and __libc_start_call_main"; return 1; }
	if grep -q '?? ()' bt.txt; then echo "a frame gdb cannot name: $(grep -m1 '?? ()' bt.txt)"; return 1; fi
	gc_small=$(grep -n "^#[0-9]*  *\(0x[0-9a-f]* in \)\{0,1\}py:small () at \(.*/\)\{0,1\}$1:$2\$" bt.txt | cut -d: -f1)
	[ -n "$gc_small" ] || { echo "no frame 'py:small () at $1:$2'"; return 1; }
	sed -n "$((gc_small + 1))p" bt.txt |
		grep -q "^#[0-9]*  *\(0x[0-9a-f]* in \)\{0,1\}py:hot ($1:$3) () at \(.*/\)\{0,1\}$1:$4\$" ||
		{ echo "the frame after py:small is not 'py:hot ($1:$3) () at $1:$4'"; return 1; }
}

# lldb_check SCRIPT INNER ENTER CALL < lldb's output: the same in lldb's
# words: "`py:hot (SCRIPT:ENTER) [inlined] py:small at SCRIPT:INNER", then
# "`py:hot (SCRIPT:ENTER) at SCRIPT:CALL", and Py_BytesMain below, in its
# last listing (lldb prints frame #0 when it attaches, then bt's).  Prints
# the frames and returns 1 when it is not so.
lldb_check() {
	tee lldb.in | awk -v f="$1" -v inner="$2" -v enter="$3" -v call="$4" '
		/frame #0:/ { s = ok = seen_main = 0 }
		/frame #[0-9]+:/ && index($0, "`py:hot (" f ":" enter ") [inlined] py:small at ") &&
		    $0 ~ ("py:small at (.*/)?" f ":" inner "(:[0-9]+)?$") { s = NR; next }
		/frame #[0-9]+:/ && s && NR == s + 1 && index($0, "`py:hot (" f ":" enter ") at ") &&
		    $0 ~ (" at (.*/)?" f ":" call "(:[0-9]+)?$") { ok = 1 }
		/frame #[0-9]+:/ && /`Py_BytesMain/ { seen_main = 1 }
		END { exit !(ok && seen_main) }' || { grep 'frame #' lldb.in; return 1; }
}

# jitstack_check SCRIPT INNER ENTER CALL < jitstack's text output: the same
# in jitstack's words: "py:small ([jit ...]) at .../SCRIPT:INNER [inlined]",
# then "py:hot (SCRIPT:ENTER)+0x... ([jit ...]) at .../SCRIPT:CALL", and
# Py_BytesMain below.  Prints the frames and returns 1 when it is not so.
jitstack_check() {
	tee js.in | awk -v f="$1" -v inner="$2" -v enter="$3" -v call="$4" '
		/^#[0-9]+ / && index($0, " py:small ([jit ") && $0 ~ ("[ /]" f ":" inner " \\[inlined\\]$") { s = NR; next }
		/^#[0-9]+ / && s && NR == s + 1 && index($0, " py:hot (" f ":" enter ")+0x") &&
		    $0 ~ ("[ /]" f ":" call "$") { ok = 1 }
		/^#[0-9]+ / && / Py_BytesMain\+/ { seen_main = 1 }
		END { exit !(ok && seen_main) }' || { grep '^#' js.in; return 1; }
}
