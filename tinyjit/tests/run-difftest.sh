#!/bin/sh
# SPDX-License-Identifier: MIT
# run-difftest.sh - the interpreter and the JIT (both stencil sets, the W^X
# ways in turn: flip, dual, dual-anon) agree on
# generated programs with fixed seeds (tests/difftest.c, tests/progen.c),
# and again with the JIT inlining calls (difftest --inline).
. "$(dirname "$0")/lib.sh"
seeds=${TJ_DIFF_SEEDS:-3000}
for how in "" --inline; do
	out=$TJ_TEST_B/difftest${how#-}.out
	if "$TJ_TEST_B/difftest" --seeds "$seeds" $how >"$out" 2>&1; then pass; else
		fail "difftest $how: $(tail -n 20 "$out")"; fi
	tail -n 2 "$out"
	expect_eq "every_seed_ran${how:+ (inline)}" "difftest: $seeds passed, 0 failed" "$(tail -n 1 "$out")"
done
# the inlining run inlined calls
inlined=$(sed -n 's/^difftest: \([0-9]*\) calls inlined$/\1/p' "$TJ_TEST_B/difftest-inline.out")
check "calls_were_inlined (${inlined:-none})" test "${inlined:-0}" -gt 0
finish
