#!/bin/sh
# run-difftest.sh - the interpreter and the JIT (both stencil sets, the W^X
# ways in turn: flip, dual, dual-anon) agree on
# generated programs with fixed seeds (tests/difftest.c, tests/progen.c).
. "$(dirname "$0")/lib.sh"
seeds=${TJ_DIFF_SEEDS:-3000}
if "$TJ_TEST_B/difftest" --seeds "$seeds" >"$TJ_TEST_B/difftest.out" 2>&1; then pass; else
	fail "difftest: $(tail -n 20 "$TJ_TEST_B/difftest.out")"; fi
cat "$TJ_TEST_B/difftest.out" | tail -n 2
finish
