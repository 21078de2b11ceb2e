#!/bin/sh
# SPDX-License-Identifier: MIT
# run-san.sh - the examples, the bad programs and a differential run, with
# and without inlining, under AddressSanitizer + UBSan (tinyjit built with
# clang -fsanitize=address,undefined; the stencils themselves are not
# instrumented).
. "$(dirname "$0")/lib.sh"
SAN=$TJ_TEST_B/san
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
pub=$(publish_spec "$SAN/tinyjit")
for mode in --jit=off --jit=on "--jit=on --inline"; do
	for run in "fib.tj 18" "ackermann.tj 2 3" "loops.tj 40" "collatz.tj 300" "mutual.tj 101" "probe.tj 0 9"; do
		set -- $run
		prog=$1
		shift
		if "$SAN/tinyjit" $mode --publish=$pub "$EX/$prog" "$@" >/dev/null 2>"$TJ_TEST_B/san.err"; then pass; else
			fail "$prog $* [$mode]: $(head -n 20 "$TJ_TEST_B/san.err")"; fi
	done
	for f in "$PROGS"/*.tj; do
		"$SAN/tinyjit" $mode --publish=none "$f" >/dev/null 2>"$TJ_TEST_B/san.err"
		if grep -q -e 'Sanitizer' -e 'runtime error' "$TJ_TEST_B/san.err"; then
			fail "$f [$mode]: $(head -n 20 "$TJ_TEST_B/san.err")"; else pass; fi
	done
done
for how in "" --inline; do
	if "$SAN/difftest" --seeds 300 $how >"$TJ_TEST_B/san.err" 2>&1; then pass; else
		fail "difftest $how under sanitizers: $(tail -n 20 "$TJ_TEST_B/san.err")"; fi
done
finish
