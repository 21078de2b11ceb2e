#!/bin/sh
# demo.sh BUILD - what `make demo` shows: JIT code that glibc backtrace() and
# gdb see through once it is published, and where they stop when it is not.
BUILD=${1:-build}
EX=$BUILD/examples/hello-jit
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "hello-jit: C -> JIT -> C -> JIT -> C, published with libjitunwind"
"$EX"

say "the same program under gdb: break in the innermost C function, bt"
if command -v gdb >/dev/null 2>&1; then
	timeout 60 gdb -q -batch -nx -ex 'set style enabled off' -ex 'break show_stack' -ex run -ex bt "$EX" 2>&1 |
		grep -E '^#|^Breakpoint 1,'
else
	echo "(gdb is not installed: skipped)"
fi

say "and with nothing published (JITUNWIND=none): both stop at the first JIT frame"
JITUNWIND=none "$EX"
if command -v gdb >/dev/null 2>&1; then
	JITUNWIND=none timeout 60 gdb -q -batch -nx -ex 'set style enabled off' -ex 'break show_stack' -ex run -ex bt "$EX" 2>&1 |
		grep -E '^#|^Backtrace stopped'
fi
