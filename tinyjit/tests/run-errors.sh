#!/bin/sh
# SPDX-License-Identifier: MIT
# run-errors.sh - bad programs fail with the status and the located message
# their header announces ("# expect-exit:", "# expect-error: LINE:COL: ..."),
# identically in the interpreter and the JIT, and never crash.
. "$(dirname "$0")/lib.sh"

for f in "$PROGS"/*.tj; do
	want_rc=$(sed -n 's/^# expect-exit: //p' "$f")
	want=$f:$(sed -n 's/^# expect-error: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")
	echo "$MODES" | while read -r mode; do
		got=$($TJ $mode --publish=none "$f" 2>&1 >/dev/null)
		rc=$?
		[ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] ||
			echo "$f [$mode]: status $rc (want $want_rc), message '$got' (want '$want')"
	done >"$TJ_TEST_B/errors.out"
	if [ -s "$TJ_TEST_B/errors.out" ]; then fail "$(cat "$TJ_TEST_B/errors.out")"; else pass; fi
done

# the command line: arity of main, integer arguments, missing files, options
expect_rc() { # NAME WANT_RC ARGS...
	name=$1 want=$2
	shift 2
	$TJ "$@" >/dev/null 2>"$TJ_TEST_B/errors.err"
	rc=$?
	if [ "$rc" = "$want" ] && [ -s "$TJ_TEST_B/errors.err" ]; then pass; else
		fail "$name: status $rc (want $want), stderr '$(cat "$TJ_TEST_B/errors.err")'"; fi
}
expect_rc main_arity_is_checked 2 "$EX/fib.tj"
expect_rc arguments_must_be_integers 2 "$EX/fib.tj" 12x
expect_rc missing_file_is_reported 2 "$PROGS/no-such-file.tj"
expect_rc unknown_option_is_rejected 2 --frames=maybe "$EX/fib.tj" 3
expect_rc unknown_channel_is_rejected 3 --publish=telepathy "$EX/fib.tj" 3
# tinyjit is not linked with nongnu libunwind: listed, its channel must open
expect_rc a_listed_channel_without_its_consumer_is_rejected 3 --publish=unwinder,libunwind,gdb \
	"$EX/fib.tj" 3

# an operand stack deeper than the verifier allows, generated
{
	echo "func main()"
	i=0
	while [ $i -le 4096 ]; do echo "    push $i"; i=$((i + 1)); done
	echo "    ret"
	echo "end"
} >"$TJ_TEST_B/deep.tj"
got=$($TJ "$TJ_TEST_B/deep.tj" 2>&1 >/dev/null)
expect_eq operand_stack_overflow_is_a_load_error \
	"$TJ_TEST_B/deep.tj:4098:5: error: operand stack overflow: more than 4096 values" "$got"
finish
