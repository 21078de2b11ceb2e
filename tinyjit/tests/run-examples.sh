#!/bin/sh
# SPDX-License-Identifier: MIT
# run-examples.sh - every example gives the value a native C version of its
# workload computes (tests/reference.c), in the interpreter and in every JIT
# configuration.
. "$(dirname "$0")/lib.sh"
REF=$TJ_TEST_B/reference

while read -r prog args; do
	want=$("$REF" "$prog" $args)
	echo "$MODES" | while read -r mode; do
		got=$($TJ $mode --publish=none "$EX/$prog.tj" $args 2>&1)
		[ "$got" = "$want" ] || echo "$prog $args [$mode]: expected '$want', got '$got'"
	done >"$TJ_TEST_B/examples.out"
	if [ -s "$TJ_TEST_B/examples.out" ]; then fail "$(cat "$TJ_TEST_B/examples.out")"; else pass; fi
done <<LIST
fib 24
ackermann 2 3
ackermann 3 5
loops 150
collatz 2000
mutual 1001
mutual 2000
LIST

# probe with mode 0 returns its depth: main -> descend x depth -> probe
pub=$(publish_spec "$TJ")
for depth in 1 7 40; do
	echo "$MODES" | while read -r mode; do
		got=$($TJ $mode --publish=$pub "$EX/probe.tj" 0 $depth 2>&1)
		[ "$got" = "$depth" ] || echo "probe 0 $depth [$mode]: got '$got'"
	done >"$TJ_TEST_B/examples.out"
	if [ -s "$TJ_TEST_B/examples.out" ]; then fail "$(cat "$TJ_TEST_B/examples.out")"; else pass; fi
done
finish
