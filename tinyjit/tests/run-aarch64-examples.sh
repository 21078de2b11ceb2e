#!/bin/sh
# SPDX-License-Identifier: MIT
# run-aarch64-examples.sh - the AArch64 tinyjit, under qemu-user, gives
# every example the value a native C version of its workload computes
# (tests/reference.c, run on the host), in the interpreter and in every JIT
# configuration; the probe returns its depth with the in-memory channels
# published; the run-time error programs fail as on the host.
. "$(dirname "$0")/lib.sh"
need_aarch64
REF=$TJ_TEST_B/reference
file "$TJ_A64" 2>/dev/null | grep -q 'ARM aarch64' || fail "$TJ_A64 is not an AArch64 program"

while read -r prog args; do
	want=$("$REF" "$prog" $args)
	echo "$MODES" | while read -r mode; do
		got=$(a64 "$TJ_A64" $mode --publish=none "$EX/$prog.tj" $args 2>&1)
		[ "$got" = "$want" ] || echo "$prog $args [$mode]: expected '$want', got '$got'"
	done >"$TJ_TEST_B/a64-examples.out"
	if [ -s "$TJ_TEST_B/a64-examples.out" ]; then fail "$(cat "$TJ_TEST_B/a64-examples.out")"; else pass; fi
done <<LIST
fib 24
ackermann 2 3
ackermann 3 5
loops 150
collatz 2000
mutual 1001
mutual 2000
LIST

for depth in 1 40; do
	echo "$MODES" | while read -r mode; do
		got=$(a64 "$TJ_A64" $mode --publish=default "$EX/probe.tj" 0 $depth 2>&1)
		[ "$got" = "$depth" ] || echo "probe 0 $depth [$mode]: got '$got'"
	done >"$TJ_TEST_B/a64-examples.out"
	if [ -s "$TJ_TEST_B/a64-examples.out" ]; then fail "$(cat "$TJ_TEST_B/a64-examples.out")"; else pass; fi
done
# run-time errors (the stencils' calls to tj_rt_fail and the host through
# their trampolines, the depth and stack checks) fail with the status and
# message their header announces, as in run-errors.sh
for f in "$PROGS"/rt_*.tj; do
	want_rc=$(sed -n 's/^# expect-exit: //p' "$f")
	want=$f:$(sed -n 's/^# expect-error: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")
	echo "$MODES" | while read -r mode; do
		got=$(a64 "$TJ_A64" $mode --publish=none "$f" 2>&1 >/dev/null)
		rc=$?
		[ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] ||
			echo "$f [$mode]: status $rc (want $want_rc), message '$got' (want '$want')"
	done >"$TJ_TEST_B/a64-errors.out"
	if [ -s "$TJ_TEST_B/a64-errors.out" ]; then fail "$(cat "$TJ_TEST_B/a64-errors.out")"; else pass; fi
done
finish
